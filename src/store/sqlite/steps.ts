import type BetterSqlite3 from 'better-sqlite3';

/**
 * Per run, the highest `step_index` among its snapshots of any state (how far the run got). `messages` is
 * the last column, so its overflow pages are never read. A non-integer step (a damaged row) counts as none.
 */
export function lastSteps(db: BetterSqlite3.Database): Map<string, number | null> {
  const rows = db.prepare('SELECT run_id AS runId, MAX(step_index) AS step FROM snapshots GROUP BY run_id').all() as Array<{
    runId: unknown;
    step: unknown;
  }>;
  const out = new Map<string, number | null>();
  for (const r of rows) {
    if (typeof r.runId === 'string') out.set(r.runId, stepOf(r.step));
  }
  return out;
}

/** A `MAX(step_index)` as read: a non-integer (a damaged row) is none. */
export function stepOf(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) ? v : null;
}
