/** A driver whose module never finishes loading and blocks its thread: the SyncBridge must give up, not hang. */
import { isMainThread } from 'node:worker_threads';

// the test runner also loads every compiled helper as a test file: block only inside a driver thread
if (!isMainThread) for (;;);

export async function open(): Promise<never> {
  throw new Error('unreachable');
}
