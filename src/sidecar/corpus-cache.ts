import { IndexDamagedError } from './errors.js';
import { type Layout, liveSegment } from './meta.js';
import { CORPUS_RUN_NUMBERS, CORPUS_RUN_TEXTS, SNAPSHOT_STAT_COLUMNS } from './schema.js';
import { CACHE_CHUNK, type CacheRow, type IndexTables, type RunRow, wordsOf } from './tables.js';

/**
 * A `corpus_cache` row, three blobs: `numbers`, the run count (u32, then 4 bytes of padding) and every
 * run's NUMBERS as float64 in this machine's order (as the page map's words, tables.ts wordsOf), run after run; `lengths`, the runs' document lengths (varints;
 * `lengths_at`, `lengths_size`); `runs`, a JSON array (UTF-8) holding the array of each run's
 * CORPUS_RUN_TEXTS. A search reads the numbers as they lie in the rows and parses the texts of the rows
 * holding the runs it shows only: at 50,000 runs, rows of JSON tuples per run cost ~80 ms to parse and
 * as much again in garbage collection. NUMBERS are a run's numbers, in their order there.
 */
export const NUMBERS = [...CORPUS_RUN_NUMBERS, 'warn', 'lengths_at', 'lengths_size', ...SNAPSHOT_STAT_COLUMNS] as const;
export type NumberColumn = (typeof NUMBERS)[number];
export type TextColumn = (typeof CORPUS_RUN_TEXTS)[number];

const HEADER = 8;
const WIDTH = NUMBERS.length;
const WIDTH_TEXTS = CORPUS_RUN_TEXTS.length;
/** Where each number lies in a run's NUMBERS (what CachedRuns.num takes). */
export const COL = Object.fromEntries(NUMBERS.map((c, i) => [c, i])) as Record<NumberColumn, number>;
/** Where each text lies in a run's CORPUS_RUN_TEXTS (what CachedRuns.textsOf gives). */
export const TEXT_AT = Object.fromEntries(CORPUS_RUN_TEXTS.map((c, i) => [c, i])) as Record<TextColumn, number>;

/** One run's entry: its texts and its numbers (`last_step` null as NaN). */
interface Entry {
  readonly texts: Array<string | null>;
  readonly numbers: number[];
  /** Its document lengths (varints). */
  readonly lengths: Buffer;
}

function encodeChunk(entries: readonly Entry[]): CacheRow {
  const head = Buffer.alloc(HEADER);
  head.writeUInt32LE(entries.length, 0);
  const values = new Float64Array(entries.length * WIDTH);
  let lengthsAt = 0;
  entries.forEach((e, i) => {
    values.set(e.numbers, i * WIDTH);
    values[i * WIDTH + COL.lengths_at] = lengthsAt;
    values[i * WIDTH + COL.lengths_size] = e.lengths.length;
    lengthsAt += e.lengths.length;
  });
  const runs = Buffer.from(JSON.stringify(entries.map((e) => e.texts)));
  return { numbers: Buffer.concat([head, Buffer.from(values.buffer)]), lengths: Buffer.concat(entries.map((e) => e.lengths)), runs };
}

/** The run count of a row, checked against the size of its numbers. */
function chunkCount(row: CacheRow): number {
  if (row.numbers.length < HEADER) throw new IndexDamagedError('a corpus cache row is cut short');
  const n = row.numbers.readUInt32LE(0);
  if (row.numbers.length !== HEADER + n * WIDTH * 8) throw new IndexDamagedError('a corpus cache row is cut short');
  return n;
}

/** `size` bytes of `blob` from `at`, checked to lie inside it. */
function slice(blob: Buffer, at: number, size: number): Buffer {
  if (!(Number.isInteger(at) && Number.isInteger(size) && at >= 0 && size >= 0 && at + size <= blob.length))
    throw new IndexDamagedError('a corpus cache row is cut short');
  return blob.subarray(at, at + size);
}

/** The texts of a row of `n` runs, from their JSON, checked. */
function rowTexts(json: Buffer, n: number): Array<Array<string | null>> {
  let texts: unknown;
  try {
    texts = JSON.parse(json.toString('utf8'));
  } catch {
    texts = null;
  }
  const damaged = () => new IndexDamagedError('a corpus cache row does not list its runs');
  if (!Array.isArray(texts) || texts.length !== n) throw damaged();
  // plain loops: this runs over every run when a listing reads them all
  for (let i = 0; i < n; i++) {
    const t: unknown = texts[i];
    if (!Array.isArray(t) || t.length !== WIDTH_TEXTS) throw damaged();
    for (let k = 0; k < WIDTH_TEXTS; k++) if (t[k] !== null && typeof t[k] !== 'string') throw damaged();
  }
  return texts as Array<Array<string | null>>;
}

/** The entries of a row, decoded whole (an update keeps some of them). */
function decodeChunk(row: CacheRow): Entry[] {
  const n = chunkCount(row);
  const texts = rowTexts(row.runs, n);
  const values = wordsOf(row.numbers.subarray(HEADER), Float64Array);
  return Array.from({ length: n }, (_, i) => {
    const numbers = Array.from(values.subarray(i * WIDTH, (i + 1) * WIDTH));
    return { texts: texts[i]!, numbers, lengths: slice(row.lengths, numbers[COL.lengths_at]!, numbers[COL.lengths_size]!) };
  });
}

