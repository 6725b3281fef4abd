/**
 * The helper thread of the page map's hashing pass (page-hash.ts): hashes the chunks it claims, then
 * ends. A failure is marked in the shared state (the main thread then takes no map), never thrown here.
 */
import { workerData } from 'node:worker_threads';
import { hashClaimed, type HashJob } from './page-hash.js';

try {
  hashClaimed(workerData as HashJob);
} catch {
  // marked in the shared state by hashClaimed
}
