import { hash } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import { runsRowsText } from './runs.js';
import type { StoreSchema } from './schema.js';
import type { SnapshotReader } from './snapshots.js';

/**
 * Cheap identity of the store's searchable state: snapshot count and last seq (covered by the
 * primary key and idx_snapshots_run), media count, and a digest of the runs rows (column types
 * included, so a row that turned malformed is noticed). Any insert, prune or rewrite changes it;
 * AUTOINCREMENT never reuses a seq.
 */
export function storeFingerprint(db: BetterSqlite3.Database, schema: StoreSchema, snapshots: SnapshotReader): string {
  const t = snapshots.totals();
  const media = schema.hasMedia ? (db.prepare('SELECT COUNT(*) FROM media').pluck().get() as number) : -1;
  return `${t.count}:${t.maxSeq}:${media}:${hash('sha1', runsRowsText(db), 'base64')}`;
}
