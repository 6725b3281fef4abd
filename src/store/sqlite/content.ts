import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import {
  type ContentBasis,
  EMPTY_DIGEST,
  hashCell,
  ContentDigester,
  isCounted,
  OverlaidMap,
  runBuckets,
  totalDigest,
  type RunContent,
  type RunCut,
  type StoreContent,
} from '../content.js';
import { sawValue } from './large-values.js';
import type { RunsTail } from '../run-list.js';
import { readRunsTail, type RunsTable } from './runs.js';
import { PAGE_CHANGED, type PageMap, ROW_CHANGED, readPageMap, type WalView } from './pages.js';
import { type StoreSchema, stateCell } from './schema.js';

/**
 * The texts read as their bytes. From V8's large-object size (128 KiB) on: a string that long takes pages
 * of its own, faulted afresh each time, where a shorter one lives in the young generation and goes at
 * once (read as bytes, held outside the heap until a collection, they raised a 20,000-run build's peak
 * RSS from 207 to 231 MB). Up to 16 MiB: a huge text's bytes, held beside what the build's replay makes
 * of the same row, raised a 200 MB message's build from 694 to 849 MB. octet_length reads only the
 * record's header.
 */
const AS_BYTES = { min: 128 * 1024, max: 1 << 24 } as const;

/**
 * The cells a run's digest covers, as the replay receives them, but a text `messages` of AS_BYTES's
 * sizes as its bytes (in a UTF-8 database, what CAST gives is its UTF-8): an ASCII one is digested as
 * bytes, never made a string (digestRow).
 */
const CELLS = (schema: StoreSchema, db: BetterSqlite3.Database): string =>
  `run_id, seq, step_index, timestamp, ${stateCell(schema)}, typeof(messages), ${
    utf8(db)
      ? `CASE WHEN typeof(messages) = 'text' AND octet_length(messages) BETWEEN ${AS_BYTES.min} AND ${AS_BYTES.max} THEN CAST(messages AS BLOB) ELSE messages END`
      : 'messages'
  }`;

/** Whether the database keeps its text as UTF-8 (CAST of a UTF-16 one gives UTF-16: its texts are read as strings). */
const utf8 = (db: BetterSqlite3.Database): boolean => db.pragma('encoding', { simple: true }) === 'UTF-8';

/**
 * A `messages` cell read with CELLS (its SQL type, and its value) as the digest takes it: a text read as
 * bytes stays bytes when every one is ASCII, any other is the string SQLite's reader makes of its bytes
 * (better-sqlite3 and Buffer decode UTF-8 alike, invalid bytes included); anything else as read.
 */
function digestedText(type: unknown, value: unknown): unknown {
  return type === 'text' && Buffer.isBuffer(value) && !isAscii(value) ? value.toString('utf8') : value;
}

/**
 * Adds to `d` a row read with CELLS from `seq` on (seq, step_index, timestamp, state, typeof, messages):
 * an ASCII text read as bytes by ContentDigester.addAscii, the rest by `add` (digestedText).
 */
function digestRow(d: ContentDigester, seq: number, cells: unknown[]): void {
  const raw = cells[5];
  sawValue(raw);
  const text = digestedText(cells[4], raw);
  if (cells[4] === 'text' && Buffer.isBuffer(text)) d.addAscii(seq, cells.slice(0, 5), text);
  else d.add(seq, text === raw ? cells : [...cells.slice(0, 5), text]);
}

/** A table as SQLite reads it: its root page and its definition (which columns a row's values are, in which order they sort). */
interface TableRoot {
  readonly root: number;
  readonly sql: string;
}

/** The table `name` (media, runs), when it is a table (not a view) whose b-tree the page map can walk. */
function tableOf(db: BetterSqlite3.Database, name: 'media' | 'runs'): TableRoot | null {
  // the name SQLite resolves `FROM <name>` to: names match without regard to ASCII case
  const r = db.prepare("SELECT rootpage, sql FROM sqlite_schema WHERE type = 'table' AND lower(name) = ?").get(name) as
    | { rootpage: unknown; sql: unknown }
    | undefined;
  return typeof r?.rootpage === 'number' && typeof r.sql === 'string' ? { root: r.rootpage, sql: r.sql } : null;
}

/** The fingerprint of a table's walked pages with its definition: the same pages read as other columns are other values. */
const tableFingerprint = (table: TableRoot | null, walked: string | null | undefined): string | null =>
  table !== null && walked != null ? createHash('sha256').update(`${table.sql}\n${walked}`).digest('base64') : null;

