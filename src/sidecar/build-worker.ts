/**
 * Worker thread of an index build (see build-threads.ts): replays its share of the runs being rebuilt
 * from nothing and posts them in batches, staying at most a few batches ahead of the writer. It never
 * throws: a failure is posted as an error and the main thread replays what is left itself.
 */
import { workerData } from 'node:worker_threads';
import { ConversationSeeds } from '../history/seeds.js';
import { openWorkerStore, type StoreWorkerData } from '../parallel/threads.js';
import { MediaLookup } from '../history/media.js';
import { SnapshotReader } from '../store/sqlite/snapshots.js';
import { buildRun, type RunBuild } from './run-build.js';

/** The signal block is `[batches posted, done flag, batches consumed]`. */
export interface BuildWorkerData extends StoreWorkerData {
  /** Run id and conversation id, whole conversations, in corpus order. */
  readonly runs: ReadonlyArray<readonly [string, string | null]>;
}

export type BuildWorkerReply = { readonly builds: RunBuild[] } | { readonly error: string };

const BATCH_RUNS = 8;
/** Batches posted but not yet taken by the writer before this thread waits. */
const MAX_AHEAD = 4;

const data = workerData as BuildWorkerData;
const signal = new Int32Array(data.signal);

function post(reply: BuildWorkerReply): void {
  data.port.postMessage(reply);
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
}

try {
  const store = openWorkerStore(data);
  try {
    const reader = new SnapshotReader(store);
    const media = new MediaLookup(store);
    const seeds = new ConversationSeeds(data.runs.map(([, conversation]) => conversation));
    let batch: RunBuild[] = [];
    for (const [runId, conversation] of data.runs) {
      const { build, last } = buildRun(runId, reader, media, seeds.seedFor(conversation));
      seeds.done(conversation, last);
      batch.push(build);
      if (batch.length < BATCH_RUNS) continue;
      post({ builds: batch });
      batch = [];
      for (let taken = Atomics.load(signal, 2); Atomics.load(signal, 0) - taken > MAX_AHEAD; taken = Atomics.load(signal, 2)) {
        Atomics.wait(signal, 2, taken, 100);
      }
    }
    if (batch.length > 0) post({ builds: batch });
  } finally {
    store.close();
  }
} catch (e) {
  post({ error: e instanceof Error ? e.message : String(e) });
} finally {
  Atomics.store(signal, 1, 1);
  Atomics.notify(signal, 0);
}
