import { claimInherited } from '../history/attribution.js';
import { HistorySource, type Warning } from '../history/source.js';
import { startPoolWorker, type PoolWorkerData } from '../parallel/pool.js';
import { conversationGroups, defaultThreads, MIN_SNAPSHOTS, sharedQueue, type ParallelOptions } from '../parallel/threads.js';
import type { StoreRun } from '../store/reader.js';
import type { TermStats } from './bm25.js';
import { TermStatsBuilder } from './term-stats.js';
import { renderRecordMessage, type RenderedMessage } from '../render/record.js';
import { sectionSize, type Corpus, type CorpusNeeds, type CorpusSource, type DocumentFacts, type SectionView } from './corpus.js';
import { containsPhrases } from './filters.js';
import { tokenizerNamed } from '../text/tokenizer.js';
import { inScope, type ScopeFilter } from './scope.js';
import { ReplayCorpusSource, scanTermStats } from './replay-source.js';
import { digestGroups, digestPartsAt, digestRuns, textKey, type RunDigest } from './digest.js';
import type { PartRole } from '../render/roles.js';
import type { DigestWorkerData } from './digest-worker.js';

/** How often a waiting main thread wakes to report progress. */
const POLL_MS = 100;
const WORKER = new URL('./digest-worker.js', import.meta.url);

/**
 * A large `--no-index` corpus, replayed run by run into digests (strict keys and BM25 counts for the
 * query terms) instead of records held in memory, on several threads when it can: each replays whole
 * conversations (so a run still starts from its conversation's last snapshot). The main thread
 * attributes runs across the whole scope and replays again only the runs whose messages it shows.
 * Results equal {@link ReplayCorpusSource}'s (used as is for small scopes and `--run`): same records,
 * same counts.
 *
 * Other threads are used only when they can read the very bytes this one reads: not when the store is
 * read in place beside a live writer.
 */
export class DigestCorpusSource implements CorpusSource {
  private readonly serial: ReplayCorpusSource;

  constructor(
    private readonly source: HistorySource,
    private readonly terms: readonly string[],
    private readonly options: ParallelOptions & { readonly worker?: URL } = {},
  ) {
    this.serial = new ReplayCorpusSource(source);
  }

  runs(): readonly StoreRun[] {
    return this.source.runs();
  }

  corpus(scope: ScopeFilter, needs: CorpusNeeds = {}): Corpus {
    const runs = this.source.runs().filter((r) => inScope(r, scope));
    if (scope.runId !== null) return this.serial.corpus(scope, needs);
    const marks = this.source.store.watermarks();
    const weight = (r: StoreRun): number => marks.get(r.runId)?.count ?? 0;
    if (runs.reduce((n, r) => n + weight(r), 0) < (this.options.minSnapshots ?? MIN_SNAPSHOTS)) return this.serial.corpus(scope, needs);
    // other threads must read the very bytes this one reads; digests alone already save the memory
    const store = this.source.store;
    const share = store.share();
    const threads = share === null ? 1 : Math.max(1, Math.min(this.options.threads ?? defaultThreads(), runs.length));

    // whole conversations, heaviest first, handed out one at a time so that the threads finish together
    const groups = conversationGroups(runs, weight).map((g) => g.runs.map((r) => r.runId));
    const queue = new SharedArrayBuffer(4);
    const data = { groups, queue, terms: this.terms, needs } satisfies Omit<DigestWorkerData, keyof PoolWorkerData>;
    const workers = Array.from({ length: threads - 1 }, () => startPoolWorker<RunDigest>(this.options.worker ?? WORKER, share!, data));
    const progress = this.source.onProgress;
    const othersDone = (): number => workers.reduce((n, w) => n + w.progress, 0);
    const digests = new Map<string, RunDigest>();
    const own = new HistorySource(store, { retain: false });
    // each batch is whole groups' digests: kept even from a worker that fails later
    const keep = (batch: RunDigest[]): void => {
      for (const d of batch) digests.set(d.runId, d);
    };
    try {
      let mine = 0;
      digestGroups(
        own,
        groups,
        sharedQueue(queue),
        this.terms,
        (batch) => {
          keep(batch);
          // what the workers posted meanwhile is taken in now, while they still work, not all at the end
          for (const w of workers) w.receive(keep);
        },
        (done) => progress?.((mine = done) + othersDone(), runs.length),
        needs,
      );
      for (const w of workers) w.drain(keep, () => progress?.(mine + othersDone(), runs.length), POLL_MS);
    } finally {
      for (const w of workers) w.stop();
    }
    // what a failed worker took and did not deliver, replayed here
    for (const g of conversationGroups(
      runs.filter((r) => !digests.has(r.runId)),
      weight,
    )) {
      for (const d of digestRuns(
        own,
        g.runs.map((r) => r.runId),
        this.terms,
        undefined,
        needs,
      ))
        digests.set(d.runId, d);
    }
    progress?.(runs.length, runs.length);
    return new DigestCorpus(this.source, runs, digests, this.terms, needs);
  }
}