/** The page map of the file SQLite reads, or null when its layout is not the one readPageMap knows. */
function pageMapOf(
  db: BetterSqlite3.Database,
  path: string,
  wal: WalView | null,
  basis: ContentBasis,
  media: TableRoot | null,
  runs: TableRoot | null,
): PageMap | null {
  const root = db.prepare("SELECT rootpage FROM sqlite_schema WHERE type = 'table' AND name = 'snapshots'").pluck().get();
  const cols = db.prepare("SELECT name, type, pk FROM pragma_table_info('snapshots') ORDER BY cid").all() as Array<{
    name: string;
    type: string;
    pk: number;
  }>;
  // seq must be the rowid (INTEGER PRIMARY KEY of a rowid table): then the records hold NULL in its place
  const pkIndex = db.prepare("SELECT 1 FROM pragma_index_list('snapshots') WHERE origin = 'pk'").get();
  const seq = cols.find((c) => c.name === 'seq');
  const runId = cols.findIndex((c) => c.name === 'run_id');
  if (typeof root !== 'number' || pkIndex !== undefined || seq?.pk !== 1 || seq.type.toUpperCase() !== 'INTEGER' || runId < 0) return null;
  if (cols.filter((c) => c.pk > 0).length !== 1) return null;
  return readPageMap(
    path,
    root,
    runId,
    basis.seed,
    basis.pages !== null ? { digests: basis.pages, tree: basis.tree } : null,
    undefined,
    media?.root ?? null,
    wal,
    basis.filePass ?? null,
    runs?.root ?? null,
    basis.pages !== null ? (basis.walks ?? null) : null,
  );
}

/**
 * The runs' digests when the previous page map vouches for most of them: a run whose pages all have
 * their previous digests (and role), or none of whose rows changed (PageRuns), with the count and
 * highest seq the index recorded, keeps its recorded digest; a run whose rows were only appended to
 * (its first changed row past those recorded) has its digest taken on from the recorded one over the
 * new rows (ContentDigester.resume); every other run is read and digested. Null when the map and SQLite disagree.
 */
function runsSince(
  db: BetterSqlite3.Database,
  schema: StoreSchema,
  map: PageMap,
  basis: ContentBasis,
  cuts: ReadonlyMap<string, RunCut>,
): { runs: ReadonlyMap<string, RunContent>; rowsDigested: number } | null {
  const total = db.prepare('SELECT COUNT(*) FROM snapshots').pluck().get() as number;
  let mapped = 0;
  const { ids, counts, maxSeqs, changed, firstChanged } = map.runs;
  for (let i = 0; i < counts.length; i++) mapped += counts[i]!;
  if (total !== mapped) return null;
  const rowsOf = db.prepare(`SELECT ${CELLS(schema, db)} FROM snapshots WHERE run_id = ? ORDER BY seq`).raw();
  const rowsAfter = db.prepare(`SELECT ${CELLS(schema, db)} FROM snapshots WHERE run_id = ? AND seq > ? ORDER BY seq`).raw();
  const rowAt = db.prepare(`SELECT ${CELLS(schema, db)} FROM snapshots WHERE run_id = ? AND seq = ?`).raw();
  // the recorded entries as they are, with those that changed put in their place and those gone taken
  // out (OverlaidMap): no copy of the table, no entry made per run held
  const changes = new Map<string, RunContent>();
  let kept = 0;
  let rowsDigested = 0;
  // each run's recorded count and last seq, its entry made only for a run that is read again
  const counted = isCounted(basis.runs) ? basis.runs : null;
  const marks = new Float64Array(2);
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    let held: boolean;
    if (counted !== null) held = counted.marksInto(id, marks);
    else {
      const entry = basis.runs.get(id);
      held = entry !== undefined;
      if (held) {
        marks[0] = entry!.count;
        marks[1] = entry!.maxSeq;
      }
    }
    if (held) kept++;
    if (held && marks[0] === counts[i] && marks[1] === maxSeqs[i] && !(changed[i]! & ROW_CHANGED)) continue;
    const known = held ? basis.runs.get(id) : undefined;
    const cut = cuts.get(id)?.maxSeq ?? 0;
    const appended =
      known !== undefined &&
      changed[i]! & PAGE_CHANGED &&
      known.maxSeq === cut &&
      maxSeqs[i]! > cut &&
      (!(changed[i]! & ROW_CHANGED) || firstChanged[i]! > cut);
    if (appended) {
      // (the last recorded row gone: no digest to go on from, the run is read whole)
      const last = rowAt.get(id, cut) as unknown[] | undefined;
      // (a text as digestRow passed it on; nothing is shared with a value that is not one)
      const d = last !== undefined ? ContentDigester.resume(known, last[5] === 'text' ? digestedText('text', last[6]) : null) : null;
      const c = d && digestRows(d, rowsAfter.iterate(id, cut) as IterableIterator<unknown[]>);
      // (rows gone from before the cut leave the count short: then the run is read whole)
      if (c !== null && c.count === counts[i] && c.maxSeq === maxSeqs[i]) {
        rowsDigested += c.count - known.count;
        changes.set(id, c);
        continue;
      }
    }
    const c = digestRows(new ContentDigester(cut, true), rowsOf.iterate(id) as IterableIterator<unknown[]>);
    if (c.count !== counts[i] || c.maxSeq !== maxSeqs[i]) return null;
    rowsDigested += c.count;
    changes.set(id, c);
  }
  // runs the index held whose rows are all gone
  const gone = new Set<string>();
  if (kept !== basis.runs.size) {
    const present = new Set(ids);
    for (const id of basis.runs.keys()) if (!present.has(id)) gone.add(id);
  }
  const runs = changes.size === 0 && gone.size === 0 ? basis.runs : new OverlaidMap(basis.runs, changes, gone);
  return { runs, rowsDigested };
}

