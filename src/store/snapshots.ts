import type BetterSqlite3 from 'better-sqlite3';
import type { Store } from './open.js';

/** One stored snapshot row; `messages` is untyped because a corrupt row may hold anything. */
export interface SnapshotRow {
  readonly seq: number;
  readonly stepIndex: unknown;
  readonly timestamp: unknown;
  readonly messages: unknown;
}

export interface SnapshotCounts {
  readonly complete: number;
  readonly interrupted: number;
}

/** Prepared statements over `snapshots`, built once per store. */
export class SnapshotReader {
  private readonly complete: BetterSqlite3.Statement;
  private readonly interrupted: BetterSqlite3.Statement | null;
  private readonly counts: BetterSqlite3.Statement;

  constructor(store: Store) {
    const stateFilter = store.schema.hasState ? " AND state = 'complete'" : '';
    this.complete = store.db.prepare(
      `SELECT seq, step_index AS stepIndex, timestamp, messages FROM snapshots WHERE run_id = ?${stateFilter} ORDER BY seq ASC`,
    );
    this.interrupted = store.schema.hasState
      ? store.db.prepare(
          "SELECT seq, step_index AS stepIndex, timestamp, messages FROM snapshots WHERE run_id = ? AND state = 'interrupted' ORDER BY seq ASC",
        )
      : null;
    this.counts = store.schema.hasState
      ? store.db.prepare(
          "SELECT run_id AS runId, SUM(state = 'complete') AS complete, SUM(state = 'interrupted') AS interrupted FROM snapshots GROUP BY run_id",
        )
      : store.db.prepare('SELECT run_id AS runId, COUNT(*) AS complete, 0 AS interrupted FROM snapshots GROUP BY run_id');
  }

  /** The run's `complete` snapshots in `seq` order, streamed (a run's rows can be large). */
  completeSnapshots(runId: string): IterableIterator<SnapshotRow> {
    return this.complete.iterate(runId) as IterableIterator<SnapshotRow>;
  }

  interruptedSnapshots(runId: string): IterableIterator<SnapshotRow> {
    if (!this.interrupted) return [][Symbol.iterator]();
    return this.interrupted.iterate(runId) as IterableIterator<SnapshotRow>;
  }

  countsByRun(): Map<string, SnapshotCounts> {
    const out = new Map<string, SnapshotCounts>();
    for (const r of this.counts.all() as Array<{ runId: unknown; complete: number | null; interrupted: number | null }>) {
      if (typeof r.runId === 'string') out.set(r.runId, { complete: r.complete ?? 0, interrupted: r.interrupted ?? 0 });
    }
    return out;
  }
}