function entryOf(r: RunRow, layout: Layout): Entry {
  const numbers = NUMBERS.map((c): number => {
    switch (c) {
      case 'seg':
        return liveSegment(r.seg, layout);
      case 'seg_from':
        return liveSegment(r.seg_from, layout);
      case 'warn':
        return r.skipped !== '[]' || r.unknown !== '[]' ? 1 : 0;
      case 'lengths_at':
      case 'lengths_size':
        return 0; // set by encodeChunk
      case 'last_step':
        return r.last_step ?? Number.NaN;
      default:
        return r[c];
    }
  });
  return { texts: CORPUS_RUN_TEXTS.map((c) => r[c]), numbers, lengths: r.lengths };
}

/**
 * The entries of cache row `chunk` (positions `from`…) before the first position of `from`…`to` in
 * `fresh` (none: every entry); none without a row or a set of positions.
 */
function keptEntries(t: IndexTables, chunk: number, from: number, to: number, fresh: ReadonlySet<number> | null): Entry[] {
  if (fresh === null) return [];
  let first = from;
  while (first < to && !fresh.has(first)) first++;
  if (first === from) return [];
  const row = t.cacheChunk(chunk);
  if (row === null) return [];
  const entries = decodeChunk(row);
  return entries.length < first - from ? [] : entries.slice(0, first - from);
}

/**
 * What every search needs of every run, in corpus order, CACHE_CHUNK runs a row: a search reads a few
 * rows instead of one per run, and an update rewrites the rows holding the corpus positions whose run
 * rows it wrote (`written`), and drops those past the end.
 */
export function writeCorpusCache(t: IndexTables, runCount: number, layout: Layout, written: Iterable<number> | 'all'): void {
  const chunks = Math.ceil(runCount / CACHE_CHUNK);
  const dirty =
    written === 'all'
      ? Array.from({ length: chunks }, (_, i) => i)
      : [...new Set([...written].map((ord) => Math.floor(ord / CACHE_CHUNK)))];
  const fresh = written === 'all' ? null : new Set(written);
  for (const chunk of dirty) {
    if (chunk >= chunks) continue;
    const from = chunk * CACHE_CHUNK;
    const to = Math.min(runCount, from + CACHE_CHUNK);
    // the chunk's entries before the first position written are kept as they are (their run rows and live
    // segments did not change: `written` names every one that did); an appended run reads its own row only
    const entries = keptEntries(t, chunk, from, to, fresh);
    for (const r of t.runsAt(from + entries.length, to)) entries.push(entryOf(r, layout));
    t.putCache(chunk, encodeChunk(entries));
  }
  t.dropCache(chunks);
}

/** Every run's cache entry, in corpus order: the numbers as the rows hold them, a row's texts parsed when one of them is asked for. */
export class CachedRuns {
  readonly count: number;
  /** Each row's numbers (tables.ts wordsOf: a view of its blob where aligned, else a copy). */
  private readonly numbers: Float64Array[];
  private readonly rows: readonly CacheRow[];
  /** The rows' texts parsed so far. */
  private readonly parsed: Array<Array<Array<string | null>> | undefined> = [];

  constructor(rows: readonly CacheRow[], runCount: number) {
    const counts = rows.map(chunkCount);
    counts.forEach((n, i) => {
      if (n !== CACHE_CHUNK && i !== rows.length - 1) throw new IndexDamagedError('the corpus cache does not list every run');
    });
    this.count = counts.reduce((a, b) => a + b, 0);
    if (this.count !== runCount) throw new IndexDamagedError('the corpus cache does not list every run');
    // a view, not a copy, where aligned: at 50,000 runs a copy is 6.8 MB of fresh pages, each a fault
    this.numbers = rows.map((r) => wordsOf(r.numbers.subarray(HEADER), Float64Array));
    this.rows = rows;
  }

  /** Number `column` (a COL value) of run `run`. */
  num(run: number, column: number): number {
    const row = Math.floor(run / CACHE_CHUNK);
    return this.numbers[row]![(run - row * CACHE_CHUNK) * WIDTH + column]!;
  }

  /** Run `run`'s document lengths (varints). */
  lengths(run: number): Buffer {
    return slice(this.rows[Math.floor(run / CACHE_CHUNK)]!.lengths, this.num(run, COL.lengths_at), this.num(run, COL.lengths_size));
  }

  text(run: number, column: TextColumn): string | null {
    return this.textsOf(run)[TEXT_AT[column]]!;
  }

  /** Run `run`'s CORPUS_RUN_TEXTS, parsed a row at a time when one of its runs is first asked for. */
  textsOf(run: number): ReadonlyArray<string | null> {
    const row = Math.floor(run / CACHE_CHUNK);
    const texts = (this.parsed[row] ??= rowTexts(this.rows[row]!.runs, this.rowSize(row)));
    return texts[run - row * CACHE_CHUNK]!;
  }

  private rowSize(row: number): number {
    return Math.min(CACHE_CHUNK, this.count - row * CACHE_CHUNK);
  }
}
