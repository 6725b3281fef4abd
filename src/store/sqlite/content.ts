import { createHash } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import { EMPTY_DIGEST, hashCell, ContentDigester, totalDigest, type RunContent, type StoreContent } from '../content.js';
import { runsRowsText } from './runs.js';
import type { StoreSchema } from './schema.js';

/**
 * Reads and digests every snapshot row, the media rows and the runs rows (see store/content.ts). `cuts`
 * gives, per run, the last seq the index saw (its prefix digest is taken there); `mediaCut` the media
 * rows it saw.
 */
export function sqliteContent(
  db: BetterSqlite3.Database,
  schema: StoreSchema,
  cuts: ReadonlyMap<string, number>,
  mediaCut: number,
): StoreContent {
  // the values as the replay receives them (text as JS strings: SQLite's blob copies cost more memory)
  const rows = (
    schema.hasState
      ? db.prepare('SELECT run_id, seq, step_index, timestamp, state, typeof(messages), messages FROM snapshots ORDER BY seq')
      : db.prepare("SELECT run_id, seq, step_index, timestamp, 'complete', typeof(messages), messages FROM snapshots ORDER BY seq")
  ).raw();
  const running = new Map<string, ContentDigester>();
  for (const [runId, seq, step, timestamp, st, type, messages] of rows.iterate() as IterableIterator<unknown[]>) {
    const key = typeof runId === 'string' ? runId : `\u0000${typeof runId}:${String(runId)}`;
    let r = running.get(key);
    if (!r) running.set(key, (r = new ContentDigester(cuts.get(key) ?? 0)));
    r.add(Number(seq), [seq, step, timestamp, st, type, messages]);
  }
  const runs = new Map<string, RunContent>();
  for (const [key, r] of running) runs.set(key, r.finish());

  let media: RunContent = { count: 0, maxSeq: 0, digest: EMPTY_DIGEST, prefix: EMPTY_DIGEST };
  if (schema.hasMedia) {
    const h = createHash('sha256');
    let stmt: BetterSqlite3.Statement;
    let ordered = true;
    try {
      stmt = db
        .prepare(
          "SELECT sha256, typeof(bytes), CASE WHEN typeof(bytes) IN ('text', 'blob') THEN CAST(bytes AS BLOB) ELSE bytes END FROM media ORDER BY rowid",
        )
        .raw();
    } catch {
      // a table without rowids has no insertion order: then any change counts as a rewrite
      stmt = db
        .prepare(
          "SELECT sha256, typeof(bytes), CASE WHEN typeof(bytes) IN ('text', 'blob') THEN CAST(bytes AS BLOB) ELSE bytes END FROM media ORDER BY sha256",
        )
        .raw();
      ordered = false;
    }
    let count = 0;
    let prefix: string | null = ordered ? null : '';
    for (const row of stmt.iterate() as IterableIterator<unknown[]>) {
      if (prefix === null && count === mediaCut) prefix = h.copy().digest('base64');
      for (const v of row) hashCell(h, v);
      count++;
    }
    const digest = h.digest('base64');
    media = { count, maxSeq: 0, digest, prefix: prefix ?? (count === mediaCut ? digest : '') };
  }
  const runsTable = createHash('sha256').update(runsRowsText(db)).digest('base64');
  return { runs, media, runsTable, total: totalDigest(runs, media, runsTable) };
}
