import type BetterSqlite3 from 'better-sqlite3';
import { StoreError } from '../errors.js';

export interface StoreSchema {
  /** `snapshots.state` exists; without it every snapshot is `complete` (pre-migration stores). */
  readonly hasState: boolean;
  /** A `media` table with `sha256` and `bytes` exists (externalized media can be restored). */
  readonly hasMedia: boolean;
}

/** The snapshot's state as a result column: `state`, or the literal 'complete' where the table has none. */
export const stateCell = (schema: StoreSchema): string => (schema.hasState ? 'state' : "'complete'");

const RUN_COLUMNS = ['run_id', 'conversation_id', 'parent_run_id', 'agent_name', 'metadata', 'started_at'];
const SNAPSHOT_COLUMNS = ['seq', 'run_id', 'step_index', 'timestamp', 'messages'];

function columns(db: BetterSqlite3.Database, table: string): Set<string> {
  // PRAGMA arguments cannot be bound; `table` is one of our constants, never user input.
  const rows = db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>;
  return new Set(rows.map((r) => r.name));
}

export function probeSchema(db: BetterSqlite3.Database, label: string): StoreSchema {
  const runs = columns(db, 'runs');
  const snapshots = columns(db, 'snapshots');
  if (runs.size === 0 || snapshots.size === 0) {
    const missing = [runs.size === 0 ? 'runs' : '', snapshots.size === 0 ? 'snapshots' : ''].filter(Boolean);
    throw new StoreError(`${label}: not a step store (no ${missing.join(' or ')} table)`);
  }
  const missingRun = RUN_COLUMNS.filter((c) => !runs.has(c));
  if (missingRun.length) throw new StoreError(`${label}: runs table lacks column(s) ${missingRun.join(', ')}`);
  const missingSnap = SNAPSHOT_COLUMNS.filter((c) => !snapshots.has(c));
  if (missingSnap.length) throw new StoreError(`${label}: snapshots table lacks column(s) ${missingSnap.join(', ')}`);
  const media = columns(db, 'media');
  return { hasState: snapshots.has('state'), hasMedia: media.has('sha256') && media.has('bytes') };
}
