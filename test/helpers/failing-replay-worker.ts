/**
 * A replay worker that takes one conversation group from the shared queue and then fails, as a worker
 * that crashes midway would: the main thread must replay what it took. It appends the group index it
 * took to `$FAILING_WORKER_LOG`, so a test can check that it really took one.
 */
import { appendFileSync } from 'node:fs';
import { isMainThread, workerData } from 'node:worker_threads';
import type { ReplayWorkerData, ReplayWorkerReply } from '../../src/search/digest-worker.js';

// the test runner also loads every file under test/ on the main thread: nothing to do there
if (!isMainThread) {
  const data = workerData as ReplayWorkerData;
  const taken = Atomics.add(new Int32Array(data.queue), 0, 1);
  if (process.env.FAILING_WORKER_LOG) appendFileSync(process.env.FAILING_WORKER_LOG, `${taken < data.groups.length ? taken : 'none'}\n`);
  const reply: ReplayWorkerReply = { ok: false, error: `failed after taking group ${taken}` };
  data.port.postMessage(reply);
  const signal = new Int32Array(data.signal);
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
}
