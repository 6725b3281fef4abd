import { receiveMessageOnPort } from 'node:worker_threads';
import { defaultThreads, MIN_SNAPSHOTS, partitionByConversation, startStoreWorker, stopStoreWorker, type ParallelOptions, type StoreWorker, type StoreWorkerData } from '../history/threads.js';
import type { Store } from '../store/open.js';
import type { RunRecord } from '../store/runs.js';
import type { BuildWorkerData, BuildWorkerReply } from './build-worker.js';
import type { RunBuild } from './run-build.js';

const WORKER = new URL('./build-worker.js', import.meta.url);
/** How long a waiting writer sleeps between looks (a finished or failed worker always wakes it sooner). */
const POLL_MS = 100;
/** Runs with fewer snapshots than this on average are replayed by the writer itself. */
const LIGHT_RUN_SNAPSHOTS = 8;

interface BuildWorker extends StoreWorker {
  readonly ready: Map<string, RunBuild>;
  failed: boolean;
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
      if (w.failed) return null;
      const posted = Atomics.load(w.signal, 0);
      const done = Atomics.load(w.signal, 1) === 1;
      let received = false;
      for (let m = receiveMessageOnPort(w.port); m; m = receiveMessageOnPort(w.port)) {
        received = true;
        const reply = m.message as BuildWorkerReply;
        if ('error' in reply) w.failed = true;
        else for (const b of reply.builds) w.ready.set(b.runId, b);
        Atomics.add(w.signal, 2, 1);
        Atomics.notify(w.signal, 2);
      }
      if (received) continue;
      // everything it posted before finishing has been received: it will not deliver this run
      if (done) w.failed = true;
      else Atomics.wait(w.signal, 0, posted, POLL_MS);
    }
  }

  close(): void {
    this.workers.forEach(stopStoreWorker);
  }
}

/**
 * Starts worker threads for the runs to rebuild when that pays (enough snapshots, more than one core)
 * and other threads can read the very bytes this one reads; otherwise null (the writer replays them).
 */
export function prefetchBuilds(store: Store, runs: readonly RunRecord[], weight: (r: RunRecord) => number, options: ParallelOptions): PrefetchedBuilds | null {
  const workers = Math.min((options.threads ?? defaultThreads()) - 1, runs.length);
  if (workers < 1 || store.sharedUri === null) return null;
  const snapshots = runs.reduce((n, r) => n + weight(r), 0);
  if (snapshots < (options.minSnapshots ?? MIN_SNAPSHOTS)) return null;
  // many light runs: the writer is the bottleneck, and another thread's heap would cost more than it saves
  if (options.minSnapshots === undefined && snapshots < LIGHT_RUN_SNAPSHOTS * runs.length) return null;
  const owner = new Map<string, number>();
  const started = partitionByConversation(runs, workers, weight).map((share, k): BuildWorker => {
    for (const r of share) owner.set(r.runId, k);
    const data = { runs: share.map((r) => [r.runId, r.conversationId] as const) } satisfies Omit<BuildWorkerData, keyof StoreWorkerData>;
    return { ...startStoreWorker(WORKER, store, 3, data), ready: new Map(), failed: false };
  });
  return new PrefetchedBuilds(started, owner);
}
