import { startPoolWorker, type PoolWorker, type PoolWorkerData } from '../parallel/pool.js';
import { defaultThreads, MIN_SNAPSHOTS, partitionByConversation, type ParallelOptions } from '../parallel/threads.js';
import type { StoreReader, StoreRun } from '../store/reader.js';
import type { BuildWorkerData } from './build-worker.js';
import type { RunBuild } from './run-build.js';

const WORKER = new URL('./build-worker.js', import.meta.url);
/** How long a waiting writer sleeps between looks (a finished or failed worker always wakes it sooner). */
const POLL_MS = 100;
/** Runs with fewer snapshots than this on average are replayed by the writer itself. */
const LIGHT_RUN_SNAPSHOTS = 8;

interface BuildWorker {
  readonly pool: PoolWorker<RunBuild>;
  readonly ready: Map<string, RunBuild>;
}

/**
 * Runs rebuilt from nothing, replayed by worker threads while the main thread writes the index: the
 * writer takes them in corpus order, waiting when a worker has not got there yet. A run a worker
 * could not deliver is null, and the writer replays it itself.
 */
export class PrefetchedBuilds {
  constructor(
    private readonly workers: BuildWorker[],
    private readonly owner: ReadonlyMap<string, number>,
    /** Each run's build carries its content digest (run-build.ts buildRun). */
    readonly digest: boolean,
  ) {}

  take(runId: string): RunBuild | null {
    const k = this.owner.get(runId);
    if (k === undefined) return null;
    const w = this.workers[k]!;
    for (;;) {
      const build = w.ready.get(runId);
      if (build) {
        w.ready.delete(runId);
        return build;
      }
      if (w.pool.failed) return null;
      // one batch at a time: the runs taken out of the port are the ones about to be written, so the
      // writer's heap holds a batch of rows, not every batch the worker is ahead by (each one copied by
      // every young-generation collection until it is written)
      const received = w.pool.receive((builds) => {
        for (const b of builds) w.ready.set(b.runId, b);
      }, 1);
      if (received) continue;
      // everything it posted before finishing has been received: it will not deliver this run
      if (w.pool.finished) return null;
      w.pool.wait(POLL_MS);
    }
  }

  close(): void {
    for (const w of this.workers) w.pool.stop();
  }
}

/**
 * Starts worker threads for the runs to rebuild when that pays (enough snapshots, more than one core)
 * and other threads can read the very bytes this one reads; otherwise null (the writer replays them).
 */
export function prefetchBuilds(
  store: StoreReader,
  runs: readonly StoreRun[],
  weight: (r: StoreRun) => number,
  options: ParallelOptions,
  /** Each run's content digested by its replay (run-build.ts buildRun). */
  digest = false,
): PrefetchedBuilds | null {
  const workers = Math.min((options.threads ?? defaultThreads()) - 1, runs.length);
  const share = workers < 1 ? null : store.share();
  if (share === null) return null;
  const snapshots = runs.reduce((n, r) => n + weight(r), 0);
  if (snapshots < (options.minSnapshots ?? MIN_SNAPSHOTS)) return null;
  // many light runs: the writer is the bottleneck, and another thread's heap would cost more than it saves
  if (options.minSnapshots === undefined && snapshots < LIGHT_RUN_SNAPSHOTS * runs.length) return null;
  const owner = new Map<string, number>();
  const started = partitionByConversation(runs, workers, weight).map((part, k): BuildWorker => {
    for (const r of part) owner.set(r.runId, k);
    const data = {
      runs: part.map((r) => [r.runId, r.conversationId] as const),
      digest,
      ...(options.batchChars !== undefined ? { batchChars: options.batchChars } : {}),
    } satisfies Omit<BuildWorkerData, keyof PoolWorkerData>;
    return { pool: startPoolWorker<RunBuild>(WORKER, share, data), ready: new Map() };
  });
  return new PrefetchedBuilds(started, owner, digest);
}
