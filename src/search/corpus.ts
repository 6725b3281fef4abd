import type { Warning } from '../history/source.js';
import type { RenderedMessage } from '../render/record.js';
import type { PartRole } from '../render/roles.js';
import type { StoreRun } from '../store/reader.js';
import type { TermStats } from './bm25.js';
import type { ScopeFilter } from './scope.js';
import type { TokenizerName } from '../text/tokenizer.js';

/** A run's searchable slice of its full record: positions `start .. end-1` (spec §3.4). */
export interface SectionView {
  readonly run: StoreRun;
  readonly start: number;
  /** Length of the run's full record. */
  readonly end: number;
}

/** Positions `start .. end-1` of a section: a hit's window. */
export interface Window {
  readonly section: number;
  readonly start: number;
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
  /** Told of the windows about to be read (every hit's), when the corpus can read them in one go. */
  prefetch?(windows: readonly Window[]): void;
  /** A document's parts alone, when the corpus has them without rendering it (else `document().parts`). */
  parts?(section: number, position: number): readonly PartRole[];
  /**
   * A key equal for two documents exactly when their index texts are equal, when the corpus has one
   * without rendering (else `document().text`): what `--collapse` compares.
   */
  textKey?(section: number, position: number): string;
  /** What hit filters test of a document besides its text, when the corpus has it without rendering (else `document()`). */
  facts?(section: number, position: number): DocumentFacts;
  /** The facts of a whole section (positions `start .. end-1`) at once, when the corpus can read them in one go. */
  sectionFacts?(section: number): readonly DocumentFacts[];
  /** Whether the document holds every phrase of `CorpusNeeds.phrases`, when the corpus knows without rendering. */
  hasPhrases?(section: number, position: number): boolean;
}

/** A document's parts, timestamp and first snapshot: the hit filters' view of it. */
export interface DocumentFacts {
  readonly parts: readonly PartRole[];
  readonly timestamp: string | null;
  readonly firstSeq: number;
}

/**
 * What a search will ask of its documents besides BM25 counts, told to the corpus up front so that a
 * corpus that keeps only digests of its runs can keep these too.
 */
export interface CorpusNeeds {
  /** Text keys (see {@link Corpus.textKey}), for `--collapse`. */
  readonly textKeys?: boolean;
  /** Timestamps and first snapshots (see {@link Corpus.facts}), for `--since`, `--until` and `--sort time`. */
  readonly times?: boolean;
  /** Phrases (token lists) the documents must hold, for `--phrase` (see {@link Corpus.hasPhrases}). */
  readonly phrases?: ReadonlyArray<readonly string[]>;
  /** The tokenizer that counts terms and finds phrases (default: the reference's). */
  readonly tokenizer?: TokenizerName;
}

/** Builds the corpus for a scope: the replaying source and the index both implement it. */
export interface CorpusSource {
  corpus(scope: ScopeFilter, needs?: CorpusNeeds): Corpus;
  /** Every run of the store, in corpus order (read when a scope matched none, to say what is close). */
  runs(): readonly StoreRun[];
}

export function sectionSize(s: SectionView): number {
  return s.end - s.start;
}

/** Maps flattened document ids to (section, position) and back. */
export class DocumentIds {
  /** Each section's first document id (a typed array: a store-wide search of 50k runs makes 50k). */
  private readonly firsts: Float64Array;
  readonly count: number;

  constructor(readonly sections: readonly SectionView[]) {
    this.firsts = new Float64Array(sections.length);
    let acc = 0;
    for (let i = 0; i < sections.length; i++) {
      this.firsts[i] = acc;
      acc += sectionSize(sections[i]!);
    }
    this.count = acc;
  }

  /** Section `section`'s first document id. */
  first(section: number): number {
    return this.firsts[section]!;
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
