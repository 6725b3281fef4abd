import { attributeSections } from '../history/attribution.js';
import type { RecordMessage } from '../history/replay.js';
import type { HistorySource } from '../history/source.js';
import { NO_POSTINGS, PostingsBuilder, type TermStats } from './bm25.js';
import { inScope, renderRecordMessage, type Corpus, type CorpusSource, type DocumentText, type ScopeFilter, type SectionView } from './corpus.js';
import { forEachToken } from './tokenize.js';

/** A corpus replayed from the store for this one search (the reference's way; `--no-index`). */
class MemoryCorpus implements Corpus {
  constructor(
    readonly sections: readonly SectionView[],
    private readonly records: ReadonlyArray<readonly RecordMessage[]>,
    readonly warnings: Corpus['warnings'],
  ) {}

  document(section: number, position: number): DocumentText {
    return renderRecordMessage(this.records[section]![position]!);
  }

  termStats(terms: readonly string[]): TermStats {
    return scanTermStats(this, terms);
  }
}

/** Term statistics by rendering and tokenizing every document of the corpus once, counting only the query terms. */
export function scanTermStats(corpus: Pick<Corpus, 'sections' | 'document'>, terms: readonly string[]): TermStats {
  const wanted = new Set(terms);
  const wantedLengths = new Set(terms.map((t) => t.length));
  const lengths: number[] = [];
  const postings = new Map(terms.map((t) => [t, new PostingsBuilder()]));
  const tf = new Map<string, number>();
  let total = 0;
  let doc = 0;
  corpus.sections.forEach((s, si) => {
    for (let i = s.start; i < s.end; i++, doc++) {
      tf.clear();
      const dl = forEachToken(
        corpus.document(si, i).text,
        (t) => {
          if (wanted.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
        },
        wantedLengths,
      );
      lengths.push(dl);
      total += dl;
      for (const [t, f] of tf) postings.get(t)!.add(doc, f);
    }
  });
  const finished = new Map([...postings].map(([t, p]) => [t, p.finish()]));
  return { n: lengths.length, totalLength: total, docLength: (d) => lengths[d]!, postings: (t) => finished.get(t) ?? NO_POSTINGS };
}

export class ReplayCorpusSource implements CorpusSource {
  constructor(private readonly source: HistorySource) {}

  corpus(scope: ScopeFilter): Corpus {
    const runs = this.source.runs().filter((r) => inScope(r, scope));
    const replays = this.source.replayAll(runs.map((r) => r.runId));
    const records = runs.map((run, i) => ({ run, record: replays[i]!.messages }));
    const sections = attributeSections(records, scope.runId !== null);
    return new MemoryCorpus(
      sections.map((s) => ({ run: s.run, start: s.start, end: s.record.length })),
      sections.map((s) => s.record),
      this.source.warnings(runs.map((r) => r.runId)),
    );
  }
}
