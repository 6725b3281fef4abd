import type { Store } from './open.js';
import { StoreError } from '../errors.js';

/** One `runs` row, as search needs it. `rowid` breaks `started_at` ties deterministically. */
export interface RunRecord {
  readonly runId: string;
  readonly conversationId: string | null;
  readonly parentRunId: string | null;
  readonly agentName: string | null;
  readonly startedAt: string;
  readonly rowid: number;
}

const optionalText = (v: unknown): v is string | null => v === null || typeof v === 'string';

/** All runs in corpus order: `started_at` as TEXT (like SQLite in the reference), ties by rowid. */
export function listRuns(store: Store): RunRecord[] {
  const rows = store.db
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
      throw new StoreError(`${store.path}: runs row ${String(r.rowid)} has wrong types (run_id ${JSON.stringify(String(r.run_id))})`);
    }
    return runRecord({ ...r, rowid: Number(r.rowid) } as RunColumns);
  });
}

/** The columns of a runs row that a run record holds (the store's and the index's rows share them). */
export interface RunColumns {
  run_id: string;
  conversation_id: string | null;
  parent_run_id: string | null;
  agent_name: string | null;
  started_at: string;
  rowid: number;
}

export function runRecord(r: RunColumns): RunRecord {
  return {
    runId: r.run_id,
    conversationId: r.conversation_id,
    parentRunId: r.parent_run_id,
    agentName: r.agent_name,
    startedAt: r.started_at,
    rowid: r.rowid,
  };
}