/** `d` with `rows` (read with CELLS) added, finished. */
function digestRows(d: ContentDigester, rows: IterableIterator<unknown[]>): RunContent {
  for (const [, seq, ...rest] of rows) digestRow(d, Number(seq), [seq, ...rest]);
  return d.finish();
}

/**
 * Reads and digests every snapshot row and the media rows: with the runs rows' digest `runsTable`
 * (runs.ts readRunsTable, read when called), the content of the store (see store/content.ts). `cuts`
 * gives, per run, the last seq the index saw (its prefix digest is taken there); `mediaCut` the media
 * rows it saw. With `pages` (the file SQLite reads, when it reads it without locks, or with `wal` as the
 * read transaction's snapshot of a live writer's log shows it) its page map is taken too, and with a
 * basis holding the previous map only the runs whose pages changed are read, and neither the media
 * rows nor the runs rows at all while their pages are those the basis names (an agent's step changes
 * neither: at 50,000 runs the runs table took ~170 ms to read); a new run changes the runs table's last
 * pages only, and its rows are read from the last block of the run list's digest that its first pages
 * still cover (runsTailOf: ~160 rows, not 50,000).
 * `rowsElsewhere` (a build, whose replay digests every run: ContentBasis.rowsElsewhere): no snapshot row is read.
 */
