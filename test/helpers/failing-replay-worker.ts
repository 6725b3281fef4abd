/**
 * A digest worker that takes one conversation group from the shared queue and then fails, as a worker
 * that crashes midway would: the main thread must replay what it took. It appends the group index it
 * took to the file its URL names (`?log=`: no environment shared with the test), so a test can check
 * that it really took one. It takes the group before
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
  const log = new URL(import.meta.url).searchParams.get('log');
  if (log) appendFileSync(log, `${taken < data.groups.length ? taken : 'none'}\n`);
  channel.fail(new Error(`failed after taking group ${taken}`));
  channel.finish();
}
