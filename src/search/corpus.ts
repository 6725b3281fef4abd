import type { Warning } from '../history/source.js';
import type { RenderedMessage } from '../render/record.js';
import type { PartRole } from '../render/roles.js';
import type { StoreRun } from '../store/reader.js';
import type { TermStats } from './bm25.js';
import type { ScopeFilter } from './scope.js';

/** A run's searchable slice of its full record: positions `start .. end-1` (spec §3.4). */
export interface SectionView {
  readonly run: StoreRun;
  readonly start: number;
  /** Length of the run's full record. */
  readonly end: number;
}

/**
 * The documents one search ranks, whatever holds them (a fresh replay or the persistent index).
 * Document ids are positions in the flattened corpus: sections in order, then messages in order.
 */
export interface Corpus {
  readonly sections: readonly SectionView[];
  readonly warnings: readonly Warning[];
  /** How many of the store's runs the scope picked, searchable or not: 0 means it named what the store lacks. */
  readonly scopeRuns: number;
  termStats(terms: readonly string[]): TermStats;
  document(section: number, position: number): RenderedMessage;
  /** A document's parts alone, when the corpus has them without rendering it (else `document().parts`). */
  parts?(section: number, position: number): readonly PartRole[];
}

/** Builds the corpus for a scope: the replaying source and the index both implement it. */
export interface CorpusSource {
  corpus(scope: ScopeFilter): Corpus;
  /** Every run of the store, in corpus order (read when a scope matched none, to say what is close). */
  runs(): readonly StoreRun[];
}

export function sectionSize(s: SectionView): number {
  return s.end - s.start;
}

/** Maps flattened document ids to (section, position) and back. */
export class DocumentIds {
  private readonly firsts: number[] = [];
  readonly count: number;

  constructor(readonly sections: readonly SectionView[]) {
    let acc = 0;
    for (const s of sections) {
      this.firsts.push(acc);
      acc += sectionSize(s);
    }
    this.count = acc;
  }

  id(section: number, position: number): number {
    return this.firsts[section]! + position - this.sections[section]!.start;
  }

  locate(doc: number): { section: number; position: number } {
    let lo = 0;
    let hi = this.firsts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.firsts[mid]! <= doc) lo = mid;
      else hi = mid - 1;
    }
    return { section: lo, position: this.sections[lo]!.start + doc - this.firsts[lo]! };
  }
}
