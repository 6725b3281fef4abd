/**
 * Worker thread of an index build (see build-threads.ts): replays its share of the runs being rebuilt
 * from nothing and posts them in batches, staying at most a few batches ahead of the writer
 * (parallel/pool.ts).
 */
import { ReplayDriver } from '../history/driver.js';
import { runPoolWorker, type PoolWorkerData } from '../parallel/pool.js';
import { buildRun, type RunBuild } from './run-build.js';

export interface BuildWorkerData extends PoolWorkerData {
  /** Run id and conversation id, whole conversations, in corpus order. */
  readonly runs: ReadonlyArray<readonly [string, string | null]>;
}

const BATCH_RUNS = 8;
/** Batches posted but not yet taken by the writer before this thread waits. */
const MAX_AHEAD = 4;

runPoolWorker<BuildWorkerData, RunBuild>((store, data, channel) => {
  const driver = new ReplayDriver(store);
  driver.plan(data.runs.map(([, conversation]) => conversation));
  let batch: RunBuild[] = [];
  for (const [runId, conversationId] of data.runs) {
    batch.push(buildRun(driver, { runId, conversationId }));
    if (batch.length < BATCH_RUNS) continue;
    channel.post(batch);
    batch = [];
    channel.throttle(MAX_AHEAD);
  }
  if (batch.length > 0) channel.post(batch);
});
