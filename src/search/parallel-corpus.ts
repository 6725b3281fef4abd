import { receiveMessageOnPort } from 'node:worker_threads';
import { claimInherited } from '../history/attribution.js';
import { HistorySource, type Warning } from '../history/source.js';
import { defaultThreads, MIN_SNAPSHOTS, partitionByConversation, startStoreWorker, stopStoreWorker, type ParallelOptions, type StoreWorker, type StoreWorkerData } from '../history/threads.js';
import type { RunRecord } from '../store/runs.js';
import { NO_POSTINGS, PostingsBuilder, type TermStats } from './bm25.js';
import { inScope, renderRecordMessage, type Corpus, type CorpusSource, type DocumentText, type ScopeFilter, type SectionView } from './corpus.js';
import { ReplayCorpusSource, scanTermStats } from './memory-corpus.js';
import { digestRuns, type RunDigest } from './replay-digest.js';
import type { ReplayWorkerData, ReplayWorkerReply } from './replay-worker.js';

/** How often a waiting main thread wakes to report progress. */
const POLL_MS = 100;
const WORKER = new URL('./replay-worker.js', import.meta.url);

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
export class ParallelCorpusSource implements CorpusSource {
  private readonly serial: ReplayCorpusSource;

  constructor(
    private readonly source: HistorySource,
    private readonly terms: readonly string[],
    private readonly options: ParallelOptions = {},
  ) {
    this.serial = new ReplayCorpusSource(source);
  }

  corpus(scope: ScopeFilter): Corpus {
    const runs = this.source.runs().filter((r) => inScope(r, scope));
    if (scope.runId !== null) return this.serial.corpus(scope);
    const marks = this.source.snapshots.watermarks();
    const weight = (r: RunRecord): number => marks.get(r.runId)?.count ?? 0;
    if (runs.reduce((n, r) => n + weight(r), 0) < (this.options.minSnapshots ?? MIN_SNAPSHOTS)) return this.serial.corpus(scope);
    // other threads must read the very bytes this one reads; digests alone already save the memory
    const store = this.source.store;
    const threads = store.sharedUri === null ? 1 : Math.max(1, Math.min(this.options.threads ?? defaultThreads(), runs.length));

    const shares = partitionByConversation(runs, threads, weight);
    const workers = shares.slice(1).map((share) => startStoreWorker(WORKER, store, 2, { runIds: share.map((r) => r.runId), terms: this.terms } satisfies Omit<ReplayWorkerData, keyof StoreWorkerData>));
    const progress = this.source.onProgress;
    const othersDone = (): number => workers.reduce((n, w) => n + Atomics.load(w.signal, 1), 0);
    const digests = new Map<string, RunDigest>();
    try {
      const own = new HistorySource(store, { retain: false });
      for (const d of digestRuns(own, shares[0]!.map((r) => r.runId), this.terms, (done) => progress?.(done + othersDone(), runs.length))) {
        digests.set(d.runId, d);
      }
      workers.forEach((w, k) => {
        for (const d of awaitWorker(w, () => progress?.(shares[0]!.length + othersDone(), runs.length)) ??
          digestRuns(own, shares[k + 1]!.map((r) => r.runId), this.terms)) {
          digests.set(d.runId, d);
        }
      });
    } finally {
      workers.forEach(stopStoreWorker);
    }
    progress?.(runs.length, runs.length);
    return new DigestCorpus(this.source, runs, digests, this.terms);
  }
}

/** Blocks until the worker is done (reporting progress meanwhile); null when it failed. */
function awaitWorker(w: StoreWorker, onWait: () => void): RunDigest[] | null {
  while (Atomics.wait(w.signal, 0, 0, POLL_MS) === 'timed-out') onWait();
  const reply = receiveMessageOnPort(w.port)?.message as ReplayWorkerReply | undefined;
  return reply?.ok ? reply.digests : null;
}

/** The corpus assembled from digests: attribution over the whole scope, documents replayed on demand. */
class DigestCorpus implements Corpus {
  readonly sections: SectionView[] = [];
  readonly warnings: Warning[] = [];
  private readonly digests: RunDigest[] = [];
  private readonly starts: number[] = [];

  constructor(
    private readonly source: HistorySource,
    runs: readonly RunRecord[],
    digests: ReadonlyMap<string, RunDigest>,
    private readonly terms: readonly string[],
  ) {
    const claimed = new Set<string>();
    for (const run of runs) {
      const d = digests.get(run.runId)!;
      const start = claimInherited(claimed, d.strictKeys);
      for (const s of d.skipped) this.warnings.push({ kind: 'unreadable-snapshot', runId: s.runId, seq: s.seq, reason: s.reason });
      for (const [partKind, count] of d.unknownPartKinds) this.warnings.push({ kind: 'unknown-part-kind', runId: run.runId, partKind, count });
      if (start >= d.strictKeys.length) continue;
      this.sections.push({ run, start, end: d.strictKeys.length });
      this.digests.push(d);
      this.starts.push(start);
    }
  }

  document(section: number, position: number): DocumentText {
    return renderRecordMessage(this.source.replay(this.sections[section]!.run.runId).messages[position]!);
  }

  termStats(terms: readonly string[]): TermStats {
    if (terms.length !== this.terms.length || terms.some((t, k) => t !== this.terms[k])) return scanTermStats(this, terms);
    const lengths: number[] = [];
    const postings = terms.map(() => new PostingsBuilder());
    let total = 0;
    this.digests.forEach((d, si) => {
      const first = lengths.length; // document id of the section's first message
      const start = this.starts[si]!;
      for (let pos = start; pos < d.strictKeys.length; pos++) {
        const dl = d.lengths[pos - d.localStart]!;
        lengths.push(dl);
        total += dl;
      }
      d.termCounts.forEach((counts, k) => {
        for (let j = 0; j < counts.length; j += 2) {
          const pos = counts[j]!;
          if (pos >= start) postings[k]!.add(first + pos - start, counts[j + 1]!);
        }
      });
    });
    const byTerm = new Map(terms.map((t, k) => [t, postings[k]!.finish()]));
    return { n: lengths.length, totalLength: total, docLength: (doc) => lengths[doc]!, postings: (t) => byTerm.get(t) ?? NO_POSTINGS };
  }
}
