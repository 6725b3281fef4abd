import { crc32 } from 'node:zlib';
import {
  ChunkedWords,
  type FilePass,
  type KeptFilePass,
  type KeptTree,
  type KnownMedia,
  type KnownRunsTable,
  type KnownRunContent,
  type CountedRuns,
  collected,
  type KeptWalks,
  type PageTree,
  type TableWalk,
  type RunContent,
  OverlaidMap,
  recordedContent,
  BUCKET_BYTES,
  DIGEST_BUCKETS,
} from '../store/content.js';
import { BLOCK_DIGEST_BYTES } from '../store/run-list.js';
import { rowSum, verifyRow, type RowValue } from './checksum.js';
import { IndexDamagedError } from './errors.js';
import { KeyFilter } from './key-filter.js';
import type { IndexDb, IndexStatement } from './index-db.js';
import { EMPTY_META } from './meta.js';
import { INDEX_FORMAT } from './schema.js';
import { VarintWriter } from './varint.js';

/**
 * Every read and write of the index goes through here, whichever its home (index-db.ts): rows carry a checksum that is checked on
 * every read, lookups that must find a row fail loudly when they do not, and the index connection's
 * errors become index errors (never mistaken for the store's).
 */

/** Term directory buckets: a term's postings rows are listed in bucket `crc32(term) % TERM_BUCKETS`. */
export const TERM_BUCKETS = 4096;
/**
 * Rows of a tier segment's own term directory (meta tierSegments): a term of segment `seg` is listed in
 * row tierBucket(seg, term), every one of the TIER_PARTS rows present (an absent term is absent from a
 * checked row). Rows of the same `terms` table, keyed after the main buckets.
 */
export const TIER_PARTS = 64;
export const tierBucket = (seg: number, part: number): number => TERM_BUCKETS + seg * TIER_PARTS + part;
export const tierPart = (term: string): number => bucketOf(term) % TIER_PARTS;

/** One `runs` row, every column. */
export interface RunRow {
  run_key: number;
  run_id: string;
  store_rowid: number;
  conversation_id: string | null;
  parent_run_id: string | null;
  agent_name: string | null;
  started_at: string;
  ord: number;
  /** Snapshot rows of any state, the last seq, and the digest of all of them (content.ts). */
  snap_count: number;
  snap_max_seq: number;
  content: string;
  complete_count: number;
  complete_max_seq: number;
  len: number;
  start_all: number;
  start_conv: number;
  dl_full: number;
  dl_all: number;
  dl_conv: number;
  /** The segments that hold the run's live postings: `seg_from` to `seg` (schema.ts CORPUS_RUN_NUMBERS). */
  seg: number;
  seg_from: number;
  skipped: string;
  unknown: string;
  /** The store's countsByRun and lastSteps entries of the run (schema.ts SNAPSHOT_STAT_COLUMNS). */
  complete_snaps: number;
  interrupted_snaps: number;
  last_step: number | null;
  /** Document lengths by position (varints). */
  lengths: Buffer;
  /** Strict keys by position, 20 bytes each (cross-run attribution reads these, never the messages). */
  keys: Buffer;
}

/**
 * What the sync compares of every run (the run record, its place, its content marks): read without the
 * blobs, under a checksum of their own (`runs.marks_sum`), so that an update reads the blobs of the runs
 * that changed only.
 */
export const MARK_COLUMNS = [
  'run_key',
  'run_id',
  'store_rowid',
  'conversation_id',
  'parent_run_id',
  'agent_name',
  'started_at',
  'ord',
  'snap_count',
  'snap_max_seq',
  'content',
  'complete_count',
  'complete_max_seq',
  'skipped',
] as const satisfies ReadonlyArray<keyof RunRow>;

/** Every column of a `runs` row but its sums: the marks, then what the sync derives from the run's records. */
export const RUN_COLUMNS = [
  ...MARK_COLUMNS,
  'len',
  'start_all',
  'start_conv',
  'dl_full',
  'dl_all',
  'dl_conv',
  'seg',
  'seg_from',
  'unknown',
  'complete_snaps',
  'interrupted_snaps',
  'last_step',
  'lengths',
  'keys',
] as const satisfies ReadonlyArray<keyof RunRow>;

/** One `messages` row, every column. */
export interface MessageRecord {
  run_key: number;
  pos: number;
  loose_key: string;
  strict_key: string;
  kind: string;
  timestamp: string | null;
  first_seq: number;
  first_step: number | null;
  dl: number;
  unknown_parts: string | null;
  roles: string;
  /** The fields' JSON text, whole when read (its first piece in the row, the rest in `field_pieces`). */
  fields: string;
  /** Pieces of `fields` after the first. */
  pieces: number;
}

const MESSAGE_COLUMNS = [
  'run_key',
  'pos',
  'loose_key',
  'strict_key',
  'kind',
  'timestamp',
  'first_seq',
  'first_step',
  'dl',
  'unknown_parts',
  'roles',
  'fields',
  'pieces',
] as const satisfies ReadonlyArray<keyof MessageRecord>;

/** Rows a multi-row insert writes at once (a build inserts some 170k rows: each statement run has its cost). */
export const ROWS_A_STATEMENT = 32;

/** Postings rows a merge reads with one statement (postingsByIds). */
export const POSTING_IDS_A_STATEMENT = 256;

/** `(?, …), (?, …)…`: `rows` rows of `columns` parameters. */
const rowsOf = (columns: number, rows: number): string =>
  Array(rows)
    .fill(`(${Array(columns).fill('?').join(', ')})`)
    .join(', ');

/**
 * Runs `stmt` (a multi-row INSERT of ROWS_A_STATEMENT rows) over `rows` in order, each row's values
 * added by `add` (row `i` of `rows`), as long as a whole statement's rows are left; returns how many
 * rows it wrote (the rest are the caller's, one at a time).
 */
function inStatements<T>(stmt: IndexStatement, rows: readonly T[], add: (row: T, i: number, values: RowValue[]) => void): number {
  let k = 0;
  for (; k + ROWS_A_STATEMENT <= rows.length; k += ROWS_A_STATEMENT) {
    const values: RowValue[] = [];
    for (let i = k; i < k + ROWS_A_STATEMENT; i++) add(rows[i]!, i, values);
    stmt.run(...values);
  }
  return k;
}

/** Column lists and parameter lists for the SQL below: constants, never input. */
const RUN_LIST = RUN_COLUMNS.join(', ');
/** The parameters of ROWS_A_STATEMENT message rows (each with its checksum), and of as many postings rows (id, term, seg, data, sum). */
const MESSAGE_ROWS_PARAMS = rowsOf(MESSAGE_COLUMNS.length + 1, ROWS_A_STATEMENT);
const POSTING_ROWS_PARAMS = rowsOf(5, ROWS_A_STATEMENT);
/** The parameters of POSTING_IDS_A_STATEMENT postings row ids (a merge's reads, postingsByIds). */
const POSTING_IDS_PARAMS = Array(POSTING_IDS_A_STATEMENT).fill('?').join(', ');
const MESSAGE_LIST = MESSAGE_COLUMNS.join(', ');
const MESSAGE_PARAMS = MESSAGE_COLUMNS.map(() => '?').join(', ');

export type RunMarks = Pick<RunRow, (typeof MARK_COLUMNS)[number]>;

/** What cross-run attribution reads of every run (attribution.ts), under `runs.keys_sum`. */
export const KEY_COLUMNS = ['run_key', 'ord', 'conversation_id', 'start_all', 'start_conv', 'keys'] as const satisfies ReadonlyArray<
  keyof RunRow
>;

export type RunKeys = Pick<RunRow, (typeof KEY_COLUMNS)[number]>;

/** A `corpus_cache` row as corpus-cache.ts lays it out: its runs' numbers, document lengths and texts. */
export interface CacheRow {
  readonly numbers: Buffer;
  readonly lengths: Buffer;
  readonly runs: Buffer;
}

/** Runs per `corpus_cache` row: an update rewrites the rows from the first run it changed on, not the whole cache. */
export const CACHE_CHUNK = 256;

const runValues = (r: RunRow): RowValue[] => RUN_COLUMNS.map((c) => r[c]);
const markValues = (r: RunMarks): RowValue[] => MARK_COLUMNS.map((c) => r[c]);
const MARK_LIST = MARK_COLUMNS.join(', ');
const keyValues = (r: RunKeys): RowValue[] => KEY_COLUMNS.map((c) => r[c]);
const KEY_LIST = KEY_COLUMNS.join(', ');
const messageValues = (m: MessageRecord): RowValue[] => MESSAGE_COLUMNS.map((c) => m[c]);

/** Encodes a directory bucket: per term, its UTF-8 length and bytes, the number of rows and their ids. */
export function encodeBucket(entries: ReadonlyMap<string, readonly number[]>): Buffer {
  const w = new VarintWriter();
  for (const [term, ids] of entries) {
    const bytes = Buffer.from(term, 'utf8');
    w.write(bytes.length);
    w.writeBytes(bytes);
    w.write(ids.length);
    for (const id of ids) w.write(id);
  }
  return w.bytes();
}

/** The varint at `at.i` of a directory bucket, `at.i` moved past it. */
function bucketVarint(data: Uint8Array, at: { i: number }): number {
  let n = 0;
  let shift = 1;
  for (;;) {
    if (at.i >= data.length) throw new IndexDamagedError('a term directory bucket ends in the middle of an entry');
    const b = data[at.i++]!;
    n += (b & 0x7f) * shift;
    if (b < 0x80) return n;
    shift *= 128;
  }
}

