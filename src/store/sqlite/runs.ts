import { createHash } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import { BatchedHash } from '../content.js';
import { StoreError } from '../errors.js';
import type { StoreRun } from '../reader.js';
import { BLOCK_DIGEST_BYTES, RUN_LIST_BLOCK, type RunListDigests, RunListHash, type RunsTail } from '../run-list.js';

const optionalText = (v: unknown): v is string | null => v === null || typeof v === 'string';

/** What a run list takes of a runs row (metadata is not read, its type is: a harness's may be large, and no listing shows it). */
const RUN_COLUMNS = 'rowid, run_id, conversation_id, parent_run_id, agent_name, typeof(metadata), started_at';

/**
 * What the store's digests take of a runs row when some row is not a run (runOf refuses it) or its
 * rowid is past 2^53: one line built inside SQLite (quote() keeps NULLs and separators apart; column
 * types included, so a row that turned malformed shows).
 */
const ROW_LINE = `rowid || ',' || quote(run_id) || ',' || quote(conversation_id) || ',' || quote(parent_run_id) || ',' ||
  quote(agent_name) || ',' || quote(started_at) || ',' || typeof(metadata)`;

/** What the SQL form of the runs digest hashes first: never the text the JSON form (a run list's: RUN_LIST_HEAD) hashes. */
const RUNS_SQL = 'runs/sql\n';

/** The run a row of RUN_COLUMNS holds; null when a value is of a type the reference rejects ('run row has wrong types'). */
function runOf(row: readonly unknown[]): StoreRun | null {
  const runId = row[1];
  const conversationId = row[2];
  const parentRunId = row[3];
  const agentName = row[4];
  const startedAt = row[6];
  if (
    typeof runId !== 'string' ||
    typeof startedAt !== 'string' ||
    row[5] !== 'text' || // typeof(metadata): the reference rejects a non-text metadata column too
    !optionalText(conversationId) ||
    !optionalText(parentRunId) ||
    !optionalText(agentName)
  )
    return null;
  return { runId, conversationId, parentRunId, agentName, startedAt, rowid: Number(row[0]) };
}

/** All runs in corpus order: `started_at` as TEXT (like SQLite in the reference), ties by rowid. */
export function readRuns(db: BetterSqlite3.Database, label: string): StoreRun[] {
  // rows as arrays: no object per row that is only read once (a listing of 20,000 runs reads them all)
  const rows = db.prepare(`SELECT ${RUN_COLUMNS} FROM runs ORDER BY started_at ASC, rowid ASC`).raw().all() as unknown[][];
  const runs: StoreRun[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const run = runOf(rows[i]!);
    // the reference fails the whole call on such a row
    if (run === null)
      throw new StoreError(`${label}: runs row ${String(rows[i]![0])} has wrong types (run_id ${JSON.stringify(String(rows[i]![1]))})`);
    runs[i] = run;
  }
  return runs;
}

/**
 * A started_at whose UTF-16 order is its UTF-8 byte order (SQLite's BINARY order): no code unit from
 * U+D800 on (a surrogate, half of a code point above U+FFFF, sorts before U+E000–U+FFFF in UTF-16 and
 * after them in UTF-8; U+FFFD may stand for bytes that were not UTF-8, which SQLite orders as they are).
 */
const plainTime = (v: string): boolean => !/[\uD800-\uFFFF]/.test(v);

/** Corpus order: started_at, then rowid (for started_at that plainTime accepts). */
const corpusOrder = (a: StoreRun, b: StoreRun): number =>
  a.startedAt === b.startedAt ? a.rowid - b.rowid : a.startedAt < b.startedAt ? -1 : 1;

/** The runs table as a listing and the content digest read it, from one scan (readRunsTable). */
export interface RunsTable {
  /** readRuns' answer (its StoreError for a row of wrong types included). */
  runs(): StoreRun[];
  /** The digest of every row in rowid order (readRunsTable says of what). */
  readonly digest: string;
  /**
   * The digests of runs() (store/run-list.ts), of its first `cut` runs and of all, when the scan took
   * them: its rows came in corpus order, and it was given that cut; else null.
   */
  listDigests(cut: number): RunListDigests | null;
  /** The full blocks' digests of `digest` (store/run-list.ts), when its rows are a run list in corpus order (listDigests gives them); else null. */
  readonly blocks: Buffer | null;
}

/**
 * The runs table's digest and its run list, from one scan in rowid order. The digest is a run list's
 * (store/run-list.ts) of the rows in rowid order: the JSON array of each row's rowid and the run's texts
 * (what a run list holds of it; its metadata is text, as runOf requires). Where some row is not a run, or
 * has a rowid past 2^53 (not a safe JavaScript number), it is RUNS_SQL and every row's ROW_LINE, joined by
 * newlines, read in a scan of its own. The lines are hashed as they come, never built into one text.
 * Built in JavaScript from the values the list reads anyway, not by SQLite beside them: quote() ends a
 * text at a NUL, which JSON keeps (an edit after a NUL went unseen). The scan alone is quicker too (at
 * 50,000 runs, cold, 185–195 ms against 245–300), though no gain showed inside a whole update.
 * The list is sorted here when the rows are not in corpus order already (the harness inserts runs as
 * they start); it is readRuns' own (its error too) when a row is of wrong types or JavaScript could
 * order it otherwise than SQLite: a collation declared in the table, or a started_at plainTime refuses.
 * (Rowids past 2^53 read as numbers keep their order or become equal, and equal ones keep the scan's
 * order: the sort is stable.) Rows already in corpus order are the list: its digests are then the
 * scan's, the first `cut` rows' taken on the way (at 50,000 runs a second pass over the list took
 * 20–33 ms of an update after one appended run).
 */
