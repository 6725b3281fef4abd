/**
 * Worker thread of an index build (see build-threads.ts): replays its share of the runs being rebuilt
 * from nothing and posts them in batches, staying at most a few batches ahead of the writer
 * (parallel/pool.ts).
 */
import { MediaCache } from '../history/media.js';
import { ConversationSeeds } from '../history/seeds.js';
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
  const media = new MediaCache(store);
  const seeds = new ConversationSeeds(data.runs.map(([, conversation]) => conversation));
  let batch: RunBuild[] = [];
  for (const [runId, conversation] of data.runs) {
    const { build, last } = buildRun(runId, store, media, seeds.seedFor(conversation));
    seeds.done(conversation, last);
    batch.push(build);
    if (batch.length < BATCH_RUNS) continue;
    channel.post(batch);
    batch = [];
    channel.throttle(MAX_AHEAD);
  }
  if (batch.length > 0) channel.post(batch);
});