export function decodeBucket(data: Uint8Array): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const at = { i: 0 };
  while (at.i < data.length) {
    const len = bucketVarint(data, at);
    if (at.i + len > data.length) throw new IndexDamagedError('a term directory bucket ends in the middle of a term');
    const term = Buffer.from(data.buffer, data.byteOffset + at.i, len).toString('utf8');
    at.i += len;
    const ids: number[] = [];
    for (let k = bucketVarint(data, at); k > 0; k--) ids.push(bucketVarint(data, at));
    out.set(term, ids);
  }
  return out;
}

/**
 * The encoded bucket `data` with row `id` added to each term of `added` (one entry per term), byte for
 * byte what encodeBucket makes of the decoded entries with the ids pushed (a new term last, in the
 * order given): the entries are copied as they are, and a term string is made only of an entry whose
 * byte length is one of the added terms'. An update adds a few terms to each bucket it touches.
 */
export function addToBucket(data: Uint8Array, added: ReadonlyArray<readonly [term: string, id: number]>): Buffer {
  const ids = new Map<string, number>(added);
  const lengths = new Set(added.map(([term]) => Buffer.byteLength(term, 'utf8')));
  const w = new VarintWriter(data.length + 16 * added.length);
  const at = { i: 0 };
  while (at.i < data.length) {
    const start = at.i;
    const len = bucketVarint(data, at);
    if (at.i + len > data.length) throw new IndexDamagedError('a term directory bucket ends in the middle of a term');
    const term = lengths.has(len) ? Buffer.from(data.buffer, data.byteOffset + at.i, len).toString('utf8') : null;
    at.i += len;
    const countAt = at.i;
    const count = bucketVarint(data, at);
    const idsAt = at.i;
    for (let k = 0; k < count; k++) bucketVarint(data, at);
    const id = term === null ? undefined : ids.get(term);
    if (id === undefined) {
      w.writeBytes(data.subarray(start, at.i));
      continue;
    }
    ids.delete(term!);
    w.writeBytes(data.subarray(start, countAt));
    w.write(count + 1);
    w.writeBytes(data.subarray(idsAt, at.i));
    w.write(id);
  }
  for (const [term, id] of ids) {
    const bytes = Buffer.from(term, 'utf8');
    w.write(bytes.length);
    w.writeBytes(bytes);
    w.write(1);
    w.write(id);
  }
  return w.bytes();
}

export const bucketOf = (term: string): number => crc32(term) % TERM_BUCKETS;

/** The store's page digests (store/sqlite/pages.ts), their key, and the content digest they were taken with. */
export interface PageMapRow {
  readonly content: string;
  readonly seed: number;
  readonly pages: ChunkedWords<Uint32Array>;
  readonly tree: KeptTree | null;
  /** The media table's fingerprint taken with the map, and the media it vouches for (null: none kept). */
  readonly media: KnownMedia | null;
  /** The runs table's fingerprint taken with the map, and the runs table digest it vouches for (null: none kept). */
  readonly runsTable: KnownRunsTable | null;
  /** The media and runs tables' walks taken with the map (row 6; null: none kept, or kept with another content). */
  readonly walks: KeptWalks | null;
}

/**
 * Pages rows 1-5 are heads; their bytes are kept in parts of PART_BYTES, rows partRow(id, k), so that an
 * update rewrites the parts that changed (an append: a few), not the whole map (16 bytes a store page).
 */
const PART_BYTES = 32 * 1024;
const partRow = (id: number, k: number): number => id * 2 ** 24 + k;

/**
 * The known runs (KnownRuns) are pages row 5, in the binary layout putKnownRuns writes (row 3 held them
 * as JSON: 115 ms to read at 50k runs, 58 ms to write; an older convsearch that finds no row 3 reads
 * every run's marks, as with none kept).
 */
const KNOWN_RUNS = 5;
/** The media and runs tables' walks kept with the page map (KeptWalks): pages row 6. */
const WALKS = 6;
/**
 * The decoded b-tree kept with the page map (KeptTree): pages row 7, its values, then each run id's
 * length (UTF-16 units, 32-bit), then the ids as one text block, each block from a part boundary on (a
 * step rewrites the values' last parts only). Row 2 held the ids as JSON after the values: 27–36 ms to
 * parse at 50,000 runs, against 8–10 to cut from the block. A convsearch that knows row 2 alone finds
 * none and decodes every page again; one that writes row 2 leaves row 7 kept for another content, and
 * the row kept for the map's content is the one taken.
 */
const TREE = 7;
/** The tree row an older convsearch writes (ids as JSON after the values): read when row 7 is not the map's, never written. */
const JSON_TREE = 2;
/** The filter of every run's message keys (key-filter.ts): pages row 8, its bytes, and in its head how many keys it took. */
const KEY_FILTER = 8;
/** A known run's record: count and last seq (doubles), the UTF-16 lengths of its id and digest (32-bit). */
const KNOWN_RECORD = 24;
/** `bytes` rounded up to whole parts. */
const padded = (bytes: number): number => Math.ceil(bytes / PART_BYTES) * PART_BYTES;
/** The zeros from `bytes` to the next part boundary. */
const gapTo = (bytes: number): Uint8Array => new Uint8Array(padded(bytes) - bytes);

/** Known runs' records (KNOWN_RECORD bytes each): count and last seq as doubles, then the UTF-16 lengths of the id and digest. */
class KnownRecords {
  readonly nums: Float64Array;
  private readonly lengths: Uint32Array;

  constructor(n: number) {
    this.nums = new Float64Array(n * 3);
    this.lengths = new Uint32Array(this.nums.buffer);
  }

  set(i: number, id: string, r: KnownRunContent): void {
    this.nums[i * 3] = r.count;
    this.nums[i * 3 + 1] = r.maxSeq;
    this.lengths[i * 6 + 4] = id.length;
    this.lengths[i * 6 + 5] = r.digest.length;
  }
}

/** Digests kept in a head (JSON) as base64. */
const base64Of = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

/** The digests a head keeps as base64 (base64Of), whole `size`-byte ones; null when the text is not exactly that. */
function digestsOf(text: unknown, size: number): Buffer | null {
  if (typeof text !== 'string') return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length % size === 0 && bytes.toString('base64') === text ? bytes : null;
}

/** What row 5's head says of `k` besides its layout: the content, the run list, the bucket digests. */
function knownHead(k: KnownRunsToWrite): Record<string, unknown> {
  return {
    content: k.content,
    runList: k.runList,
    runCount: k.runCount,
    ...(k.buckets !== undefined ? { buckets: base64Of(k.buckets) } : {}),
  };
}

/** Row 5's head and bytes for `k`, every run laid out: the records, then the ids, then the digests, each block from a part boundary on. */
function laidOutKnownRuns(k: KnownRunsToWrite): { head: Record<string, unknown>; pieces: ArrayBufferView[] } {
  const n = k.runs.size;
  const records = new KnownRecords(n);
  const ids: string[] = new Array(n);
  const digests: string[] = new Array(n);
  let i = 0;
  k.runs.forEach((r, id) => {
    records.set(i, id, r);
    ids[i] = id;
    digests[i] = r.digest;
    i++;
  });
  const idText = textBlock(ids.join(''));
  const digestText = textBlock(digests.join(''));
  return {
    head: { ...knownHead(k), runs: n, ids: idText.block, digests: digestText.block },
    pieces: [records.nums, gapTo(records.nums.byteLength), idText.bytes, gapTo(idText.bytes.length), digestText.bytes],
  };
}

/**
 * The known runs as row 5 holds them (knownRuns): each run's number (its record's place) by its id, and
 * its entry made from the records and digests read when it is asked for. No entry is held per run:
 * 50,000 of them, held through an update, were copied by the collector as they lived on, where an
 * update looks at each once or twice and keeps those of the runs that changed.
 */
class KnownRunMap implements CountedRuns {
  constructor(
    private readonly numbers: ReadonlyMap<string, number>,
    /** KnownRecords' words: count and last seq of run i at 3i and 3i + 1. */
    private readonly nums: Float64Array,
    private readonly digests: string,
    /** Where run i's digest begins in `digests` (n + 1 entries: the last is its length). */
    private readonly digestAt: Uint32Array,
  ) {}

  get size(): number {
    return this.numbers.size;
  }

  /** Run `id`'s number in the row, or undefined when the row holds no such run. */
  numberOf(id: string): number | undefined {
    return this.numbers.get(id);
  }

  private entry(i: number): RunContent {
    return recordedContent(this.nums[i * 3]!, this.nums[i * 3 + 1]!, this.digests.slice(this.digestAt[i]!, this.digestAt[i + 1]!));
  }

  marksInto(id: string, out: Float64Array): boolean {
    const i = this.numbers.get(id);
    if (i === undefined) return false;
    out[0] = this.nums[i * 3]!;
    out[1] = this.nums[i * 3 + 1]!;
    return true;
  }

  get(id: string): RunContent | undefined {
    const i = this.numbers.get(id);
    return i === undefined ? undefined : this.entry(i);
  }

  has(id: string): boolean {
    return this.numbers.has(id);
  }

  /** In the row's order. */
  forEach(f: (value: RunContent, key: string, map: ReadonlyMap<string, RunContent>) => void, thisArg?: unknown): void {
    this.numbers.forEach((i, id) => {
      f.call(thisArg, this.entry(i), id, this);
    });
  }

  keys(): MapIterator<string> {
    return this.numbers.keys();
  }

  values(): MapIterator<RunContent> {
    return collected(this, (v) => v);
  }

