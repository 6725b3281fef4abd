/**
 * Worker thread of an index build (see build-threads.ts): replays its share of the runs being rebuilt
 * from nothing and posts them in batches, staying a bounded amount of text ahead of the writer
 * (parallel/pool.ts).
 */
import { ReplayDriver } from '../history/driver.js';
import { runPoolWorker, type PoolWorkerData } from '../parallel/pool.js';
import { buildRun, type RunBuild } from './run-build.js';

export interface BuildWorkerData extends PoolWorkerData {
  /** Run id and conversation id, whole conversations, in corpus order. */
  readonly runs: ReadonlyArray<readonly [string, string | null]>;
  /** Digest each run's rows of every state as they are read (run-build.ts buildRun). */
  readonly digest: boolean;
}

const BATCH_RUNS = 8;
/** Batches posted but not yet taken by the writer before this thread waits, whatever they hold… */
const MIN_AHEAD = 4;
/**
 * …and more, up to this many characters of message text, or this many batches: in a build from nothing
 * this thread starts while the writer still digests the store's content, and gets that far ahead.
 */
const AHEAD_CHARS = 2 << 20;
const MAX_AHEAD = 128;

/** About what a batch holds: its messages' text. */
function batchChars(batch: readonly RunBuild[]): number {
  let n = 0;
  for (const b of batch) for (const r of b.rows) for (const [label, text] of r[8]) n += label.length + text.length;
  return n;
}

runPoolWorker<BuildWorkerData, RunBuild>((store, data, channel) => {
  const driver = new ReplayDriver(store);
  driver.plan(data.runs.map(([, conversation]) => conversation));
  let batch: RunBuild[] = [];
  // the sizes of the last batches posted, newest last
  const sizes: number[] = [];
  for (const [runId, conversationId] of data.runs) {
    // the fields' JSON made here too: the writer only inserts it
    batch.push(buildRun(driver, { runId, conversationId }, data.digest, true));
    if (batch.length < BATCH_RUNS) continue;
    sizes.push(batchChars(batch));
    if (sizes.length > MAX_AHEAD) sizes.shift();
    channel.post(batch);
    batch = [];
    // as many of the newest batches as fit in AHEAD_CHARS may wait for the writer
    let ahead = 0;
    for (let held = 0; ahead < sizes.length && (held += sizes[sizes.length - 1 - ahead]!) <= AHEAD_CHARS; ) ahead++;
    channel.throttle(Math.max(MIN_AHEAD, ahead));
  }
  if (batch.length > 0) channel.post(batch);
});
