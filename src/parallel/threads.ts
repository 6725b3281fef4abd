import { availableParallelism } from 'node:os';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { openSharedStore, type OpenMode, type Store } from '../store/sqlite/open.js';
import type { RunRecord } from '../store/sqlite/runs.js';

/**
 * Replaying runs on several threads: each thread replays whole conversations, in corpus order, from
 * its own connection to the same bytes (see `Store.sharedUri`).
 */
export interface ParallelOptions {
  /** Threads replaying, the main one included; default: the cores available, at most {@link MAX_THREADS}. 1 turns it off. */
  readonly threads?: number;
  /** Below this many snapshot rows to replay, starting threads (or digesting runs) costs more than it saves. */
  readonly minSnapshots?: number;
}

export const MAX_THREADS = 4;
export const MIN_SNAPSHOTS = 2_000;

export function defaultThreads(): number {
  return Math.min(availableParallelism(), MAX_THREADS);
}

/** `CONVSEARCH_THREADS=n` fixes the thread count (1: never parallel) and drops the size threshold. */
export function parallelOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): ParallelOptions {
  const n = Number(env.CONVSEARCH_THREADS);
  return Number.isInteger(n) && n >= 1 ? { threads: n, minSnapshots: 0 } : {};
}

/**
 * The runs grouped by conversation (a run without one stands alone), each group in corpus order, the
 * heaviest groups first: a thread that replays a whole group lets each run start from its
 * conversation's last snapshot.
 */
export function conversationGroups(runs: readonly RunRecord[], weight: (r: RunRecord) => number): Array<{ runs: RunRecord[]; weight: number }> {
  const groups = new Map<string, { runs: RunRecord[]; weight: number }>();
  runs.forEach((r, i) => {
    const key = r.conversationId === null ? `\0${i}` : `c${r.conversationId}`;
    const g = groups.get(key) ?? groups.set(key, { runs: [], weight: 0 }).get(key)!;
    g.runs.push(r);
    g.weight += weight(r) + 1;
  });
  return [...groups.values()].sort((a, b) => b.weight - a.weight);
}

/** Whole conversations spread over `n` shares by weight; each share keeps corpus order. */
export function partitionByConversation(runs: readonly RunRecord[], n: number, weight: (r: RunRecord) => number): RunRecord[][] {
  const shares = Array.from({ length: n }, () => ({ runs: [] as RunRecord[], weight: 0 }));
  for (const g of conversationGroups(runs, weight)) {
    const lightest = shares.reduce((a, b) => (b.weight < a.weight ? b : a));
    lightest.runs.push(...g.runs);
    lightest.weight += g.weight;
  }
  const ord = new Map(runs.map((r, i) => [r, i]));
  return shares.map((s) => s.runs.sort((a, b) => ord.get(a)! - ord.get(b)!));
}

/** What every replay worker is given: how to open the main thread's bytes, a shared signal block and a reply port. */
export interface StoreWorkerData {
  readonly uri: string;
  readonly path: string;
  readonly realPath: string;
  readonly mode: OpenMode;
  readonly signal: SharedArrayBuffer;
  readonly port: MessagePort;
}

export interface StoreWorker {
  readonly worker: Worker;
  /** Replies arrive here; read them with `receiveMessageOnPort` (the main thread waits synchronously). */
  readonly port: MessagePort;
  readonly signal: Int32Array;
}

/** Starts `script` on the store's shared bytes (the store must have a `sharedUri`). `signalSlots` Int32 slots are shared. */
export function startStoreWorker(script: URL, store: Store, signalSlots: number, data: object): StoreWorker {
  const { port1, port2 } = new MessageChannel();
  const signal = new SharedArrayBuffer(4 * signalSlots);
  const workerData: StoreWorkerData = { uri: store.sharedUri!, path: store.path, realPath: store.realPath, mode: store.mode, signal, port: port2, ...data };
  const worker = new Worker(script, { workerData, transferList: [port2] });
  worker.unref();
  return { worker, port: port1, signal: new Int32Array(signal) };
}

/** Ends a worker whose replies are no longer wanted. */
export function stopStoreWorker(w: StoreWorker): void {
  w.port.close();
  void w.worker.terminate();
}

/** In a worker: opens the store the main thread reads. */
export function openWorkerStore(data: StoreWorkerData): Store {
  return openSharedStore(data.uri, data.path, data.realPath, data.mode);
}