  entries(): MapIterator<[string, RunContent]> {
    return collected(this, (v, k): [string, RunContent] => [k, v]);
  }

  [Symbol.iterator](): MapIterator<[string, RunContent]> {
    return this.entries();
  }
}

/** Views of bytes [from, to) of a row read in parts (each whole part PART_BYTES long): one per part they lie in. */
function partViews(parts: readonly Buffer[], from: number, to: number): Buffer[] {
  const out: Buffer[] = [];
  for (let k = Math.floor(from / PART_BYTES); k * PART_BYTES < to; k++) {
    const at = k * PART_BYTES;
    out.push(parts[k]!.subarray(Math.max(from, at) - at, Math.min(to, at + PART_BYTES) - at));
  }
  return out;
}

/** Bytes [from, to) of a row read in parts, as one buffer: a view when they lie in one part, else a copy. */
function partBytes(parts: readonly Buffer[], from: number, to: number): Buffer {
  const views = partViews(parts, from, to);
  return views.length === 1 ? views[0]! : Buffer.concat(views, to - from);
}

/** The text of `block`, kept from byte `at` (a part boundary) of a row read in parts: decoded part by part, never joined as bytes. */
function partText(parts: readonly Buffer[], at: number, block: TextBlock): string {
  const encoding = block.wide ? 'utf16le' : 'latin1';
  // (a part is an even number of bytes: no UTF-16 unit is cut between two)
  const texts = partViews(parts, at, at + block.bytes).map((b) => b.toString(encoding));
  return texts.length === 1 ? texts[0]! : texts.join('');
}

/** How a block of text is kept: its byte length, and whether it is UTF-16 (some char above U+00FF) or Latin-1. */
interface TextBlock {
  readonly bytes: number;
  readonly wide: boolean;
}

function isTextBlock(b: unknown): b is TextBlock {
  const t = b as Partial<Record<keyof TextBlock, unknown>> | null;
  return typeof t === 'object' && t !== null && Number.isSafeInteger(t.bytes) && (t.bytes as number) >= 0 && typeof t.wide === 'boolean';
}

/** Whether `text` has a char above U+00FF: a block of it is kept in UTF-16. */
const isWide = (text: string): boolean => /[^\u0000-\u00ff]/.test(text);

/** `text` as bytes that give it back exactly (UTF-16 keeps lone surrogates; Latin-1 when every char fits a byte). */
function textBlock(text: string): { block: TextBlock; bytes: Buffer } {
  const wide = isWide(text);
  const bytes = Buffer.from(text, wide ? 'utf16le' : 'latin1');
  return { block: { bytes: bytes.length, wide }, bytes };
}

/** The media row 1's head keeps (absent: an older convsearch wrote it, or no fingerprint was taken). */
function knownMediaOf(m: unknown): KnownMedia | null {
  if (m === undefined) return null;
  const k = m as Partial<Record<keyof KnownMedia, unknown>> | null;
  if (k === null || typeof k !== 'object' || typeof k.pages !== 'string' || typeof k.digest !== 'string' || !Number.isSafeInteger(k.count))
    throw new IndexDamagedError('the page map row is malformed');
  return { pages: k.pages, count: k.count as number, digest: k.digest };
}

/** The runs table row 1's head keeps (absent: an older convsearch wrote it, or no fingerprint was taken). */
function knownRunsTableOf(m: unknown): KnownRunsTable | null {
  if (m === undefined) return null;
  const k = m as Partial<Record<keyof KnownRunsTable, unknown>> | null;
  if (k === null || typeof k !== 'object' || typeof k.pages !== 'string' || typeof k.digest !== 'string')
    throw new IndexDamagedError('the page map row is malformed');
  if (k.blocks === undefined) return { pages: k.pages, digest: k.digest };
  const blocks = digestsOf(k.blocks, BLOCK_DIGEST_BYTES);
  if (blocks === null) throw new IndexDamagedError('the page map row is malformed');
  return { pages: k.pages, digest: k.digest, blocks };
}

function parseJson(text: string, damaged: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new IndexDamagedError(damaged);
  }
}

/** Pages row 3 (known-runs.ts): the per-run content entries and run list of the content the index answers for. */
export interface KnownRuns {
  readonly content: string;
  /** Digest of the run list (known-runs.ts runListDigests) and its length. */
  readonly runList: string;
  readonly runCount: number;
  /** As read (knownRuns): each entry a RunContent (recordedContent), made from the row when asked for. */
  readonly runs: ReadonlyMap<string, RunContent>;
  /** The bucket digests of `runs` (store/content.ts runBuckets), when kept. */
  readonly buckets?: Uint8Array;
}

/** What putKnownRuns writes of each run: the prefix digest is not kept. */
export type KnownRunsToWrite = Omit<KnownRuns, 'runs'> & { readonly runs: ReadonlyMap<string, KnownRunContent> };

/**
 * `bytes` (whole words, in this machine's order, as written) read as words: a view where they are aligned
 * (parts read are joined into a buffer of their own: no second copy of a few MB), else a copy. Only read.
 */
export function wordsOf<T extends Uint32Array | Float64Array>(
  bytes: Buffer,
  kind: { new (buffer: ArrayBufferLike, offset: number, length: number): T; new (length: number): T; BYTES_PER_ELEMENT: number },
): T {
  const size = kind.BYTES_PER_ELEMENT;
  if (bytes.byteOffset % size === 0) return new kind(bytes.buffer, bytes.byteOffset, bytes.length / size);
  const words = new kind(bytes.length / size);
  new Uint8Array(words.buffer).set(bytes);
  return words;
}

export class IndexTables {
  private readonly s;
  /** The next postings row id, read once per write transaction (ids are assigned here, in any home). */
  private nextPosting: number | null = null;
  /**
   * The bytes of the pages rows kept in parts, as readPart last read them (each part checked): a write
   * whose caller vouches that nothing was written since compares with these instead of reading every
   * part again (writePart).
   */
  private readonly partsRead = new Map<number, readonly Buffer[]>();
  /** What knownRuns() read last: its runs, and the bytes they were read from (patchedKnownRuns). */
  private knownRead: {
    readonly runs: KnownRunMap;
    /** The row's parts as read (each whole part PART_BYTES long). */
    readonly parts: readonly Buffer[];
    readonly n: number;
    readonly ids: TextBlock;
    readonly digests: TextBlock;
    /** The length of every digest, when they are all as long (null: not, or none). */
    readonly digestLength: number | null;
  } | null = null;

  constructor(readonly db: IndexDb) {
    const n = (name: Parameters<IndexDb['table']>[0]): string => db.table(name);
    this.s = {
      meta: db.prepare(`SELECT key, value, sum FROM ${n('meta')}`),
      putMeta: db.prepare(
        `INSERT INTO ${n('meta')} (key, value, sum) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, sum = excluded.sum`,
      ),
      marks: db.prepare(`SELECT ${MARK_LIST}, marks_sum FROM ${n('runs')}`),
      marksOf: db.prepare(`SELECT ${MARK_LIST}, marks_sum FROM ${n('runs')} WHERE run_id = ?`),
      runsInOrder: db.prepare(`SELECT ${RUN_LIST}, sum FROM ${n('runs')} ORDER BY ord`),
      // through runs_seg: the runs written since the base, not every run row
      runsAfterSegment: db.prepare(`SELECT ${RUN_LIST}, sum FROM ${n('runs')} WHERE seg > ?`),
      ordsInConversation: db.prepare(`SELECT ord FROM ${n('runs')} WHERE conversation_id = ? AND ord < ? ORDER BY ord`),
      keysAt: db.prepare(`SELECT ${KEY_LIST}, keys_sum FROM ${n('runs')} WHERE ord >= ? AND ord < ? ORDER BY ord`),
      runsByOrd: db.prepare(`SELECT ${RUN_LIST}, sum FROM ${n('runs')} WHERE ord >= ? AND ord < ? ORDER BY ord`),
      runByKey: db.prepare(`SELECT ${RUN_LIST}, sum FROM ${n('runs')} WHERE run_key = ?`),
      putRun: db.prepare(db.replaceSql('runs', [...RUN_COLUMNS, 'sum', 'marks_sum', 'keys_sum'], 'run_key')),
      deleteRun: db.prepare(`DELETE FROM ${n('runs')} WHERE run_key = ?`),
      messagesFrom: db.prepare(`SELECT ${MESSAGE_LIST}, sum FROM ${n('messages')} WHERE run_key = ? AND pos >= ? ORDER BY pos`),
      message: db.prepare(`SELECT ${MESSAGE_LIST}, sum FROM ${n('messages')} WHERE run_key = ? AND pos = ?`),
      messageRange: db.prepare(`SELECT ${MESSAGE_LIST}, sum FROM ${n('messages')} WHERE run_key = ? AND pos >= ? AND pos < ? ORDER BY pos`),
      putMessage: db.prepare(`INSERT INTO ${n('messages')} (${MESSAGE_LIST}, sum) VALUES (${MESSAGE_PARAMS}, ?)`),
      putMessages: db.prepare(db.insertRowsSql('messages', `${MESSAGE_LIST}, sum`, MESSAGE_ROWS_PARAMS)),
      deleteMessages: db.prepare(`DELETE FROM ${n('messages')} WHERE run_key = ? AND pos >= ?`),
      pieces: db.prepare(`SELECT run_key, pos, k, data, sum FROM ${n('field_pieces')} WHERE run_key = ? AND pos = ? ORDER BY k`),
      putPiece: db.prepare(`INSERT INTO ${n('field_pieces')} (run_key, pos, k, data, sum) VALUES (?, ?, ?, ?, ?)`),
      deletePieces: db.prepare(`DELETE FROM ${n('field_pieces')} WHERE run_key = ? AND pos >= ?`),
      // the term too: a home that partitions postings by term (shared/schema.ts) reads one partition
      posting: db.prepare(`SELECT id, term, seg, data, sum FROM ${n('postings')} WHERE id = ? AND term = ?`),
      postingsByIds: db.prepare(`SELECT id, term, seg, data, sum FROM ${n('postings')} WHERE id IN (${POSTING_IDS_PARAMS}) ORDER BY id`),
      lastPosting: db.prepare(`SELECT COALESCE(MAX(id), 0) AS id FROM ${n('postings')}`),
      insertPosting: db.prepare(`INSERT INTO ${n('postings')} (id, term, seg, data, sum) VALUES (?, ?, ?, ?, ?)`),
      insertPostings: db.prepare(db.insertRowsSql('postings', 'id, term, seg, data, sum', POSTING_ROWS_PARAMS)),
      deletePostingsBefore: db.prepare(`DELETE FROM ${n('postings')} WHERE id < ?`),
      deletePostingsFrom: db.prepare(`DELETE FROM ${n('postings')} WHERE id >= ? AND id < ?`),
      bucket: db.prepare(`SELECT bucket, data, sum FROM ${n('terms')} WHERE bucket = ?`),
      putBucket: db.prepare(db.replaceSql('terms', ['bucket', 'data', 'sum'], 'bucket')),
      deleteBuckets: db.prepare(`DELETE FROM ${n('terms')} WHERE bucket >= ? AND bucket < ?`),
      cache: db.prepare(`SELECT id, numbers, lengths, runs, sum FROM ${n('corpus_cache')} ORDER BY id`),
      cacheChunk: db.prepare(`SELECT id, numbers, lengths, runs, sum FROM ${n('corpus_cache')} WHERE id = ?`),
      putCache: db.prepare(db.replaceSql('corpus_cache', ['id', 'numbers', 'lengths', 'runs', 'sum'], 'id')),
      dropCache: db.prepare(`DELETE FROM ${n('corpus_cache')} WHERE id >= ?`),
      pageMap: db.prepare(`SELECT id, head, digests, sum FROM ${n('pages')} WHERE id = ?`),
      parts: db.prepare(`SELECT id, head, digests, sum FROM ${n('pages')} WHERE id >= ? AND id < ? ORDER BY id`),
      dropPart: db.prepare(`DELETE FROM ${n('pages')} WHERE id = ? OR (id >= ? AND id < ?)`),
      putPageMap: db.prepare(db.replaceSql('pages', ['id', 'head', 'digests', 'sum'], 'id')),
    };
  }

