import { availableParallelism } from 'node:os';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { claimInherited } from '../history/attribution.js';
import { HistorySource, type Warning } from '../history/source.js';
import type { RunRecord } from '../store/runs.js';
import type { TermStats } from './bm25.js';
import { inScope, renderRecordMessage, type Corpus, type CorpusSource, type DocumentText, type ScopeFilter, type SectionView } from './corpus.js';
import { ReplayCorpusSource, scanTermStats } from './memory-corpus.js';
import { digestRuns, type RunDigest } from './replay-digest.js';
import type { ReplayWorkerData, ReplayWorkerReply } from './replay-worker.js';

export interface ParallelOptions {
  /** Threads replaying, the main one included; default: the cores available, at most 4. 1 turns parallel replay off. */
  readonly threads?: number;
  /** Below this many snapshot rows in scope, starting threads costs more than it saves. */
  readonly minSnapshots?: number;
}

const MAX_THREADS = 4;
const MIN_SNAPSHOTS = 2_000;
/** How often a waiting main thread wakes to report progress. */
const POLL_MS = 100;

/** Threads a parallel replay uses by default: the cores available, at most {@link MAX_THREADS}. */
export function defaultThreads(): number {
  return Math.min(availableParallelism(), MAX_THREADS);
}

/** `CONVSEARCH_THREADS=n` fixes the thread count (1: never parallel) and drops the size threshold. */
export function parallelOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): ParallelOptions {
  const n = Number(env.CONVSEARCH_THREADS);
  return Number.isInteger(n) && n >= 1 ? { threads: n, minSnapshots: 0 } : {};
}

/**
 * A `--no-index` corpus replayed by several threads: each replays whole conversations (so a run still
 * starts from its conversation's last snapshot) and sends back digests (strict keys and BM25 counts for
 * the query terms); the main thread attributes runs across the whole scope and replays again only the
 * runs whose messages it shows. Results equal {@link ReplayCorpusSource}'s: same records, same counts.
 *
 * Used only when other threads can read the very bytes this one reads (the store is not being read in
 * place beside a live writer) and the scope is large; otherwise it is the one-thread replay.
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
    const threads = Math.min(this.options.threads ?? defaultThreads(), runs.length);
    const store = this.source.store;
    if (scope.runId !== null || threads < 2 || store.sharedUri === null) return this.serial.corpus(scope);
    const marks = this.source.snapshots.watermarks();
    const weight = (r: RunRecord): number => marks.get(r.runId)?.count ?? 0;
    if (runs.reduce((n, r) => n + weight(r), 0) < (this.options.minSnapshots ?? MIN_SNAPSHOTS)) return this.serial.corpus(scope);

    const shares = partition(runs, threads, weight);
    const signals = shares.slice(1).map(() => new SharedArrayBuffer(8));
    const workers = shares.slice(1).map((share, k) => startWorker(this.source, share, this.terms, signals[k]!));
    const progress = this.source.onProgress;
    const othersDone = (): number => signals.reduce((n, s) => n + Atomics.load(new Int32Array(s), 1), 0);
    const digests = new Map<string, RunDigest>();
    try {
      const own = new HistorySource(store, { retain: false });
      for (const d of digestRuns(own, shares[0]!.map((r) => r.runId), this.terms, (done) => progress?.(done + othersDone(), runs.length))) {
        digests.set(d.runId, d);
      }
      workers.forEach((w, k) => {
        for (const d of awaitWorker(w, signals[k]!, () => progress?.(shares[0]!.length + othersDone(), runs.length)) ??
          digestRuns(own, shares[k + 1]!.map((r) => r.runId), this.terms)) {
          digests.set(d.runId, d);
        }
      });
    } finally {
      for (const w of workers) void w.worker.terminate();
    }
    progress?.(runs.length, runs.length);
    return new DigestCorpus(this.source, runs, digests, this.terms);
  }
}

/** Whole conversations (a run without one stands alone) spread over `n` shares by snapshot count; each share keeps corpus order. */
function partition(runs: readonly RunRecord[], n: number, weight: (r: RunRecord) => number): RunRecord[][] {
  const groups = new Map<string, { runs: RunRecord[]; weight: number }>();
  runs.forEach((r, i) => {
    const key = r.conversationId === null ? `\0${i}` : `c${r.conversationId}`;
    const g = groups.get(key) ?? groups.set(key, { runs: [], weight: 0 }).get(key)!;
    g.runs.push(r);
    g.weight += weight(r) + 1;
  });
  const shares = Array.from({ length: n }, () => ({ runs: [] as RunRecord[], weight: 0 }));
  for (const g of [...groups.values()].sort((a, b) => b.weight - a.weight)) {
    const lightest = shares.reduce((a, b) => (b.weight < a.weight ? b : a));
    lightest.runs.push(...g.runs);
    lightest.weight += g.weight;
  }
  const ord = new Map(runs.map((r, i) => [r, i]));
  return shares.map((s) => s.runs.sort((a, b) => ord.get(a)! - ord.get(b)!));
}

interface RunningWorker {
  readonly worker: Worker;
  readonly port: MessagePort;
}

function startWorker(source: HistorySource, share: readonly RunRecord[], terms: readonly string[], signal: SharedArrayBuffer): RunningWorker {
  const { port1, port2 } = new MessageChannel();
  const store = source.store;
  const data: ReplayWorkerData = {
    uri: store.sharedUri!,
    path: store.path,
    realPath: store.realPath,
    mode: store.mode,
    runIds: share.map((r) => r.runId),
    terms,
    signal,
    port: port2,
  };
  const worker = new Worker(new URL('./replay-worker.js', import.meta.url), { workerData: data, transferList: [port2] });
  worker.unref();
  return { worker, port: port1 };
}

/** Blocks until the worker is done (reporting progress meanwhile); null when it failed. */
function awaitWorker(w: RunningWorker, signal: SharedArrayBuffer, onWait: () => void): RunDigest[] | null {
  const flag = new Int32Array(signal);
  while (Atomics.wait(flag, 0, 0, POLL_MS) === 'timed-out') onWait();
  const reply = receiveMessageOnPort(w.port)?.message as ReplayWorkerReply | undefined;
  w.port.close();
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
    const postings = terms.map((): Array<[number, number]> => []);
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
          if (pos >= start) postings[k]!.push([first + pos - start, counts[j + 1]!]);
        }
      });
    });
    const byTerm = new Map(terms.map((t, k) => [t, postings[k]!]));
    return { n: lengths.length, totalLength: total, docLength: (doc) => lengths[doc]!, postings: (t) => byTerm.get(t) ?? [] };
  }
}
