/**
 * A digest worker that takes one conversation group from the shared queue and then fails, as a worker
 * that crashes midway would: the main thread must replay what it took. It appends the group index it
 * took to `$FAILING_WORKER_LOG`, so a test can check that it really took one. It takes the group before
 * anything else (no store opened), so that it gets one while the main thread is still busy.
 */
import { appendFileSync } from 'node:fs';
import { isMainThread, workerData } from 'node:worker_threads';
import { PoolChannel } from '../../src/parallel/pool.js';
import type { DigestWorkerData } from '../../src/search/digest-worker.js';

// the test runner also loads every file under test/ on the main thread: nothing to do there
if (!isMainThread) {
  const data = workerData as DigestWorkerData;
  const channel = new PoolChannel<never>(data);
  const taken = Atomics.add(new Int32Array(data.queue), 0, 1);
  if (process.env.FAILING_WORKER_LOG) appendFileSync(process.env.FAILING_WORKER_LOG, `${taken < data.groups.length ? taken : 'none'}\n`);
  channel.fail(new Error(`failed after taking group ${taken}`));
  channel.finish();
}
