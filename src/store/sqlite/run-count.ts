import type { Store } from './open.js';

/** Number of rows in `runs`: enough to tell whether a replay will take long enough to show progress. */
export function runCount(store: Store): number {
  const row = store.db.prepare('SELECT COUNT(*) AS n FROM runs').get() as { n: number };
  return row.n;
}
