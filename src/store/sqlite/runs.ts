import type BetterSqlite3 from 'better-sqlite3';
import { StoreError } from '../errors.js';
import type { StoreRun } from '../reader.js';

const optionalText = (v: unknown): v is string | null => v === null || typeof v === 'string';

/** All runs in corpus order: `started_at` as TEXT (like SQLite in the reference), ties by rowid. */
export function readRuns(db: BetterSqlite3.Database, label: string): StoreRun[] {
  const rows = db
    .prepare(
      'SELECT rowid AS rowid, run_id, conversation_id, parent_run_id, agent_name, metadata, started_at FROM runs ORDER BY started_at ASC, rowid ASC',
    )
    .all() as Array<Record<string, unknown>>;
  return rows.map((r) => {
    if (
      typeof r.run_id !== 'string' ||
      typeof r.started_at !== 'string' ||
      typeof r.metadata !== 'string' || // not read, but the reference rejects a non-text metadata column too
      !optionalText(r.conversation_id) ||
      !optionalText(r.parent_run_id) ||
      !optionalText(r.agent_name)
    ) {
      // The reference fails the whole call on such a row ('run row has wrong types').
      throw new StoreError(`${label}: runs row ${String(r.rowid)} has wrong types (run_id ${JSON.stringify(String(r.run_id))})`);
    }
    return {
      runId: r.run_id,
      conversationId: r.conversation_id,
      parentRunId: r.parent_run_id,
      agentName: r.agent_name,
      startedAt: r.started_at,
      rowid: Number(r.rowid),
    };
  });
}

/**
 * Every runs row as one string built inside SQLite (quote() keeps NULLs and separators apart; column
 * types included, so a row that turned malformed shows): what the store's digests take of the runs.
 */
export function runsRowsText(db: BetterSqlite3.Database): string {
  const text = db
    .prepare(
      `SELECT group_concat(rowid || ',' || quote(run_id) || ',' || quote(conversation_id) || ',' || quote(parent_run_id) || ',' ||
         quote(agent_name) || ',' || quote(started_at) || ',' || typeof(metadata), char(10) ORDER BY rowid) FROM runs`,
    )
    .pluck()
    .get() as string | null;
  return text ?? '';
}