  /** A read transaction: every read until commit() sees one commit of the index. */
  begin(): void {
    this.nextPosting = null;
    this.db.begin();
  }

  /** The write lock: one writer at a time; readers keep reading the last commit. */
  beginImmediate(): void {
    this.nextPosting = null;
    this.db.beginWrite();
  }

  /** The write lock if it is free now; false (and no transaction) when another writer holds it. */
  tryBeginImmediate(): boolean {
    this.nextPosting = null;
    return this.db.tryBeginWrite();
  }

  commit(): void {
    this.nextPosting = null;
    this.db.commit();
  }

  rollback(): void {
    this.nextPosting = null;
    this.db.rollback();
  }

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  /** Fills freshly made, empty tables for the store `identity`: the format, an empty meta, every directory bucket. */
  layOut(identity: string): void {
    this.putMeta('format', INDEX_FORMAT);
    this.putMeta('store', identity);
    for (const [k, v] of EMPTY_META) this.putMeta(k, v);
    const empty = new Map<string, number[]>();
    for (let b = 0; b < TERM_BUCKETS; b++) this.putBucket(b, empty);
  }

  // --- meta -------------------------------------------------------------------------------------

  readMeta(): Map<string, string> {
    const out = new Map<string, string>();
    for (const r of this.s.meta.all() as Array<{ key: string; value: string; sum: number }>) {
      verifyRow('meta', [r.key, r.value], r.sum);
      out.set(r.key, r.value);
    }
    return out;
  }

  putMeta(key: string, value: string): void {
    this.s.putMeta.run(key, value, rowSum([key, value]));
  }

  // --- runs -------------------------------------------------------------------------------------

  private checkRun(r: (RunRow & { sum: number }) | undefined, runKey?: number): RunRow {
    if (r === undefined) throw new IndexDamagedError(`the index has no row for run key ${runKey}`);
    const { sum, ...row } = r;
    verifyRow('runs', runValues(row), sum);
    if (runKey !== undefined && row.run_key !== runKey) throw new IndexDamagedError(`run key ${runKey} finds the row of ${row.run_key}`);
    return row;
  }

  /** Every run's marks (MARK_COLUMNS), no blobs; `expected` is the count recorded in meta. */
  allMarks(expected: number): RunMarks[] {
    const rows = this.s.marks.all() as Array<RunMarks & { marks_sum: number }>;
    for (const r of rows) verifyRow('runs', markValues(r), r.marks_sum);
    if (rows.length !== expected) throw new IndexDamagedError(`the index holds ${rows.length} runs, its meta says ${expected}`);
    return rows;
  }

  /** The marks of run `runId`, or undefined when the index holds no such run. */
  marksOf(runId: string): RunMarks | undefined {
    const r = this.s.marksOf.get(runId) as (RunMarks & { marks_sum: number }) | undefined;
    if (r === undefined) return undefined;
    verifyRow('runs', markValues(r), r.marks_sum);
    if (r.run_id !== runId) throw new IndexDamagedError(`run ${JSON.stringify(runId)} finds the row of ${JSON.stringify(r.run_id)}`);
    return r;
  }

  /** The runs at corpus positions `from .. to-1`, in order, every one present and sound. */
  runsAt(from: number, to: number): RunRow[] {
    const rows = (this.s.runsByOrd.all(from, to) as Array<RunRow & { sum: number }>).map((r) => this.checkRun(r));
    rows.forEach((r, i) => {
      if (r.ord !== from + i) throw new IndexDamagedError(`corpus position ${from + i} finds the run at ${r.ord}`);
    });
    if (rows.length !== Math.max(0, to - from)) throw new IndexDamagedError(`corpus position ${from + rows.length} has no run`);
    return rows;
  }

  /** The corpus positions before `before` of the runs of conversation `conv`, in order (through runs_conv: a read of that conversation's runs alone). */
  ordsInConversation(conv: string, before: number): number[] {
    return (this.s.ordsInConversation.all(conv, before) as Array<{ ord: number }>).map((r) => r.ord);
  }

  /** The keys of the runs at corpus positions `from .. to-1`, streamed in order, every one present and sound; write nothing meanwhile. */
  *keysAt(from: number, to: number): IterableIterator<RunKeys> {
    let ord = from;
    for (const r of this.s.keysAt.iterate(from, to) as IterableIterator<RunKeys & { keys_sum: number }>) {
      verifyRow('runs', keyValues(r), r.keys_sum);
      if (r.ord !== ord) throw new IndexDamagedError(`corpus position ${ord} finds the run at ${r.ord}`);
      ord++;
      yield r;
    }
    if (ord !== Math.max(from, to)) throw new IndexDamagedError(`corpus position ${ord} has no run`);
  }

  /**
   * Every run row in corpus order, streamed; read to the end (the count is checked there), and write
   * nothing meanwhile (better-sqlite3 allows no statement while one iterates).
   */
  *runsInOrder(expected: number): IterableIterator<RunRow> {
    let n = 0;
    for (const r of this.s.runsInOrder.iterate() as IterableIterator<RunRow & { sum: number }>) {
      n++;
      yield this.checkRun(r);
    }
    if (n !== expected) throw new IndexDamagedError(`the index holds ${n} runs, its meta says ${expected}`);
  }

  /**
   * The rows of the runs written after segment `seg` (a tier merge's runs), each sound; read to the end,
   * and write nothing meanwhile. The segment of the rows passed over is read unchecked: a tier merge
   * checks the row of every run its postings name that is not among these (merge, segments.ts).
   */
  *runsAfterSegment(seg: number): IterableIterator<RunRow> {
    for (const r of this.s.runsAfterSegment.iterate(seg) as IterableIterator<RunRow & { sum: number }>) yield this.checkRun(r);
  }

  /** Run `runKey`'s row, sound, or undefined when the index holds none (a run removed). */
  runIfAny(runKey: number): RunRow | undefined {
    const r = this.s.runByKey.get(runKey) as (RunRow & { sum: number }) | undefined;
    return r === undefined ? undefined : this.checkRun(r, runKey);
  }

  run(runKey: number): RunRow {
    return this.checkRun(this.s.runByKey.get(runKey) as (RunRow & { sum: number }) | undefined, runKey);
  }

  putRun(r: RunRow): void {
    const values = runValues(r);
    this.s.putRun.run(...values, rowSum(values), rowSum(markValues(r)), rowSum(keyValues(r)));
  }

  deleteRun(runKey: number): void {
    this.s.deleteRun.run(runKey);
  }

  // --- messages ---------------------------------------------------------------------------------

  /** The run's messages at positions `from .. len-1`, in order, every one present and sound. */
  *messages(runKey: number, from: number, len: number): IterableIterator<MessageRecord> {
    let pos = from;
    for (const r of this.s.messagesFrom.iterate(runKey, from) as IterableIterator<MessageRecord & { sum: number }>) {
      const m = this.checkMessage(r);
      if (m.run_key !== runKey || m.pos !== pos) throw new IndexDamagedError(`run key ${runKey} position ${pos} is missing`);
      pos++;
      yield m;
    }
    if (pos !== Math.max(from, len)) throw new IndexDamagedError(`run key ${runKey} has ${pos} messages, its row says ${len}`);
  }

