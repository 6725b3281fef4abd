import { createHash, type Hash } from 'node:crypto';
import type { Store } from '../store/open.js';

/**
 * What the store holds, digested: per run, SHA-256 over every snapshot row a replay could read (seq,
 * step, timestamp, state, and the `messages` bytes), plus digests of the `runs` and `media` tables.
 * Two stores with equal digests give the same index; any edit of any row, a same-length in-place
 * rewrite included, changes them. This reads every row, so it runs only when the store's stamp says
 * its files were written since the index last looked (sync.ts).
 */

export interface RunContent {
  /** Snapshot rows of any state, and the highest seq. */
  readonly count: number;
  readonly maxSeq: number;
  /** Digest of all the run's rows, in seq order. */
  readonly digest: string;
  /**
   * Digest of the rows with `seq <= cut`, the cut being the last seq the index saw of this run: equal
   * to the index's digest when the rows it read are untouched and everything else was appended.
   */
  readonly prefix: string;
}

export interface StoreContent {
  /** Keyed by run id (rows whose run_id is not text are kept under a key no run id can have). */
  readonly runs: ReadonlyMap<string, RunContent>;
  /** The media rows in insertion order: their count, digest, and the digest of the first `mediaCut`. */
  readonly media: RunContent;
  readonly runsTable: string;
  /** Everything above in one digest: equal means nothing the index depends on changed. */
  readonly total: string;
}

/** The digest of a run without rows. */
export const EMPTY_DIGEST = createHash('sha256').digest('base64');

/** A value as the replay receives it, unambiguously: type tag, length where it varies, bytes. */
function cell(h: Hash, v: unknown): void {
  if (v === null || v === undefined) h.update('\u0000n');
  else if (typeof v === 'number') h.update(`\u0000i${v}\u0000`);
  else if (typeof v === 'bigint') h.update(`\u0000g${v}\u0000`);
  else if (typeof v === 'string') h.update(`\u0000s${v.length}\u0000`).update(v, 'utf8');
  else if (Buffer.isBuffer(v)) h.update(`\u0000b${v.length}\u0000`).update(v);
  else h.update(`\u0000?${String(v)}\u0000`);
}

interface Running {
  readonly hash: Hash;
  readonly cut: number;
  count: number;
  maxSeq: number;
  prefix: string | null;
}

/**
 * Reads and digests every snapshot row, the media rows and the runs rows. `cuts` gives, per run, the
 * last seq the index saw (its prefix digest is taken there).
 */
export function scanStore(store: Store, cuts: ReadonlyMap<string, number>, mediaCut: number): StoreContent {
  const db = store.db;
  // the values as the replay receives them (text as JS strings: SQLite's blob copies cost more memory)
  const rows = (
    store.schema.hasState
      ? db.prepare('SELECT run_id, seq, step_index, timestamp, state, typeof(messages), messages FROM snapshots ORDER BY seq')
      : db.prepare("SELECT run_id, seq, step_index, timestamp, 'complete', typeof(messages), messages FROM snapshots ORDER BY seq")
  ).raw();
  const running = new Map<string, Running>();
  for (const [runId, seq, step, timestamp, st, type, messages] of rows.iterate() as IterableIterator<unknown[]>) {
    const key = typeof runId === 'string' ? runId : `\u0000${typeof runId}:${String(runId)}`;
    let r = running.get(key);
    if (!r) running.set(key, (r = { hash: createHash('sha256'), cut: cuts.get(key) ?? 0, count: 0, maxSeq: 0, prefix: null }));
    const s = Number(seq);
    if (r.prefix === null && s > r.cut) r.prefix = r.hash.copy().digest('base64');
    cell(r.hash, seq);
    cell(r.hash, step);
    cell(r.hash, timestamp);
    cell(r.hash, st);
    cell(r.hash, type);
    cell(r.hash, messages);
    r.count++;
    if (s > r.maxSeq) r.maxSeq = s;
  }
  const runs = new Map<string, RunContent>();
  for (const [key, r] of running) {
    const digest = r.hash.digest('base64');
    runs.set(key, { count: r.count, maxSeq: r.maxSeq, digest, prefix: r.prefix ?? digest });
  }

  let media: RunContent = { count: 0, maxSeq: 0, digest: EMPTY_DIGEST, prefix: EMPTY_DIGEST };
  if (store.schema.hasMedia) {
    const h = createHash('sha256');
    let stmt;
    let ordered = true;
    try {
      stmt = db.prepare("SELECT sha256, typeof(bytes), CASE WHEN typeof(bytes) IN ('text', 'blob') THEN CAST(bytes AS BLOB) ELSE bytes END FROM media ORDER BY rowid").raw();
    } catch {
      // a table without rowids has no insertion order: then any change counts as a rewrite
      stmt = db.prepare("SELECT sha256, typeof(bytes), CASE WHEN typeof(bytes) IN ('text', 'blob') THEN CAST(bytes AS BLOB) ELSE bytes END FROM media ORDER BY sha256").raw();
      ordered = false;
    }
    let count = 0;
    let prefix: string | null = ordered ? null : '';
    for (const row of stmt.iterate() as IterableIterator<unknown[]>) {
      if (prefix === null && count === mediaCut) prefix = h.copy().digest('base64');
      for (const v of row) cell(h, v);
      count++;
    }
    const digest = h.digest('base64');
    media = { count, maxSeq: 0, digest, prefix: prefix ?? (count === mediaCut ? digest : '') };
  }
  // the runs rows, built into one string inside SQLite (quote() keeps NULLs and separators apart)
  const runsRows = db
    .prepare(
      `SELECT group_concat(rowid || ',' || quote(run_id) || ',' || quote(conversation_id) || ',' || quote(parent_run_id) || ',' ||
         quote(agent_name) || ',' || quote(started_at) || ',' || typeof(metadata), char(10) ORDER BY rowid) FROM runs`,
    )
    .pluck()
    .get() as string | null;
  const runsTable = createHash('sha256').update(runsRows ?? '').digest('base64');

  const total = createHash('sha256').update(`${runsTable}\n${media.count}:${media.digest}\n`);
  for (const key of [...runs.keys()].sort()) {
    const r = runs.get(key)!;
    cell(total, key);
    total.update(`${r.count}:${r.maxSeq}:${r.digest}\n`);
  }
  return { runs, media, runsTable, total: total.digest('base64') };
}
