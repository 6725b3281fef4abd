/**
 * The helper thread of the page map's hashing pass (page-hash.ts): hashes the chunks it claims, then
 * ends. A failure ends it quietly: the main thread hashes whatever it did not publish. Started with its
 * job, it begins at once; started ahead of the pass (pages.ts prestartPageHashing), it waits for the job
 * as a message, and ends if none comes within `waitMs`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type HelperStart, helpHash } from './page-hash.js';

const start = workerData as HelperStart;
if ('job' in start) helpHash(start.job);
else {
  const port = parentPort!;
  const giveUp = setTimeout(() => port.close(), start.waitMs);
  port.once('message', (job) => {
    clearTimeout(giveUp);
    port.close();
    helpHash(job);
  });
}