  /** The run's messages at positions `from .. to-1` (within its record), in order, every one present and sound. */
  messageRange(runKey: number, from: number, to: number): MessageRecord[] {
    const out: MessageRecord[] = [];
    for (const r of this.s.messageRange.all(runKey, from, to) as Array<MessageRecord & { sum: number }>) {
      const m = this.checkMessage(r);
      if (m.run_key !== runKey || m.pos !== from + out.length) break;
      out.push(m);
    }
    if (out.length !== Math.max(0, to - from)) throw new IndexDamagedError(`run key ${runKey} position ${from + out.length} is missing`);
    return out;
  }

  message(runKey: number, pos: number): MessageRecord {
    const r = this.s.message.get(runKey, pos) as (MessageRecord & { sum: number }) | undefined;
    if (r === undefined) throw new IndexDamagedError(`run key ${runKey} position ${pos} is missing`);
    const m = this.checkMessage(r);
    if (m.run_key !== runKey || m.pos !== pos) throw new IndexDamagedError(`run key ${runKey} position ${pos} finds another message`);
    return m;
  }

  /** A message row checked against its sum, its fields read whole (every piece present and sound). */
  private checkMessage(r: MessageRecord & { sum: number }): MessageRecord {
    const { sum, ...m } = r;
    verifyRow('messages', messageValues(m), sum);
    if (m.pieces === 0) return m;
    const rows = this.s.pieces.all(m.run_key, m.pos) as Array<{ run_key: number; pos: number; k: number; data: string; sum: number }>;
    const texts = [m.fields];
    for (const p of rows) {
      verifyRow('field_pieces', [p.run_key, p.pos, p.k, p.data], p.sum);
      if (p.k !== texts.length) break;
      texts.push(p.data);
    }
    if (texts.length !== m.pieces + 1 || rows.length !== texts.length - 1)
      throw new IndexDamagedError(
        `run key ${m.run_key} position ${m.pos} has ${rows.length} further pieces of its fields, its row says ${m.pieces}`,
      );
    return { ...m, fields: texts.join('') };
  }

  /**
   * Inserts messages whose fields are one piece each, as putMessage one after another would (in order),
   * ROWS_A_STATEMENT rows a statement.
   */
  putMessages(rows: ReadonlyArray<readonly [m: Omit<MessageRecord, 'fields' | 'pieces'>, fields: string]>): void {
    const done = inStatements(this.s.putMessages, rows, ([m, fields], _, values) => {
      const row = messageValues({ ...m, fields, pieces: 0 });
      values.push(...row, rowSum(row));
    });
    for (let k = done; k < rows.length; k++) this.putMessage(rows[k]![0], [rows[k]![1]]);
  }

  /** Stores a message whose fields' JSON text comes in `fields` pieces (fields.ts), its `fields` and `pieces` aside. */
  putMessage(m: Omit<MessageRecord, 'fields' | 'pieces'>, fields: Iterable<string>): void {
    let first: string | null = null;
    let pieces = 0;
    for (const data of fields) {
      if (first === null) {
        first = data;
        continue;
      }
      const k = ++pieces;
      this.s.putPiece.run(m.run_key, m.pos, k, data, rowSum([m.run_key, m.pos, k, data]));
    }
    const values = messageValues({ ...m, fields: first ?? '', pieces });
    this.s.putMessage.run(...values, rowSum(values));
  }

  deleteMessages(runKey: number, from: number): void {
    this.s.deleteMessages.run(runKey, from);
    this.s.deletePieces.run(runKey, from);
  }

  // --- postings and the term directory ---------------------------------------------------------

  bucket(b: number): Map<string, number[]> {
    const r = this.s.bucket.get(b) as { bucket: number; data: Buffer; sum: number } | undefined;
    if (r === undefined) throw new IndexDamagedError(`term directory bucket ${b} is missing`);
    verifyRow('terms', [r.bucket, r.data], r.sum);
    if (r.bucket !== b) throw new IndexDamagedError(`term directory bucket ${b} finds bucket ${r.bucket}`);
    return decodeBucket(r.data);
  }

  putBucket(b: number, entries: ReadonlyMap<string, readonly number[]>): void {
    const data = encodeBucket(entries);
    this.s.putBucket.run(b, data, rowSum([b, data]));
  }

  /** Lists postings row `id` under each term of `added` in bucket `b` (addToBucket), its entries kept as bytes. */
  addToBucket(b: number, added: ReadonlyArray<readonly [term: string, id: number]>): void {
    const r = this.s.bucket.get(b) as { bucket: number; data: Buffer; sum: number } | undefined;
    if (r === undefined) throw new IndexDamagedError(`term directory bucket ${b} is missing`);
    verifyRow('terms', [r.bucket, r.data], r.sum);
    if (r.bucket !== b) throw new IndexDamagedError(`term directory bucket ${b} finds bucket ${r.bucket}`);
    const data = addToBucket(r.data, added);
    this.s.putBucket.run(b, data, rowSum([b, data]));
  }

  /** Lists each term's row of segment `seg` in that segment's own directory (tierBucket), every part written. */
  putTierDirectory(seg: number, rows: ReadonlyArray<readonly [term: string, id: number]>): void {
    const parts = Array.from({ length: TIER_PARTS }, () => new Map<string, number[]>());
    for (const [term, id] of rows) {
      const entries = parts[tierPart(term)]!;
      const ids = entries.get(term);
      if (ids === undefined) entries.set(term, [id]);
      else ids.push(id);
    }
    for (let part = 0; part < TIER_PARTS; part++) this.putBucket(tierBucket(seg, part), parts[part]!);
  }

  /** Every entry of segment `seg`'s own directory, part by part. */
  tierDirectory(seg: number): Array<[term: string, ids: number[]]> {
    const out: Array<[string, number[]]> = [];
    for (let part = 0; part < TIER_PARTS; part++) out.push(...this.bucket(tierBucket(seg, part)));
    return out;
  }

  /** Deletes the own directories of the segments before `seg` (those a merge folded). */
  deleteTierDirectoriesBefore(seg: number): void {
    this.s.deleteBuckets.run(TERM_BUCKETS, tierBucket(seg, 0));
  }

  /**
   * The ids of the postings rows of `term` (none when no document has it): the main directory's, then
   * those of each tier segment's own directory (meta tierSegments), in id order.
   */
  termRows(term: string, tierSegments: readonly number[]): number[] {
    const ids = this.bucket(bucketOf(term)).get(term) ?? [];
    const part = tierPart(term);
    for (const seg of tierSegments) {
      const more = this.bucket(tierBucket(seg, part)).get(term);
      if (more !== undefined) ids.push(...more);
    }
    return ids;
  }

  posting(id: number, term: string): { seg: number; data: Buffer } {
    const r = this.s.posting.get(id, term) as { id: number; term: string; seg: number; data: Buffer; sum: number } | undefined;
    if (r === undefined) throw new IndexDamagedError(`postings row ${id} of ${JSON.stringify(term)} is missing`);
    verifyRow('postings', [r.term, r.seg, r.data], r.sum);
    if (r.id !== id || r.term !== term) throw new IndexDamagedError(`postings row ${id} is not the row of ${JSON.stringify(term)}`);
    return { seg: r.seg, data: r.data };
  }

  /**
   * Reads the postings rows `ids` (ascending), row `ids[i]` listed under `terms[i]`, each checked as
   * posting() checks it, and hands each to `visit` (its bytes are the caller's to copy or let go):
   * POSTING_IDS_A_STATEMENT rows a statement, in id order (the b-tree's pages one after another, not a
   * lookup per row from anywhere in it; a merge reads some 700k rows at 50k runs).
   */
  postingsByIds(ids: readonly number[], terms: readonly string[], visit: (i: number, seg: number, data: Buffer) => void): void {
    const params: number[] = Array(POSTING_IDS_A_STATEMENT);
    for (let k = 0; k < ids.length; k += POSTING_IDS_A_STATEMENT) {
      const end = Math.min(ids.length, k + POSTING_IDS_A_STATEMENT);
      // the last statement's list is filled up with its last id (a repeated id selects its row once)
      for (let i = 0; i < POSTING_IDS_A_STATEMENT; i++) params[i] = ids[Math.min(k + i, end - 1)]!;
      const rows = this.s.postingsByIds.all(...params) as Array<{ id: number; term: string; seg: number; data: Buffer; sum: number }>;
      for (let i = k; i < end; i++) {
        const r = rows[i - k];
        const id = ids[i]!;
        const term = terms[i]!;
        if (r === undefined || r.id !== id) throw new IndexDamagedError(`postings row ${id} of ${JSON.stringify(term)} is missing`);
        verifyRow('postings', [r.term, r.seg, r.data], r.sum);
        if (r.term !== term) throw new IndexDamagedError(`postings row ${id} is not the row of ${JSON.stringify(term)}`);
        visit(i, r.seg, r.data);
      }
    }
  }

  /** Adds a postings row and returns its id (the caller lists it in the term's directory bucket). */
  insertPosting(term: string, seg: number, data: Buffer): number {
    // the id SQLite would give (one past the largest), assigned here so that no home has to report it back
    const id = this.nextPostingId();
    this.nextPosting = id + 1;
    this.s.insertPosting.run(id, term, seg, data, rowSum([term, seg, data]));
    return id;
  }

