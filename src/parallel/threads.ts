import { availableParallelism } from 'node:os';
import type { StoreRun } from '../store/reader.js';

/**
 * Replaying runs on several threads: each thread replays whole conversations, in corpus order, from
 * its own connection to the same bytes (see pool.ts).
 */
export interface ParallelOptions {
  /** Threads replaying, the main one included; default: the cores available, at most {@link MAX_THREADS}. 1 turns it off. */
  readonly threads?: number;
  /** Below this many snapshot rows to replay, starting threads (or digesting runs) costs more than it saves. */
  readonly minSnapshots?: number;
  /** An index build's worker posts its runs once they hold this many characters of message text (default: build-worker.ts BATCH_CHARS). */
  readonly batchChars?: number;
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
export function conversationGroups(
  runs: readonly StoreRun[],
  weight: (r: StoreRun) => number,
): Array<{ runs: StoreRun[]; weight: number }> {
  const groups = new Map<string, { runs: StoreRun[]; weight: number }>();
  runs.forEach((r, i) => {
    const key = r.conversationId === null ? `\0${i}` : `c${r.conversationId}`;
    const g = groups.get(key) ?? groups.set(key, { runs: [], weight: 0 }).get(key)!;
    g.runs.push(r);
    g.weight += weight(r) + 1;
  });
  return [...groups.values()].sort((a, b) => b.weight - a.weight);
}

/** Whole conversations spread over `n` shares by weight; each share keeps corpus order. */
export function partitionByConversation(runs: readonly StoreRun[], n: number, weight: (r: StoreRun) => number): StoreRun[][] {
  const shares = Array.from({ length: n }, () => ({ runs: [] as StoreRun[], weight: 0 }));
  for (const g of conversationGroups(runs, weight)) {
    const lightest = shares.reduce((a, b) => (b.weight < a.weight ? b : a));
    lightest.runs.push(...g.runs);
    lightest.weight += g.weight;
  }
  const ord = new Map(runs.map((r, i) => [r, i]));
  return shares.map((s) => s.runs.sort((a, b) => ord.get(a)! - ord.get(b)!));
}

/** A queue of work items shared between threads: the next index is an atomic counter. */
export function sharedQueue(buffer: SharedArrayBuffer): () => number {
  const counter = new Int32Array(buffer);
  return () => Atomics.add(counter, 0, 1);
}
