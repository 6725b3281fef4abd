import { attributeSections } from '../history/attribution.js';
import type { RecordMessage } from '../history/replay.js';
import type { HistorySource } from '../history/source.js';
import type { TermStats } from './bm25.js';
import { TermStatsBuilder } from './term-stats.js';
import { renderRecordMessage, type RenderedMessage } from '../render/record.js';
import { sectionSize, type Corpus, type CorpusNeeds, type CorpusSource, type SectionView } from './corpus.js';
import { inScope, type ScopeFilter } from './scope.js';
import type { StoreRun } from '../store/reader.js';
import { QueryTermCounter } from '../text/tokenize.js';
import { tokenizerNamed, type Tokenizer } from '../text/tokenizer.js';

/** A corpus replayed from the store for this one search (the reference's way; `--no-index`). */
class MemoryCorpus implements Corpus {
  constructor(
    readonly sections: readonly SectionView[],
    private readonly records: ReadonlyArray<readonly RecordMessage[]>,
    readonly warnings: Corpus['warnings'],
    readonly scopeRuns: number,
    private readonly tok: Tokenizer,
  ) {}

  document(section: number, position: number): RenderedMessage {
    return renderRecordMessage(this.records[section]![position]!);
  }

  termStats(terms: readonly string[]): TermStats {
    return scanTermStats(this, terms, this.tok);
  }
}

/** Term statistics by tokenizing every document of the corpus once, counting only the query terms. */
export function scanTermStats(
  corpus: Pick<Corpus, 'sections' | 'document'>,
  terms: readonly string[],
  tok: Tokenizer = tokenizerNamed(undefined),
): TermStats {
  const counter = new QueryTermCounter(terms, tok.forEachToken);
  const stats = new TermStatsBuilder(
    terms,
    corpus.sections.reduce((n, s) => n + sectionSize(s), 0),
  );
  let total = 0;
  let doc = 0;
  corpus.sections.forEach((s, si) => {
    for (let i = s.start; i < s.end; i++, doc++) {
      const dl = counter.count(corpus.document(si, i).text);
      stats.addCounted(doc, dl, counter);
      total += dl;
    }
  });
  return stats.finish(total);
}

export class ReplayCorpusSource implements CorpusSource {
  constructor(private readonly source: HistorySource) {}

  runs(): readonly StoreRun[] {
    return this.source.runs();
  }

  // rendering is cached per message, so the filters' facts come from document() at no extra cost
  corpus(scope: ScopeFilter, needs: CorpusNeeds = {}): Corpus {
    const runs = this.source.runs().filter((r) => inScope(r, scope));
    const replays = this.source.replayAll(runs.map((r) => r.runId));
    const records = runs.map((run, i) => ({ run, record: replays[i]!.messages }));
    const sections = attributeSections(records, scope.runId !== null);
    return new MemoryCorpus(
      sections.map((s) => ({ run: s.run, start: s.start, end: s.record.length })),
      sections.map((s) => s.record),
      this.source.warnings(runs.map((r) => r.runId)),
      runs.length,
      tokenizerNamed(needs.tokenizer),
    );
  }
}