  /**
   * Inserts postings rows of segment `seg`, as insertPosting one after another would (the same ids, in
   * order), ROWS_A_STATEMENT rows a statement; returns the first id.
   */
  insertPostings(seg: number, rows: ReadonlyArray<readonly [term: string, data: Buffer]>): number {
    const first = this.nextPostingId();
    const done = inStatements(this.s.insertPostings, rows, ([term, data], i, values) => {
      values.push(first + i, term, seg, data, rowSum([term, seg, data]));
    });
    this.nextPosting = first + done;
    for (let k = done; k < rows.length; k++) this.insertPosting(rows[k]![0], seg, rows[k]![1]);
    return first;
  }

  /** The id the next postings row gets (rows from it on are written after everything now in the index). */
  nextPostingId(): number {
    this.nextPosting ??= Number((this.s.lastPosting.get() as { id: number }).id) + 1;
    return this.nextPosting;
  }

  /** Deletes every postings row with an id below `id` (a full merge's rows, once their merged rows are written). */
  deletePostingsBefore(id: number): void {
    this.s.deletePostingsBefore.run(id);
  }

  /** Deletes the postings rows with ids from `from` to `to` (excluded): a tier merge's rows, once their merged rows are written. */
  deletePostingsFrom(from: number, to: number): void {
    this.s.deletePostingsFrom.run(from, to);
  }

  // --- corpus cache -----------------------------------------------------------------------------

  /** The cache's rows (chunk 0, 1, ... each of CACHE_CHUNK runs in corpus order), every one present and sound. */
  cache(): CacheRow[] {
    const rows = this.s.cache.all() as Array<CacheRow & { id: number; sum: number }>;
    return rows.map((r, i) => {
      verifyRow('corpus_cache', [r.id, r.numbers, r.lengths, r.runs], r.sum);
      if (r.id !== i) throw new IndexDamagedError(`corpus cache chunk ${i} is missing`);
      return { numbers: r.numbers, lengths: r.lengths, runs: r.runs };
    });
  }

  /** Cache row `chunk`, checked; null when there is none. */
  cacheChunk(chunk: number): CacheRow | null {
    const r = this.s.cacheChunk.get(chunk) as (CacheRow & { id: number; sum: number }) | undefined;
    if (r === undefined) return null;
    verifyRow('corpus_cache', [r.id, r.numbers, r.lengths, r.runs], r.sum);
    if (r.id !== chunk) throw new IndexDamagedError(`corpus cache chunk ${chunk} finds chunk ${r.id}`);
    return { numbers: r.numbers, lengths: r.lengths, runs: r.runs };
  }

  putCache(chunk: number, row: CacheRow): void {
    this.s.putCache.run(chunk, row.numbers, row.lengths, row.runs, rowSum([chunk, row.numbers, row.lengths, row.runs]));
  }

  /** Removes the cache rows from `chunk` on (the corpus shrank). */
  dropCache(chunk: number): void {
    this.s.dropCache.run(chunk);
  }

  // --- the store's page map (store/sqlite/pages.ts) ----------------------------------------------

  /**
   * The page digests, their key, the content digest they were taken with, and the b-tree decoded with
   * them (row 2, taken only when it names the same content); null when none was kept.
   */
  pageMap(): PageMapRow | null {
    const r = this.readParts(1);
    if (r === null) return null;
    const { head, parts, total } = r;
    if (typeof head.content !== 'string' || !Number.isInteger(head.seed) || total % 16 !== 0)
      throw new IndexDamagedError('the page map row is malformed');
    const pages = IndexTables.chunked(parts, total, Uint32Array);
    const tree = this.treeOf(head.content) ?? this.jsonTreeOf(head.content);
    return {
      content: head.content,
      seed: head.seed as number,
      pages,
      tree,
      media: knownMediaOf(head.media),
      runsTable: knownRunsTableOf(head.runs),
      walks: this.walksOf(head.content),
    };
  }

  /** The tree row 7 keeps, when it was kept with `content`. */
  private treeOf(content: string): KeptTree | null {
    const t = this.readParts(TREE);
    if (t === null) return null;
    const { head, parts, total } = t;
    const n = head.runs;
    const values = head.values;
    const malformed = (): IndexDamagedError => new IndexDamagedError('the page tree row is malformed');
    if (
      typeof head.content !== 'string' ||
      !Number.isSafeInteger(n) ||
      (n as number) < 0 ||
      !Number.isSafeInteger(values) ||
      (values as number) < 0 ||
      (values as number) % 8 !== 0 ||
      !isTextBlock(head.ids)
    )
      throw malformed();
    const lengthsAt = padded(values as number);
    const textAt = lengthsAt + padded((n as number) * 4);
    if (total !== textAt + head.ids.bytes) throw malformed();
    if (head.content !== content) return null;
    const lengths = wordsOf(partBytes(parts, lengthsAt, lengthsAt + (n as number) * 4), Uint32Array);
    const text = partText(parts, textAt, head.ids);
    const runIds: string[] = new Array(n as number);
    let at = 0;
    for (let i = 0; i < lengths.length; i++) runIds[i] = text.slice(at, (at += lengths[i]!));
    // (lengths past the text's end add up to more than it)
    if (at !== text.length) throw malformed();
    return { runIds, values: IndexTables.chunked(parts, values as number, Float64Array) };
  }

  /** The tree an older convsearch kept as row 2 (its run ids as JSON after the values), when it was kept with `content`. */
  private jsonTreeOf(content: string): KeptTree | null {
    const t = this.readParts(JSON_TREE);
    if (t === null) return null;
    // written in parts: the values, then the run ids' JSON (`ids` bytes); else the ids in the head
    const idsBytes = t.head.ids;
    let runIds: unknown = t.head.runIds;
    let valuesEnd = t.total;
    if (Number.isSafeInteger(idsBytes) && (idsBytes as number) <= t.total) {
      valuesEnd = t.total - (idsBytes as number);
      // only the parts the JSON lies in are joined
      const first = Math.floor(valuesEnd / PART_BYTES);
      const tail = first + 1 === t.parts.length ? t.parts[first]! : Buffer.concat(t.parts.slice(first));
      runIds = parseJson(tail.toString('utf8', valuesEnd - first * PART_BYTES), 'the page tree row is malformed');
    }
    if (typeof t.head.content !== 'string' || !Array.isArray(runIds) || runIds.some((x) => typeof x !== 'string') || valuesEnd % 8 !== 0)
      throw new IndexDamagedError('the page tree row is malformed');
    return t.head.content === content
      ? { runIds: runIds as string[], values: IndexTables.chunked(t.parts, valuesEnd, Float64Array) }
      : null;
  }

  /**
   * The tables' walks row 6 keeps, when it was kept with `content` (a convsearch that knows nothing of it
   * leaves an older one behind: not taken). Its bytes are the media walk's pages and leaves, then the runs walk's.
   */
  private walksOf(content: string): KeptWalks | null {
    const r = this.readPart(WALKS);
    if (r === null || r.head.content !== content) return null;
    if (r.bytes.length % 4 !== 0) throw new IndexDamagedError('the table walks row is malformed');
    const words = wordsOf(r.bytes, Uint32Array);
    let at = 0;
    const walk = (w: unknown): TableWalk | null => {
      if (w === null) return null;
      const k = w as Partial<Record<'root' | 'pageSize' | 'usable' | 'walked' | 'pages' | 'leaves', unknown>> | null;
      const n = k?.pages;
      // (absent: a walk kept without its leaves)
      const l = k?.leaves ?? 0;
      if (
        k === null ||
        typeof k !== 'object' ||
        !Number.isSafeInteger(k.root) ||
        typeof k.walked !== 'string' ||
        !Number.isSafeInteger(n) ||
        (n as number) < 0 ||
        !Number.isSafeInteger(l) ||
        (l as number) < 0 ||
        at + (n as number) + (l as number) > words.length
      )
        throw new IndexDamagedError('the table walks row is malformed');
      const pages = words.subarray(at, (at += n as number));
      const leaves = k.leaves === undefined ? undefined : words.subarray(at, (at += l as number));
      // a walk kept without the geometry it was read with (this row's first form) is not taken
      if (!Number.isSafeInteger(k.pageSize) || !Number.isSafeInteger(k.usable)) return null;
      return {
        root: k.root as number,
        pageSize: k.pageSize as number,
        usable: k.usable as number,
        walked: k.walked,
        pages,
        ...(leaves !== undefined ? { leaves } : {}),
      };
    };
    const walks = { media: walk(r.head.media ?? null), runs: walk(r.head.runs ?? null) };
    if (at !== words.length) throw new IndexDamagedError('the table walks row is malformed');
    return walks;
  }

  /** Keeps the tables' walks taken with the map of `content` as row 6, or (null) drops them. `unchangedSinceRead`: see writePart. */
  putWalks(content: string, walks: KeptWalks | null, unchangedSinceRead = false): void {
    if (walks === null || (walks.media === null && walks.runs === null)) {
      this.s.dropPart.run(WALKS, partRow(WALKS, 0), partRow(WALKS + 1, 0));
      return;
    }
    const head = (w: TableWalk | null): Record<string, unknown> | null =>
      w === null
        ? null
        : {
            root: w.root,
            pageSize: w.pageSize,
            usable: w.usable,
            walked: w.walked,
            pages: w.pages.length,
            ...(w.leaves !== undefined ? { leaves: w.leaves.length } : {}),
          };
    // each walk's pages, then its leaves
    const pieces = [walks.media?.pages, walks.media?.leaves, walks.runs?.pages, walks.runs?.leaves].filter(
      (p): p is Uint32Array => p !== undefined,
    );
    this.writePart(WALKS, { content, media: head(walks.media), runs: head(walks.runs) }, pieces, unchangedSinceRead);
  }

