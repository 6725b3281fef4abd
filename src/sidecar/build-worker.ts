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
  /** BATCH_CHARS, unless a test asks for another. */
  readonly batchChars?: number;
}

/**
 * A batch is posted when it holds this many runs, or this many characters of message text: the writer
 * makes a batch into objects as it takes it, so the runs of a batch wait on its heap while the first are
 * written, copied by each young-generation collection meanwhile and moved to the old generation. On the
 * bench store (~54 KB of text a run) eight runs a batch had the writer promote 135 MB; cut by text,
 * 84 MB, and the build took ~100 ms (2.4%) less, its peak RSS ~10 MB less. Small runs still go eight at
 * a time (a message each would cost more than their copies).
 */
const BATCH_RUNS = 8;
const BATCH_CHARS = 32 * 1024;
/** Batches posted but not yet taken by the writer before this thread waits, whatever they hold… */
const MIN_AHEAD = 4;
/**
 * …and more, up to this many characters of message text, or this many batches: in a build from nothing
 * this thread starts while the writer still digests the store's content, and gets that far ahead.
 */
const AHEAD_CHARS = 2 << 20;
const MAX_AHEAD = 128;

/** About what a run's build holds: its messages' text. */
function buildChars(b: RunBuild): number {
  let n = 0;
  for (const r of b.rows) for (const [label, text] of r[8]) n += label.length + text.length;
  return n;
}

runPoolWorker<BuildWorkerData, RunBuild>((store, data, channel) => {
  const driver = new ReplayDriver(store);
  driver.plan(data.runs.map(([, conversation]) => conversation));
  let batch: RunBuild[] = [];
  // the sizes of the last batches posted, newest last
  const sizes: number[] = [];
  let chars = 0;
  for (const [runId, conversationId] of data.runs) {
    // the fields' JSON made here too: the writer only inserts it
    const build = buildRun(driver, { runId, conversationId }, data.digest, true);
    batch.push(build);
    chars += buildChars(build);
    if (batch.length < BATCH_RUNS && chars < (data.batchChars ?? BATCH_CHARS)) continue;
    sizes.push(chars);
    chars = 0;
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
