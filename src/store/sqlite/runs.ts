import { createHash } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import { BatchedHash } from '../content.js';
import { StoreError } from '../errors.js';
import type { StoreRun } from '../reader.js';

const optionalText = (v: unknown): v is string | null => v === null || typeof v === 'string';

/** All runs in corpus order: `started_at` as TEXT (like SQLite in the reference), ties by rowid. */
export function readRuns(db: BetterSqlite3.Database, label: string): StoreRun[] {
  // rows as arrays: no object per row that is only read once (a listing of 20,000 runs reads them all)
  const rows = db
    .prepare(
      'SELECT rowid, run_id, conversation_id, parent_run_id, agent_name, typeof(metadata), started_at FROM runs ORDER BY started_at ASC, rowid ASC',
    )
    .raw()
    .all() as unknown[][];
  const runs: StoreRun[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    // metadata is not read (its type is: a harness's metadata may be large, and no listing shows it)
    const [rowid, runId, conversationId, parentRunId, agentName, metadataType, startedAt] = rows[i]!;
    if (
      typeof runId !== 'string' ||
      typeof startedAt !== 'string' ||
      metadataType !== 'text' || // the reference rejects a non-text metadata column too
      !optionalText(conversationId) ||
      !optionalText(parentRunId) ||
      !optionalText(agentName)
    ) {
      // The reference fails the whole call on such a row ('run row has wrong types').
      throw new StoreError(`${label}: runs row ${String(rowid)} has wrong types (run_id ${JSON.stringify(String(runId))})`);
    }
    runs[i] = { runId, conversationId, parentRunId, agentName, startedAt, rowid: Number(rowid) };
  }
  return runs;
}

/**
 * The SHA-256 (base64) of every runs row as one text, each row built inside SQLite (quote() keeps NULLs
 * and separators apart; column types included, so a row that turned malformed shows), rows in rowid
 * order joined by newlines: what the store's digests take of the runs. Hashed as the rows come, not
 * built into one string first (at 50k runs that string, SQLite's copy of it and its UTF-8 for the hash
 * touched ~16 MB of fresh memory: ~4,000 page faults).
 */
export function runsTableDigest(db: BetterSqlite3.Database): string {
  const rows = db.prepare(
    `SELECT rowid || ',' || quote(run_id) || ',' || quote(conversation_id) || ',' || quote(parent_run_id) || ',' ||
       quote(agent_name) || ',' || quote(started_at) || ',' || typeof(metadata) FROM runs ORDER BY rowid`,
  );
  const h = new BatchedHash(createHash('sha256'));
  let first = true;
  for (const line of rows.pluck().iterate() as IterableIterator<string>) {
    h.add(first ? line : `\n${line}`);
    first = false;
  }
  return h.flush().digest('base64');
}