  /**
   * What the index compared of the content it answers for (row 5, known-runs.ts): per run its count,
   * last seq and digest, and the digest of the run list; null when none was kept (an older convsearch
   * kept it as JSON in row 3, which is not read: the update reads every run's marks, and writes row 5).
   */
  knownRuns(): KnownRuns | null {
    const r = this.readParts(KNOWN_RUNS);
    if (r === null) return null;
    const { head, parts, total } = r;
    const n = head.runs;
    const malformed = (): IndexDamagedError => new IndexDamagedError('the known runs row is malformed');
    if (
      typeof head.content !== 'string' ||
      typeof head.runList !== 'string' ||
      !Number.isSafeInteger(head.runCount) ||
      !Number.isSafeInteger(n) ||
      (n as number) < 0 ||
      !isTextBlock(head.ids) ||
      !isTextBlock(head.digests)
    )
      throw malformed();
    // (absent: kept by a convsearch that did not keep them, or not taken)
    const buckets = head.buckets === undefined ? undefined : digestsOf(head.buckets, BUCKET_BYTES);
    if (buckets === null || (buckets !== undefined && buckets.length !== DIGEST_BUCKETS * BUCKET_BYTES)) throw malformed();
    const records = (n as number) * KNOWN_RECORD;
    const idsAt = padded(records);
    const digestsAt = idsAt + padded(head.ids.bytes);
    if (total !== digestsAt + head.digests.bytes) throw malformed();
    // the records joined (a record may straddle two parts); the texts decoded part by part, the row never joined whole
    const nums = wordsOf(partBytes(parts, 0, records), Float64Array);
    const lengths = new Uint32Array(nums.buffer, nums.byteOffset, nums.length * 2);
    const ids = partText(parts, idsAt, head.ids);
    const digests = partText(parts, digestsAt, head.digests);
    const numbers = new Map<string, number>();
    const digestAt = new Uint32Array((n as number) + 1);
    let id = 0;
    let digest = 0;
    const digestLength = n === 0 ? null : lengths[5]!;
    let sameLength = digestLength !== null;
    for (let i = 0; i < (n as number); i++) {
      const idEnd = id + lengths[i * 6 + 4]!;
      const digestEnd = digest + lengths[i * 6 + 5]!;
      if (lengths[i * 6 + 5] !== digestLength) sameLength = false;
      if (!Number.isSafeInteger(nums[i * 3]) || !Number.isSafeInteger(nums[i * 3 + 1]) || idEnd > ids.length || digestEnd > digests.length)
        throw malformed();
      numbers.set(ids.slice(id, idEnd), i);
      digestAt[i + 1] = digestEnd;
      id = idEnd;
      digest = digestEnd;
    }
    if (id !== ids.length || digest !== digests.length || numbers.size !== n) throw malformed();
    const runs = new KnownRunMap(numbers, nums, digests, digestAt);
    this.knownRead = { runs, parts, n: n as number, ids: head.ids, digests: head.digests, digestLength: sameLength ? digestLength : null };
    return {
      content: head.content,
      runList: head.runList,
      runCount: head.runCount as number,
      runs,
      ...(buckets !== undefined ? { buckets } : {}),
    };
  }

  /**
   * The store file's pass the index keeps (row 4: store/content.ts FilePass), or null when none is kept:
   * its raw page digests, then its pages' first words.
   */
  filePass(): KeptFilePass | null {
    const r = this.readParts(4);
    if (r === null) return null;
    const { head, parts, total } = r;
    const pages = head.pages;
    if (
      typeof head.stamp !== 'string' ||
      !Number.isInteger(head.seed) ||
      !Number.isInteger(head.pageSize) ||
      !Number.isSafeInteger(pages) ||
      total !== (pages as number) * 20
    )
      throw new IndexDamagedError('the file pass row is malformed');
    return {
      stamp: head.stamp,
      seed: head.seed as number,
      pageSize: head.pageSize as number,
      pages: pages as number,
      words: IndexTables.chunked(parts, total, Uint32Array),
    };
  }

  /** The stamp of the file pass the index keeps (row 4's head alone: no part is read), or null when none is kept. */
  filePassStamp(): string | null {
    const r = this.pageRow(4);
    const head: unknown = r === null ? null : parseJson(r.head, 'pages row 4 is malformed');
    const stamp = (head as { stamp?: unknown } | null)?.stamp;
    return typeof stamp === 'string' ? stamp : null;
  }

  /** The key filter kept (KeyFilter), or null when none is kept. */
  keyFilter(): KeyFilter | null {
    const r = this.readParts(KEY_FILTER);
    if (r === null) return null;
    const { head, parts, total } = r;
    if (!KeyFilter.sound(total, head.added as number)) throw new IndexDamagedError('the key filter row is malformed');
    // a copy: the filter is added to in place, the parts read stay what was read
    return new KeyFilter(Buffer.concat(parts, total), head.added as number);
  }

  /**
   * Keeps `f` as row 8, in the transaction that wrote the runs whose keys it took, after keyFilter() read
   * the row kept in that same transaction: the parts whose bytes did not change since are left as they
   * are (a key added changes one).
   */
  putKeyFilter(f: KeyFilter): void {
    this.writePart(KEY_FILTER, { added: f.added }, [f.bits], true);
  }

  /** Keeps `pass` as row 4, or (null) drops the one kept. `unchangedSinceRead`: see writePart. */
  putFilePass(pass: FilePass | null, unchangedSinceRead = false): void {
    if (pass === null) {
      this.s.dropPart.run(4, partRow(4, 0), partRow(5, 0));
      return;
    }
    const { digests, next } = pass;
    const head = { stamp: pass.stamp, seed: pass.seed, pageSize: pass.pageSize, pages: next.length };
    this.writePart(4, head, [digests, next], unchangedSinceRead);
  }

  /**
   * Keeps `k` as row 5 (and drops an older convsearch's row 3). Each run a record (count and last seq as
   * doubles, the lengths of its id and digest), then the ids, then the digests, each block from a part
   * boundary on: an appended run changes the last part of each. `unchangedSinceRead`: see writePart.
   */
  putKnownRuns(k: KnownRunsToWrite, unchangedSinceRead = false): void {
    const { head, pieces } = this.patchedKnownRuns(k) ?? laidOutKnownRuns(k);
    this.writePart(KNOWN_RUNS, head, pieces, unchangedSinceRead);
    this.s.dropPart.run(3, partRow(3, 0), partRow(4, 0));
  }

  /**
   * Row 5's bytes for `k` made from the bytes knownRuns() read, when `k`'s runs are those it read with
   * entries put in place (a digest as long as the one it replaces) and runs added after them, none
   * removed: the read bytes as they are, with the changed records and digests cut in and the added runs'
   * after each block; null otherwise (putKnownRuns lays every run out anew). At 50,000 runs laying them
   * out took ~40 ms of every update that changed a run.
   */
  private patchedKnownRuns(k: KnownRunsToWrite): { head: Record<string, unknown>; pieces: ArrayBufferView[] } | null {
    const r = this.knownRead;
    if (r === null || !(k.runs instanceof OverlaidMap) || k.runs.base !== r.runs) return null;
    const { changes, gone, added } = k.runs.delta();
    for (const key of gone) if (r.runs.has(key) && !changes.has(key)) return null;
    const unit = (b: { wide: boolean }): number => (b.wide ? 2 : 1);
    // every digest read as long: a digest's place is its run's number times that
    const digestLength = r.digestLength;
    if (digestLength === null) return null;
    const fits = (text: string, block: TextBlock): boolean => block.wide || !isWide(text);
    const records = r.n * KNOWN_RECORD;
    const idsAt = padded(records);
    const digestsAt = idsAt + padded(r.ids.bytes);
    // the runs put in place, by their number in the read order
    const placed: Array<[number, KnownRunContent]> = [];
    for (const [key, c] of changes) {
      const i = r.runs.numberOf(key);
      if (i !== undefined) placed.push([i, c]);
    }
    placed.sort((a, b) => a[0] - b[0]);
    for (const [, c] of placed) if (c.digest.length !== digestLength || !fits(c.digest, r.digests)) return null;
    const more = added.map((id): [string, KnownRunContent] => [id, changes.get(id)!]);
    const moreIds = more.map(([id]) => id).join('');
    const moreDigests = more.map(([, c]) => c.digest).join('');
    if (!fits(moreIds, r.ids) || more.some(([, c]) => c.digest.length !== digestLength) || !fits(moreDigests, r.digests)) return null;
    /** The read bytes of [from, to) with `cuts` (each at its byte offset, in order) laid over them. */
    const cutIn = (from: number, to: number, cuts: ReadonlyArray<readonly [number, ArrayBufferView]>): ArrayBufferView[] => {
      const out: ArrayBufferView[] = [];
      let at = from;
      for (const [offset, bytes] of cuts) {
        out.push(...partViews(r.parts, at, offset), bytes);
        at = offset + bytes.byteLength;
      }
      out.push(...partViews(r.parts, at, to));
      return out;
    };
    const encode = (text: string, block: TextBlock): Buffer => Buffer.from(text, block.wide ? 'utf16le' : 'latin1');
    const n = r.n + more.length;
    // a record's count and last seq (its lengths stay: the same id, a digest as long)
    const recordCuts = placed.map(([i, c]): [number, ArrayBufferView] => [i * KNOWN_RECORD, Float64Array.of(c.count, c.maxSeq)]);
    const digestCuts = placed.map(([i, c]): [number, ArrayBufferView] => [
      digestsAt + i * digestLength * unit(r.digests),
      encode(c.digest, r.digests),
    ]);
    const newIds = encode(moreIds, r.ids);
    const newDigests = encode(moreDigests, r.digests);
    const recordsNow = records + more.length * KNOWN_RECORD;
    const idsNow = r.ids.bytes + newIds.length;
    const digestsNow = r.digests.bytes + newDigests.length;
    const addedRecords = new KnownRecords(more.length);
    more.forEach(([id, c], i) => {
      addedRecords.set(i, id, c);
    });
    const head = {
      ...knownHead(k),
      runs: n,
      ids: { bytes: idsNow, wide: r.ids.wide },
      digests: { bytes: digestsNow, wide: r.digests.wide },
    };
    const pieces = [
      ...cutIn(0, records, recordCuts),
      addedRecords.nums,
      gapTo(recordsNow),
      ...partViews(r.parts, idsAt, idsAt + r.ids.bytes),
      newIds,
      gapTo(idsNow),
      ...cutIn(digestsAt, digestsAt + r.digests.bytes, digestCuts),
      newDigests,
    ];
    return { head, pieces };
  }

