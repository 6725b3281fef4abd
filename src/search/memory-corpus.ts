import { attributeSections } from '../history/attribution.js';
import type { RecordMessage } from '../history/replay.js';
import type { HistorySource } from '../history/source.js';
import { NO_POSTINGS, PostingsBuilder, type TermStats } from './bm25.js';
import { renderRecordMessage, type Corpus, type CorpusSource, type DocumentFacts, type DocumentText, type SectionView } from './corpus.js';
import { classifyParts } from '../history/roles.js';
import { messageTimestamp } from '../history/timestamps.js';
import { inScope, type ScopeFilter } from './scope.js';
import type { RunRecord } from '../store/runs.js';
import { QueryTermCounter } from './tokenize.js';

/** A corpus replayed from the store for this one search (the reference's way; `--no-index`). */
class MemoryCorpus implements Corpus {
  constructor(
    readonly sections: readonly SectionView[],
    private readonly records: ReadonlyArray<readonly RecordMessage[]>,
    readonly warnings: Corpus['warnings'],
    readonly scopeRuns: number,
  ) {}

  document(section: number, position: number): DocumentText {
    return renderRecordMessage(this.records[section]![position]!);
  }

  /** Parts and timestamp straight from the message, without rendering it. */
  facts(section: number, position: number): DocumentFacts {
    const m = this.records[section]![position]!;
    return { parts: classifyParts(m.message), timestamp: messageTimestamp(m.message), firstSeq: m.firstSeq };
  }

  termStats(terms: readonly string[]): TermStats {
    return scanTermStats(this, terms);
  }
}

/** Term statistics by rendering and tokenizing every document of the corpus once, counting only the query terms. */
export function scanTermStats(corpus: Pick<Corpus, 'sections' | 'document'>, terms: readonly string[]): TermStats {
  const counter = new QueryTermCounter(terms);
  const lengths: number[] = [];
  const postings = terms.map(() => new PostingsBuilder());
  let total = 0;
  let doc = 0;
  corpus.sections.forEach((s, si) => {
    for (let i = s.start; i < s.end; i++, doc++) {
      const dl = counter.count(corpus.document(si, i).text);
      lengths.push(dl);
      total += dl;
      postings.forEach((p, k) => {
        if (counter.counts[k]! > 0) p.add(doc, counter.counts[k]!);
      });
    }
  });
  const finished = new Map(terms.map((t, k) => [t, postings[k]!.finish()]));
  return { n: lengths.length, totalLength: total, docLength: (d) => lengths[d]!, postings: (t) => finished.get(t) ?? NO_POSTINGS };
}

export class ReplayCorpusSource implements CorpusSource {
  constructor(private readonly source: HistorySource) {}

  runs(): readonly RunRecord[] {
    return this.source.runs();
  }

  corpus(scope: ScopeFilter): Corpus {
    const runs = this.source.runs().filter((r) => inScope(r, scope));
    const replays = this.source.replayAll(runs.map((r) => r.runId));
    const records = runs.map((run, i) => ({ run, record: replays[i]!.messages }));
    const sections = attributeSections(records, scope.runId !== null);
    return new MemoryCorpus(
      sections.map((s) => ({ run: s.run, start: s.start, end: s.record.length })),
      sections.map((s) => s.record),
      this.source.warnings(runs.map((r) => r.runId)),
      runs.length,
    );
  }
}
