/**
 * Worker thread of a parallel replay (see parallel-corpus.ts): opens the bytes the main thread reads,
 * digests its share of the runs, posts the digests and raises the done flag. It never throws: a failure
 * is posted as an error and the main thread replays that share itself.
 */
import { workerData } from 'node:worker_threads';
import { HistorySource } from '../history/source.js';
import { openWorkerStore, type StoreWorkerData } from '../history/threads.js';
import { digestGroups, sharedQueue, type RunDigest } from './replay-digest.js';
import type { CorpusNeeds } from './corpus.js';

/** The signal block is `[done flag, runs digested]`. */
export interface ReplayWorkerData extends StoreWorkerData {
  /** Run ids grouped by conversation, each group in corpus order; groups are taken from `queue`. */
  readonly groups: ReadonlyArray<readonly string[]>;
  readonly queue: SharedArrayBuffer;
  readonly terms: readonly string[];
  readonly needs: CorpusNeeds;
}

export type ReplayWorkerReply = { readonly ok: true; readonly digests: RunDigest[] } | { readonly ok: false; readonly error: string };

const data = workerData as ReplayWorkerData;
const signal = new Int32Array(data.signal);
let reply: ReplayWorkerReply;
let transfer: ArrayBuffer[] = [];
try {
  const store = openWorkerStore(data);
  try {
    const source = new HistorySource(store, { retain: false });
    const digests = digestGroups(source, data.groups, sharedQueue(data.queue), data.terms, (done) => Atomics.store(signal, 1, done), data.needs);
    reply = { ok: true, digests };
    transfer = digests.flatMap((d) => [
      d.lengths.buffer as ArrayBuffer,
      ...d.termCounts.map((c) => c.buffer as ArrayBuffer),
      ...[d.parts.starts, d.parts.roles, d.parts.tools].map((a) => a.buffer as ArrayBuffer),
      ...(d.times ? [d.times.firstSeqs.buffer as ArrayBuffer] : []),
      ...(d.phraseHits ? [d.phraseHits.buffer as ArrayBuffer] : []),
    ]);
  } finally {
    store.close();
  }
} catch (e) {
  reply = { ok: false, error: e instanceof Error ? e.message : String(e) };
}
data.port.postMessage(reply, transfer);
Atomics.store(signal, 0, 1);
Atomics.notify(signal, 0);
