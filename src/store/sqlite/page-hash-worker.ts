/**
 * The helper thread of the page map's hashing pass (page-hash.ts): hashes the chunks it claims, then
 * ends. A failure ends it quietly: the main thread hashes whatever it did not publish.
 */
import { workerData } from 'node:worker_threads';
import { type HashJob, helpHash } from './page-hash.js';

try {
  helpHash(workerData as HashJob);
} catch {
  // nothing published for the chunk it was on: the main thread takes it back
}
