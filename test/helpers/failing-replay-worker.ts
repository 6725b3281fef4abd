/**
 * A digest worker that takes one conversation group from the shared queue and then fails, as a worker
 * that crashes midway would: the main thread must replay what it took. It appends the group index it
 * took to the file its URL names (`?log=`: no environment shared with the test), so a test can check
 * that it really took one. It takes the group before
 * anything else (no store opened), so that it gets one while the main thread is still busy.
 * With `?deliver=1` it first digests a group for real and posts it (logged as `delivered <g>`), as a
 * worker that fails after some of its work arrived: what it delivered is whole groups, kept as they are.
 */
import { appendFileSync } from 'node:fs';
import { isMainThread, workerData } from 'node:worker_threads';
import { HistorySource } from '../../src/history/source.js';
import { PoolChannel } from '../../src/parallel/pool.js';
import { digestRuns, type RunDigest } from '../../src/search/digest.js';
import type { DigestWorkerData } from '../../src/search/digest-worker.js';
import { openSharedReader } from '../../src/store/shared.js';

// the test runner also loads every file under test/ on the main thread: nothing to do there
if (!isMainThread) {
  const data = workerData as DigestWorkerData;
  const channel = new PoolChannel<RunDigest>(data);
  const queue = new Int32Array(data.queue);
  const params = new URL(import.meta.url).searchParams;
  const log = params.get('log');
  if (params.get('deliver') === '1') {
    const g = Atomics.add(queue, 0, 1);
    if (g < data.groups.length) {
      const store = openSharedReader(data.share);
      try {
        channel.post(digestRuns(new HistorySource(store, { retain: false }), data.groups[g]!, data.terms, undefined, data.needs));
      } finally {
        store.close();
      }
      if (log) appendFileSync(log, `delivered ${g}\n`);
    }
  }
  const taken = Atomics.add(queue, 0, 1);
  if (log) appendFileSync(log, `${taken < data.groups.length ? taken : 'none'}\n`);
  channel.fail(new Error(`failed after taking group ${taken}`));
  channel.finish();
}