  /** `unchangedSinceRead`: no pages row was written since this process read them (the same generation): see writePart. */
  putPageMap(
    content: string,
    seed: number,
    pages: Uint32Array,
    tree: PageTree | null,
    media: KnownMedia | null = null,
    runsTable: KnownRunsTable | null = null,
    unchangedSinceRead = false,
  ): void {
    // `media` and `runs` in the head: a convsearch that knows nothing of them writes the head without them
    const runs =
      runsTable === null
        ? null
        : {
            pages: runsTable.pages,
            digest: runsTable.digest,
            ...(runsTable.blocks !== undefined ? { blocks: base64Of(runsTable.blocks) } : {}),
          };
    const head = { content, seed, ...(media !== null ? { media } : {}), ...(runs !== null ? { runs } : {}) };
    this.writePart(1, head, [pages], unchangedSinceRead);
    this.s.dropPart.run(JSON_TREE, partRow(JSON_TREE, 0), partRow(JSON_TREE + 1, 0));
    if (tree === null) {
      this.s.dropPart.run(TREE, partRow(TREE, 0), partRow(TREE + 1, 0));
      return;
    }
    const values = tree.pieces.reduce((n, p) => n + p.byteLength, 0);
    const lengths = new Uint32Array(tree.runIds.length);
    for (let i = 0; i < lengths.length; i++) lengths[i] = tree.runIds[i]!.length;
    const text = textBlock(tree.runIds.join(''));
    this.writePart(
      TREE,
      { content, runs: lengths.length, values, ids: text.block },
      [...tree.pieces, gapTo(values), lengths, gapTo(lengths.byteLength), text.bytes],
      unchangedSinceRead,
    );
  }

  private pageRow(id: number): { head: string; digests: Buffer } | null {
    const r = this.s.pageMap.get(id) as { id: number; head: string; digests: Buffer; sum: number } | undefined;
    if (r === undefined) return null;
    verifyRow('pages', [r.id, r.head, r.digests], r.sum);
    return r;
  }

  /**
   * Row `id`'s head and bytes: those of the row itself, or (a head that counts `parts`) of its part rows,
   * each present and sound, every one but the last PART_BYTES long. The bytes are the parts as SQLite
   * handed them, not joined: a copy of them all touched as many fresh pages of memory again (next to a
   * live writer on the bench store, ~2,000 page faults of a search). An update rewrites the parts that
   * changed only (writePart).
   */
  private readParts(id: number): { head: Record<string, unknown>; parts: Buffer[]; total: number } | null {
    this.partsRead.delete(id);
    const r = this.pageRow(id);
    if (r === null) return null;
    const head = parseJson(r.head, `pages row ${id} is malformed`);
    if (head === null || typeof head !== 'object') throw new IndexDamagedError(`pages row ${id} is malformed`);
    const h = head as Record<string, unknown>;
    if (h.parts === undefined) return { head: h, parts: [r.digests], total: r.digests.length };
    if (!Number.isSafeInteger(h.parts) || !Number.isSafeInteger(h.bytes) || (h.parts as number) >= partRow(1, 0))
      throw new IndexDamagedError(`pages row ${id} is malformed`);
    const count = h.parts as number;
    const total = h.bytes as number;
    if (total > count * PART_BYTES || (count > 0 && total <= (count - 1) * PART_BYTES))
      throw new IndexDamagedError(`pages row ${id} is malformed`);
    const parts: Buffer[] = [];
    let at = 0;
    for (const p of this.s.parts.iterate(partRow(id, 0), partRow(id, count)) as IterableIterator<{
      id: number;
      head: string;
      digests: Buffer;
      sum: number;
    }>) {
      const k = parts.length;
      verifyRow('pages', [p.id, p.head, p.digests], p.sum);
      if (p.id !== partRow(id, k)) throw new IndexDamagedError(`part ${k} of pages row ${id} is missing`);
      // (the last part's size is what the head's total leaves; every other one is whole)
      if (k + 1 < count ? p.digests.length !== PART_BYTES : at + p.digests.length !== total) break;
      parts.push(p.digests);
      at += p.digests.length;
    }
    if (parts.length !== count || at !== total)
      throw new IndexDamagedError(`pages row ${id} has ${at} bytes in ${parts.length} whole parts, its head says ${total} in ${count}`);
    this.partsRead.set(id, parts);
    return { head: h, parts, total };
  }

  /** readParts' bytes joined, for a row read as one piece. */
  private readPart(id: number): { head: Record<string, unknown>; bytes: Buffer } | null {
    const r = this.readParts(id);
    return r === null ? null : { head: r.head, bytes: r.parts.length === 1 ? r.parts[0]! : Buffer.concat(r.parts, r.total) };
  }

  /**
   * Words of `kind` in the first `to` bytes of a row's parts, as chunks of a part each (a view of the
   * part where it is aligned): what readParts read, never joined.
   */
  private static chunked<T extends Uint32Array | Float64Array>(
    parts: readonly Buffer[],
    to: number,
    kind: { new (buffer: ArrayBufferLike, offset: number, length: number): T; new (length: number): T; BYTES_PER_ELEMENT: number },
  ): ChunkedWords<T> {
    const size = kind.BYTES_PER_ELEMENT;
    const chunks: T[] = [];
    for (let k = 0, at = 0; at < to; k++, at += PART_BYTES) {
      const part = parts[k]!;
      chunks.push(wordsOf(part.subarray(0, Math.min(part.length, to - at)), kind));
    }
    // a single part (a row of an older convsearch, or a small one) may be of any size
    return parts.length === 1 ? ChunkedWords.of(chunks[0] ?? new kind(0)) : new ChunkedWords(chunks, Math.log2(PART_BYTES / size));
  }

  /**
   * Writes `pieces`, one after the other, as the parts of row `id`: only a part whose bytes differ from the
   * ones kept is written. The kept parts are read one by one, unless `unchangedSinceRead` (the caller knows
   * no pages row was written since this process read row `id`): then they are the bytes readPart read.
   * The pieces are not joined first: a part is a view of the piece holding it (one straddling two is copied).
   */
  private writePart(id: number, head: Record<string, unknown>, pieces: readonly ArrayBufferView[], unchangedSinceRead = false): void {
    const total = pieces.reduce((n, p) => n + p.byteLength, 0);
    const parts = Math.ceil(total / PART_BYTES);
    const read = unchangedSinceRead ? this.partsRead.get(id) : undefined;
    this.partsRead.delete(id);
    const bytes = new PieceReader(pieces);
    for (let k = 0; k < parts; k++) {
      const data = bytes.next(PART_BYTES);
      if (read?.[k]?.equals(data)) continue;
      const sum = rowSum([partRow(id, k), '', data]);
      if (read !== undefined) {
        this.s.putPageMap.run(partRow(id, k), '', data, sum);
        continue;
      }
      const kept = this.s.pageMap.get(partRow(id, k)) as { head: string; digests: Buffer; sum: number } | undefined;
      // the same bytes under a sound checksum: kept as they are
      if (kept?.head === '' && kept.sum === sum && kept.digests.equals(data)) continue;
      this.s.putPageMap.run(partRow(id, k), '', data, sum);
    }
    this.s.dropPart.run(-1, partRow(id, parts), partRow(id + 1, 0));
    const text = JSON.stringify({ ...head, parts, bytes: total });
    const empty = Buffer.alloc(0);
    this.s.putPageMap.run(id, text, empty, rowSum([id, text, empty]));
  }
}

/** Bytes of several pieces read in order, `n` at a time: a view when they lie in one piece, else a copy. */
class PieceReader {
  private piece = 0;
  private at = 0;

  constructor(private readonly pieces: readonly ArrayBufferView[]) {}

  next(n: number): Buffer {
    const got: Buffer[] = [];
    let left = n;
    while (left > 0 && this.piece < this.pieces.length) {
      const p = this.pieces[this.piece]!;
      const take = Math.min(left, p.byteLength - this.at);
      got.push(Buffer.from(p.buffer, p.byteOffset + this.at, take));
      this.at += take;
      left -= take;
      if (this.at === p.byteLength) {
        this.piece++;
        this.at = 0;
      }
    }
    return got.length === 1 ? got[0]! : Buffer.concat(got, n - left);
  }
}
