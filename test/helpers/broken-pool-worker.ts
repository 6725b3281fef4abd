// A pool worker script that cannot even load (as a damaged or half-written bundle would): the pool must
// report the failure instead of leaving the main thread waiting.
import { isMainThread } from 'node:worker_threads';

// the test runner also loads every file under test/ on the main thread: nothing to do there
if (!isMainThread) throw new Error('this worker script is broken');
