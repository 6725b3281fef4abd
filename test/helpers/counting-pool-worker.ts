/**
 * A pool worker for test/parallel/pool.test.ts: posts `batches` batches of the run ids it is given,
 * staying at most `ahead` batches ahead of the main thread, then fails if `fail` is set.
 */
import { isMainThread } from 'node:worker_threads';
import { runPoolWorker, type PoolWorkerData } from '../../src/parallel/pool.js';

export interface CountingWorkerData extends PoolWorkerData {
  readonly batches: number;
  readonly ahead: number;
  readonly fail: boolean;
}

// the test runner also loads every file under test/ on the main thread: nothing to do there
if (!isMainThread) {
  runPoolWorker<CountingWorkerData, string>((store, data, channel) => {
    const ids = store.runs().map((r) => r.runId);
    for (let b = 0; b < data.batches; b++) {
      channel.post(ids.map((id) => `${b}:${id}`));
      channel.progress(b + 1);
      channel.throttle(data.ahead);
    }
    if (data.fail) throw new Error('failed on purpose');
  });
}