/** The corpus assembled from digests: attribution over the whole scope, documents replayed on demand. */
class DigestCorpus implements Corpus {
  readonly sections: SectionView[] = [];
  readonly warnings: Warning[] = [];
  private readonly digests: RunDigest[] = [];
  private readonly starts: number[] = [];
  readonly scopeRuns: number;

  constructor(
    private readonly source: HistorySource,
    runs: readonly StoreRun[],
    digests: ReadonlyMap<string, RunDigest>,
    private readonly terms: readonly string[],
    private readonly needs: CorpusNeeds,
  ) {
    this.scopeRuns = runs.length;
    const claimed = new Set<string>();
    for (const run of runs) {
      const d = digests.get(run.runId)!;
      const start = claimInherited(claimed, d.strictKeys);
      for (const s of d.skipped) this.warnings.push({ kind: 'unreadable-snapshot', runId: s.runId, seq: s.seq, reason: s.reason });
      for (const [partKind, count] of d.unknownPartKinds)
        this.warnings.push({ kind: 'unknown-part-kind', runId: run.runId, partKind, count });
      if (start >= d.strictKeys.length) continue;
      this.sections.push({ run, start, end: d.strictKeys.length });
      this.digests.push(d);
      this.starts.push(start);
    }
  }

  document(section: number, position: number): RenderedMessage {
    return renderRecordMessage(this.source.replay(this.sections[section]!.run.runId).messages[position]!);
  }

  parts(section: number, position: number): readonly PartRole[] {
    return digestPartsAt(this.digests[section]!, position);
  }

  facts(section: number, position: number): DocumentFacts {
    const d = this.digests[section]!;
    if (!d.times) return this.document(section, position);
    const i = position - d.localStart;
    return { parts: digestPartsAt(d, position), timestamp: d.times.timestamps[i]!, firstSeq: d.times.firstSeqs[i]! };
  }

  hasPhrases(section: number, position: number): boolean {
    const d = this.digests[section]!;
    if (d.phraseHits) return d.phraseHits[position - d.localStart] === 1;
    return containsPhrases(this.document(section, position).text, this.needs.phrases ?? [], tokenizerNamed(this.needs.tokenizer));
  }

  textKey(section: number, position: number): string {
    const d = this.digests[section]!;
    return d.textKeys ? d.textKeys[position - d.localStart]! : textKey(this.document(section, position).text);
  }

  termStats(terms: readonly string[]): TermStats {
    if (terms.length !== this.terms.length || terms.some((t, k) => t !== this.terms[k]))
      return scanTermStats(this, terms, tokenizerNamed(this.needs.tokenizer));
    const stats = new TermStatsBuilder(
      terms,
      this.sections.reduce((n, s) => n + sectionSize(s), 0),
    );
    let total = 0;
    let first = 0; // document id of the section's first message
    this.digests.forEach((d, si) => {
      const start = this.starts[si]!;
      for (let pos = start; pos < d.strictKeys.length; pos++) {
        const dl = d.lengths[pos - d.localStart]!;
        stats.setLength(first + pos - start, dl);
        total += dl;
      }
      d.termCounts.forEach((counts, k) => {
        for (let j = 0; j < counts.length; j += 2) {
          const pos = counts[j]!;
          if (pos >= start) stats.add(k, first + pos - start, counts[j + 1]!);
        }
      });
      first += d.strictKeys.length - start;
    });
    return stats.finish(total);
  }
}