export function sqliteContent(
  db: BetterSqlite3.Database,
  schema: StoreSchema,
  cuts: ReadonlyMap<string, RunCut>,
  mediaCut: number,
  runsTable: () => Pick<RunsTable, 'digest' | 'blocks'>,
  pages?: { readonly path: string; readonly basis: ContentBasis; readonly wal?: WalView | null },
  rowsElsewhere = false,
): StoreContent {
  const table = pages && schema.hasMedia ? tableOf(db, 'media') : null;
  const runsRoot = pages ? tableOf(db, 'runs') : null;
  const map = pages ? pageMapOf(db, pages.path, pages.wal ?? null, pages.basis, table, runsRoot) : null;
  // the map's runs say which of their pages changed when it was taken with the previous digests
  const since = map && pages?.basis.pages ? runsSince(db, schema, map, pages.basis, cuts) : null;
  // a build digests each run from the rows its replay reads (content.ts completeDigested)
  const elsewhere = rowsElsewhere && since === null;
  const { runs, rowsDigested } =
    since ?? (elsewhere ? { runs: new Map<string, RunContent>(), rowsDigested: 0 } : allRuns(db, schema, cuts));
  const mediaPages = tableFingerprint(table, map?.media?.walked);
  const runsPages = tableFingerprint(runsRoot, map?.runsTable?.walked);
  // the pages the recorded digest was read from, byte for byte: the same rows in the same order
  const heldRuns = runsPages !== null && pages?.basis.runsTable?.pages === runsPages ? pages.basis.runsTable : null;
  // else its first leaves may still hold the rows they held: then only the rows after are read
  const tail = heldRuns === null && map !== null && pages !== undefined ? runsTailOf(db, map, pages.basis) : null;
  const read = heldRuns === null && tail === null ? runsTable() : null;
  const runsDigest = heldRuns?.digest ?? tail?.digests.all ?? read!.digest;
  const runsBlocks = heldRuns !== null ? (heldRuns.blocks ?? null) : tail !== null ? tail.digests.blocks : read!.blocks;
  const known = pages?.basis.media;
  let media: RunContent = { count: 0, maxSeq: 0, digest: EMPTY_DIGEST, prefix: EMPTY_DIGEST };
  let mediaDigested = 0;
  if (mediaPages !== null && known?.pages === mediaPages && known.count === mediaCut) {
    // the pages the recorded digest was read from, byte for byte: the same rows (all of them were seen: the prefix is the whole)
    media = { count: known.count, maxSeq: 0, digest: known.digest, prefix: known.digest };
  } else if (schema.hasMedia) {
    media = mediaContent(db, mediaCut);
    mediaDigested = media.count;
  }
  // the buckets the index kept of its recorded entries: only those of the runs read again are hashed again
  const kept = pages?.basis.runBuckets;
  const buckets = runBuckets(runs, kept ? { base: pages!.basis.runs, buckets: kept } : null);
  return {
    runs,
    media,
    runsTable: runsDigest,
    runBuckets: buckets,
    digest: totalDigest(runs, media, runsDigest, buckets),
    rowsDigested,
    mediaDigested,
    pages: map?.digests ?? null,
    tree: map?.tree ?? null,
    runsElsewhere: elsewhere,
    mediaPages,
    runsPages,
    runsBlocks,
    runsTableHeld: heldRuns !== null,
    ...(tail !== null ? { runsTail: tail } : {}),
    walks: map !== null ? { media: map.media, runs: map.runsTable } : null,
    // every row read (allRuns), each run's states and steps counted with it
    rowStats: since === null && !elsewhere,
    pagesHashed: map?.pagesHashed ?? 0,
    // a pass taken to be kept, or none to keep; nothing to say when the kept one was taken (or no map made)
    ...(map !== null && map.pagesHashed > 0 ? { filePass: map.filePass } : {}),
  };
}

/**
 * The runs table read from where its pages stop vouching for its rows (runs.ts readRunsTail), when the
 * map walked it again and found first leaves that hold what they held, and the index kept the blocks'
 * digests of the table then and says how many runs it placed; else null (the whole table is read).
 */
function runsTailOf(db: BetterSqlite3.Database, map: PageMap, basis: ContentBasis): RunsTail | null {
  const leaves = map.runsLeaves;
  const blocks = basis.runsTable?.blocks;
  if (leaves === null || blocks === undefined || basis.listed === undefined || basis.listed === 0) return null;
  return readRunsTail(db, { cells: leaves.cells, lastRowids: leaves.lastRowids, blocks, settled: basis.listed });
}

/** Reads and digests every media row, in insertion order, taking the prefix digest after the first `mediaCut`. */
function mediaContent(db: BetterSqlite3.Database, mediaCut: number): RunContent {
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
  return { count, maxSeq: 0, digest, prefix: prefix ?? (count === mediaCut ? digest : '') };
}

function allRuns(
  db: BetterSqlite3.Database,
  schema: StoreSchema,
  cuts: ReadonlyMap<string, RunCut>,
): { runs: Map<string, RunContent>; rowsDigested: number } {
  // a run's rows together (through idx_snapshots_run), so that its digester holds a previous text only
  // while they come (ContentDigester.release), not one text per run until the end
  const rows = db.prepare(`SELECT ${CELLS(schema, db)} FROM snapshots ORDER BY run_id, seq`).raw();
  const running = new Map<string, ContentDigester>();
  let rowsDigested = 0;
  let current: ContentDigester | undefined;
  for (const [runId, seq, step, timestamp, st, type, messages] of rows.iterate() as IterableIterator<unknown[]>) {
    const key = typeof runId === 'string' ? runId : `\u0000${typeof runId}:${String(runId)}`;
    let r = running.get(key);
    if (!r) running.set(key, (r = new ContentDigester(cuts.get(key)?.maxSeq ?? 0, true)));
    if (r !== current) current?.release();
    current = r;
    digestRow(r, Number(seq), [seq, step, timestamp, st, type, messages]);
    rowsDigested++;
  }
  const runs = new Map<string, RunContent>();
  for (const [key, r] of running) runs.set(key, r.finish());
  return { runs, rowsDigested };
}
