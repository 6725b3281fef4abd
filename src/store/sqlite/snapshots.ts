import type BetterSqlite3 from 'better-sqlite3';
import type { DigestRow } from '../content.js';
import type { RunSnapshotStats, SnapshotMark, SnapshotStateCounts, StoreSnapshot } from '../reader.js';
import { type StoreSchema, stateCell } from './schema.js';
import type { RawRunIds } from './raw-ids.js';
import { stepOf } from './steps.js';

/** Prepared statements over `snapshots`, built once per store. */
export class SnapshotReader {
  private readonly complete: BetterSqlite3.Statement;
  private readonly all: BetterSqlite3.Statement;
  private readonly interrupted: BetterSqlite3.Statement | null;
  private readonly counts: BetterSqlite3.Statement;
  private readonly runCounts: BetterSqlite3.Statement;
  private readonly completeAfter: BetterSqlite3.Statement;
  private readonly completeUpTo: BetterSqlite3.Statement;
  private readonly marks: BetterSqlite3.Statement;
  private readonly total: BetterSqlite3.Statement;
  private readonly latest: BetterSqlite3.Statement;

  constructor(
    db: BetterSqlite3.Database,
    schema: StoreSchema,
    private readonly ids: RawRunIds,
  ) {
    const stateFilter = schema.hasState ? " AND state = 'complete'" : '';
    this.complete = db.prepare(
      `SELECT seq, step_index AS stepIndex, timestamp, messages FROM snapshots WHERE run_id = CAST(? AS TEXT)${stateFilter} ORDER BY seq ASC`,
    );
    // the cells content.ts digests (sqlite/content.ts CELLS), per run
    const state = stateCell(schema);
    this.all = db.prepare(
      `SELECT seq, step_index AS stepIndex, timestamp, ${state} AS state, typeof(messages) AS type, messages FROM snapshots WHERE run_id = CAST(? AS TEXT) ORDER BY seq ASC`,
    );
    this.interrupted = schema.hasState
      ? db.prepare(
          "SELECT seq, step_index AS stepIndex, timestamp, messages FROM snapshots WHERE run_id = CAST(? AS TEXT) AND state = 'interrupted' ORDER BY seq ASC",
        )
      : null;
    this.counts = schema.hasState
      ? db.prepare(
          "SELECT run_id AS runId, SUM(state = 'complete') AS complete, SUM(state = 'interrupted') AS interrupted, MAX(step_index) AS step FROM snapshots GROUP BY run_id",
        )
      : db.prepare(
          'SELECT run_id AS runId, COUNT(*) AS complete, 0 AS interrupted, MAX(step_index) AS step FROM snapshots GROUP BY run_id',
        );
    // countsAndSteps' columns for one run, through idx_snapshots_run
    this.runCounts = schema.hasState
      ? db.prepare(
          "SELECT COALESCE(SUM(state = 'complete'), 0) AS complete, COALESCE(SUM(state = 'interrupted'), 0) AS interrupted, MAX(step_index) AS step FROM snapshots WHERE run_id = CAST(? AS TEXT)",
        )
      : db.prepare('SELECT COUNT(*) AS complete, 0 AS interrupted, MAX(step_index) AS step FROM snapshots WHERE run_id = CAST(? AS TEXT)');
    this.completeAfter = db.prepare(
      `SELECT seq, step_index AS stepIndex, timestamp, messages FROM snapshots WHERE run_id = CAST(? AS TEXT) AND seq > ?${stateFilter} ORDER BY seq ASC`,
    );
    this.completeUpTo = db.prepare(
      `SELECT COUNT(*) AS count, COALESCE(MAX(seq), 0) AS maxSeq FROM snapshots WHERE run_id = CAST(? AS TEXT) AND seq <= ?${stateFilter}`,
    );
    // (run_id, seq) is what idx_snapshots_run covers: these never touch the message text
    this.marks = db.prepare('SELECT run_id AS runId, COUNT(*) AS count, MAX(seq) AS maxSeq FROM snapshots GROUP BY run_id');
    this.total = db.prepare('SELECT COUNT(*) AS count, COALESCE(MAX(seq), 0) AS maxSeq FROM snapshots');
    this.latest = db.prepare(
      'SELECT seq, step_index AS stepIndex, timestamp, messages FROM snapshots WHERE seq IN (SELECT MAX(seq) FROM snapshots GROUP BY run_id)',
    );
  }

  /** Complete snapshots with `seq > afterSeq`, in order: what was added since a watermark. */
  completeSnapshotsAfter(runId: string, afterSeq: number): IterableIterator<StoreSnapshot> {
    return this.completeAfter.iterate(this.ids.bind(runId), afterSeq) as IterableIterator<StoreSnapshot>;
  }

  /** Count and last seq of the run's complete snapshots up to `seq`. */
  completeUpToSeq(runId: string, seq: number): SnapshotMark {
    return this.completeUpTo.get(this.ids.bind(runId), seq) as SnapshotMark;
  }

  /** Per run: number of snapshot rows (any state) and the highest seq. */
  watermarks(): Map<string, SnapshotMark> {
    const out = new Map<string, SnapshotMark>();
    for (const r of this.marks.all() as Array<{ runId: unknown; count: number; maxSeq: number }>) {
      if (typeof r.runId === 'string') out.set(r.runId, { count: r.count, maxSeq: r.maxSeq });
    }
    return out;
  }

  totals(): SnapshotMark {
    return this.total.get() as SnapshotMark;
  }

  /** The run's `complete` snapshots in `seq` order, streamed (a run's rows can be large). */
  completeSnapshots(runId: string): IterableIterator<StoreSnapshot> {
    return this.complete.iterate(this.ids.bind(runId)) as IterableIterator<StoreSnapshot>;
  }

  /** The run's rows of every state in `seq` order, with the cells the content digest covers. */
  allSnapshots(runId: string): IterableIterator<DigestRow> {
    return this.all.iterate(this.ids.bind(runId)) as IterableIterator<DigestRow>;
  }

  latestSnapshots(): IterableIterator<StoreSnapshot> {
    return this.latest.iterate() as IterableIterator<StoreSnapshot>;
  }

  interruptedSnapshots(runId: string): IterableIterator<StoreSnapshot> {
    if (!this.interrupted) return [][Symbol.iterator]();
    return this.interrupted.iterate(this.ids.bind(runId)) as IterableIterator<StoreSnapshot>;
  }

  /** One run's entries of countsAndSteps. */
  runStats(runId: string): RunSnapshotStats {
    const r = this.runCounts.get(this.ids.bind(runId)) as { complete: number; interrupted: number; step: unknown };
    return { complete: r.complete, interrupted: r.interrupted, lastStep: stepOf(r.step) };
  }

  /** Per run, its snapshots by state and its last step (see steps.ts), in one scan of the table. */
  countsAndSteps(): { counts: Map<string, SnapshotStateCounts>; steps: Map<string, number | null> } {
    const counts = new Map<string, SnapshotStateCounts>();
    const steps = new Map<string, number | null>();
    for (const r of this.counts.all() as Array<{ runId: unknown; complete: number | null; interrupted: number | null; step: unknown }>) {
      if (typeof r.runId !== 'string') continue;
      counts.set(r.runId, { complete: r.complete ?? 0, interrupted: r.interrupted ?? 0 });
      steps.set(r.runId, stepOf(r.step));
    }
    return { counts, steps };
  }
}