export function readRunsTable(db: BetterSqlite3.Database, label: string, cut: number | null = null): RunsTable {
  // ORDER BY started_at follows the column's collation: only the default (BINARY) is JavaScript's
  let ordered = orderedAsJs(db);
  let sorted = true;
  const runs: StoreRun[] = [];
  const h = new RunListHash(cut);
  const none = (): null => null;
  for (const row of db.prepare(`SELECT ${RUN_COLUMNS} FROM runs ORDER BY rowid`).raw().iterate() as IterableIterator<unknown[]>) {
    const run = runOf(row);
    if (run === null || !Number.isSafeInteger(run.rowid))
      return { runs: () => readRuns(db, label), digest: sqlDigest(db), listDigests: none, blocks: null };
    h.addRun(run);
    if (!ordered) continue;
    if (!plainTime(run.startedAt)) {
      ordered = false;
      runs.length = 0;
      continue;
    }
    if (sorted && runs.length > 0 && corpusOrder(runs[runs.length - 1]!, run) > 0) sorted = false;
    runs.push(run);
  }
  const list = h.finish();
  const digest = list.all;
  if (!ordered) return { runs: () => readRuns(db, label), digest, listDigests: none, blocks: null };
  if (!sorted) {
    runs.sort(corpusOrder);
    return { runs: () => runs.slice(), digest, listDigests: none, blocks: null };
  }
  return {
    runs: () => runs.slice(),
    digest,
    listDigests: (n) => (n === cut ? list : null),
    blocks: list.blocks,
  };
}

/** Whether ORDER BY started_at orders the runs table as JavaScript does (no collation declared: BINARY). */
function orderedAsJs(db: BetterSqlite3.Database): boolean {
  const sql = db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND lower(name) = 'runs'").pluck().get();
  return typeof sql === 'string' && !/collate/i.test(sql);
}

/** What the page map and the index kept vouch for (readRunsTail). */
export interface RunsTailBasis {
  /** The table's first leaves that hold the rows they held when `blocks` was taken (pages.ts LeavesHeld): per leaf its rows and last rowid. */
  readonly cells: Uint32Array;
  readonly lastRowids: Float64Array;
  /** The full blocks' digests of the table then, a run list in corpus order (RunsTable.blocks). */
  readonly blocks: Uint8Array;
  readonly settled: number;
}

/**
 * The runs table's digest and the run list past the first `settled` runs, reading only the rows from the
 * last full block its held leaves cover (at most RUN_LIST_BLOCK rows, and a leaf's, before the first
 * that may have changed): the rows before are those the kept blocks were taken of. Null where
 * readRunsTable must decide (it gives the digest's other forms and readRuns' errors): a row read that is
 * not a run, a rowid past 2^53, an order JavaScript could get wrong, rows not in corpus order, or a
 * leaf's rowid that is not one. The prefix digest says whether the first `settled` runs are the list the
 * index placed; the caller compares it.
 */
export function readRunsTail(db: BetterSqlite3.Database, basis: RunsTailBasis): RunsTail | null {
  const { cells, lastRowids, blocks, settled } = basis;
  if (!orderedAsJs(db)) return null;
  let heldRows = 0;
  for (const c of cells) heldRows += c;
  const kept = Math.min(Math.floor(Math.min(heldRows, settled) / RUN_LIST_BLOCK), Math.floor(blocks.length / BLOCK_DIGEST_BYTES));
  const from = kept * RUN_LIST_BLOCK;
  // the leaf holding the row before `from` (read again: the order is checked from it), and the rows before that leaf
  let leaf = 0;
  let before = 0;
  if (from > 0) while (before + cells[leaf]! < from) before += cells[leaf++]!;
  const after = leaf > 0 ? lastRowids[leaf - 1]! : null;
  if (after !== null && !Number.isSafeInteger(after)) return null;
  const rows = (
    after === null
      ? db.prepare(`SELECT ${RUN_COLUMNS} FROM runs ORDER BY rowid`).raw().iterate()
      : db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE rowid > ? ORDER BY rowid`).raw().iterate(after)
  ) as IterableIterator<unknown[]>;
  const h = new RunListHash(settled, blocks.subarray(0, kept * BLOCK_DIGEST_BYTES));
  const runs: StoreRun[] = [];
  let previous: StoreRun | null = null;
  let at = before;
  for (const row of rows) {
    const run = runOf(row);
    if (run === null || !Number.isSafeInteger(run.rowid) || !plainTime(run.startedAt)) return null;
    if (previous !== null && corpusOrder(previous, run) > 0) return null;
    previous = run;
    if (at++ < from) continue;
    h.addRun(run);
    if (at > settled) runs.push(run);
  }
  return { settled, runs, digests: h.finish(), rowsRead: at - before };
}

/** The digest's form for a table of rows that are not all runs (readRunsTable). */
function sqlDigest(db: BetterSqlite3.Database): string {
  const h = new BatchedHash(createHash('sha256'));
  h.add(RUNS_SQL);
  let first = true;
  for (const line of db.prepare(`SELECT ${ROW_LINE} FROM runs ORDER BY rowid`).pluck().iterate() as IterableIterator<string>) {
    h.add(first ? line : `\n${line}`);
    first = false;
  }
  return h.flush().digest('base64');
}
