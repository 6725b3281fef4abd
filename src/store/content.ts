import { createHash, type Hash } from 'node:crypto';
import type { RunSnapshotStats, StoreReader, StoreSnapshot } from './reader.js';
import type { RunsTail } from './run-list.js';

/** A snapshot row of any state with the cells the digest covers beyond StoreSnapshot's (see `completeDigested`). */
export interface DigestRow extends StoreSnapshot {
  /** `state` as stored ('complete' where the table has no such column). */
  readonly state: unknown;
  /** The SQL type of `messages` (`typeof(messages)`). */
  readonly type: unknown;
}

/**
 * Where the index stopped reading a run: the last seq it saw (the prefix digest is taken there). Its
 * recorded RunContent is one, so the index's entries are passed as they are, not copied into a map of numbers.
 */
export interface RunCut {
  readonly maxSeq: number;
}

/**
 * What a store holds, digested: per run, a digest over every snapshot a replay could read (seq, step,
 * timestamp, state, and the messages), plus digests of the runs and the media. Two reads with equal
 * digests give the same index; any edit, a same-length in-place rewrite included, changes them. This
 * reads everything, so the sidecar asks for it only when the store's stamp says it may have changed.
 */
export interface RunContent {
  /** Snapshots of any state, and the highest seq. */
  readonly count: number;
  readonly maxSeq: number;
  /** Digest of all the run's snapshots, in seq order. */
  readonly digest: string;
  /**
   * Digest of the snapshots with `seq <= cut`, the cut being the last seq the index saw of this run:
   * equal to the index's digest when what it read is untouched and everything else was appended.
   */
  readonly prefix: string;
  /**
   * The run's snapshots by state and its last step counted from the very rows digested, as SQLite's
   * countsByRun and lastSteps count them (RowStats); absent where the digest was not made from such rows.
   */
  readonly stats?: RunSnapshotStats;
}

export interface StoreContent {
  /** Keyed by run id (rows whose run id is not text are kept under a key no run id can have). */
  readonly runs: ReadonlyMap<string, RunContent>;
  /** The media in insertion order: their count, digest, and the digest of the first `mediaCut`. */
  readonly media: RunContent;
  readonly runsTable: string;
  /** Everything above in one digest: equal means nothing the index depends on changed. */
  readonly digest: string;
  /** The bucket digests of `runs` that `digest` was taken with (runBuckets), to keep with them (absent: none to keep). */
  readonly runBuckets?: Uint8Array;
  /** Snapshot rows read and digested to get here (all of them, unless a page map vouched for the rest). */
  readonly rowsDigested?: number;
  /** Media rows read and digested to get here (none when a page map vouched for them). */
  readonly mediaDigested?: number;
  /** Pages of the store file read and hashed for the page map (none when a kept FilePass stood for them, or no map was taken). */
  readonly pagesHashed?: number;
  /** The page map's digests for the next comparison (SQLite read without locks), or null. */
  readonly pages?: Uint32Array | null;
  /** The b-tree the page map decoded, kept with its digests (store/sqlite/pages.ts), or null. */
  readonly tree?: PageTree | null;
  /**
   * The runs' digests were left to whoever replays them (ContentBasis.rowsElsewhere): `runs` is empty
   * and `digest` stands for nothing until they are filled in (`withRuns`).
   */
  readonly runsElsewhere?: boolean;
  /** The fingerprint of the media table's pages taken with the page map (store/sqlite/content.ts), or null. */
  readonly mediaPages?: string | null;
  /** The fingerprint of the runs table's pages taken with the page map (store/sqlite/content.ts), or null. */
  readonly runsPages?: string | null;
  /** The media and runs tables' walks taken with the page map, to keep with it (KeptWalks), or null. */
  readonly walks?: KeptWalks | null;
  /**
   * The runs table is byte for byte the one the index recorded with its page map (ContentBasis.runsTable):
   * the same runs, records and order as the run list the index placed; `runsTable` is the recorded digest,
   * and the store's run list was not read.
   */
  readonly runsTableHeld?: boolean;
  /** The full blocks' digests of the runs table's rows (store/run-list.ts), kept with its fingerprint when they are a run list in corpus order (else null or absent). */
  readonly runsBlocks?: Uint8Array | null;
  /**
   * The runs table was read from where its pages stopped vouching for its rows (store/sqlite/runs.ts):
   * the run list past the runs the index placed and the list's digests; the whole list was not read.
   */
  readonly runsTail?: RunsTail;
  /** Every run in `runs` carries its RunContent.stats, read from all its rows: a run absent has no rows. */
  readonly rowStats?: boolean;
  /**
   * The file pass to keep for the next map (FilePass), null when none is to be kept (the file is read
   * without a live writer, or changed during the pass), absent when the file was not hashed (the pass
   * kept was taken, or no map was made).
   */
  readonly filePass?: FilePass | null;
}

/**
 * A table's b-tree as a page map walked it (store/sqlite/pages.ts): its root page and the geometry it read
 * the pages with (the page size, and the bytes of a page the cells may use: where a cell's overflow
 * begins), every page it met in walk order (interior, leaf and overflow pages), and their fingerprint
 * (`walked`).
 */
export interface TableWalk {
  readonly root: number;
  readonly pageSize: number;
  readonly usable: number;
  readonly pages: Uint32Array;
  readonly walked: string;
  /** Its leaf pages in walk order (rowid order), each a run of `pages` (absent: a walk kept without them). */
  readonly leaves?: Uint32Array;
}

/**
 * The walks of the media and runs tables taken with a page map, kept with it (null: none taken): the
 * next map takes a walk as it is when every page it met still has its digest (it would meet them all
 * again, in the same order), instead of reading them one by one.
 */
export interface KeptWalks {
  readonly media: TableWalk | null;
  readonly runs: TableWalk | null;
}

/**
 * What the index kept of the media with the page map: the fingerprint of the media table's pages, and
 * the media count and digest read when the pages were those. The same pages mean the same media rows.
 */
export interface KnownMedia {
  readonly pages: string;
  readonly count: number;
  readonly digest: string;
}

/** What the index keeps of `content`'s media (null: no fingerprint was taken). */
export function knownMedia(content: StoreContent): KnownMedia | null {
  return content.mediaPages ? { pages: content.mediaPages, count: content.media.count, digest: content.media.digest } : null;
}

/**
 * What the index kept of the runs table with the page map: the fingerprint of its pages (with its
 * definition), and the runs table's digest read when the pages were those.
 */
export interface KnownRunsTable {
  readonly pages: string;
  readonly digest: string;
  /** The full blocks' digests of its rows (StoreContent.runsBlocks; absent: none kept). */
  readonly blocks?: Uint8Array;
}

/** What the index keeps of `content`'s runs table (null: no fingerprint was taken). */
export function knownRunsTable(content: StoreContent): KnownRunsTable | null {
  if (!content.runsPages) return null;
  const blocks = content.runsBlocks;
  return { pages: content.runsPages, digest: content.runsTable, ...(blocks ? { blocks } : {}) };
}

/**
 * The snapshots table's b-tree pages as a page map decoded them (store/sqlite/pages.ts): the next map
 * decodes again only the pages whose digest changed. Opaque outside the backend that made it. Its values
 * come in pieces, in order: a previous tree's leading chunks that held still, as they are (not copied),
 * then the values written anew.
 */
export interface PageTree {
  readonly runIds: readonly string[];
  readonly pieces: readonly Float64Array[];
}

/**
 * Run entries that give a run's count and last seq without making its entry (the index's known runs,
 * whose entries are made from its row when asked for): the content check compares those of every run,
 * and takes the entries of the runs it reads again only.
 */
export interface CountedRuns extends ReadonlyMap<string, RunContent> {
  /** Whether run `id` has an entry; if so its count and last seq are written to out[0] and out[1]. */
  marksInto(id: string, out: Float64Array): boolean;
}

/** Whether `runs` is CountedRuns. */
export const isCounted = (runs: ReadonlyMap<string, RunContent>): runs is CountedRuns =>
  typeof (runs as Partial<CountedRuns>).marksInto === 'function';

/** A tree's values as one array (one piece: itself). */
export function treeValues(tree: PageTree): Float64Array {
  if (tree.pieces.length === 1) return tree.pieces[0]!;
  const all = new Float64Array(tree.pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of tree.pieces) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

/**
 * Numbers held as chunks of 2^shift each (the last one may be shorter), read as one array: how a previous
 * map comes from the index, part by part, with no joined copy of it (a fresh page of memory costs a
 * fault: README; at 50,000 runs the map and its tree are 13 MB).
 */
export class ChunkedWords<T extends Uint32Array | Float64Array> {
  readonly length: number;
  readonly mask: number;

  constructor(
    readonly chunks: readonly T[],
    readonly shift: number,
  ) {
    this.mask = 2 ** shift - 1;
    this.length = chunks.reduce((n, c) => n + c.length, 0);
    // every chunk but the last holds exactly 2^shift: an index is found by a shift and a mask
    for (let k = 0; k + 1 < chunks.length; k++) if (chunks[k]!.length !== 2 ** shift) throw new RangeError('chunks of unequal sizes');
  }

  /** One array as it is (a single chunk). */
  static of<T extends Uint32Array | Float64Array>(words: T): ChunkedWords<T> {
    return new ChunkedWords([words], 31);
  }

  at(i: number): number {
    return this.chunks[i >>> this.shift]![i & this.mask]!;
  }

  /** Copies the numbers from `from` to `to` (excluded) into `into` at `at`, a chunk's piece at a time. */
  copyTo(into: T, at: number, from: number, to: number): void {
    for (let i = from; i < to; ) {
      const chunk = this.chunks[i >>> this.shift]!;
      const start = i & this.mask;
      const n = Math.min(to - i, chunk.length - start);
      into.set(chunk.subarray(start, start + n), at + i - from);
      i += n;
    }
  }
}

/** A PageTree as the index kept it: its values in chunks. */
export interface KeptTree {
  readonly runIds: readonly string[];
  readonly values: ChunkedWords<Float64Array>;
}

/**
 * What the index knows of the content it was built from, for backends that can tell which runs'
 * rows are untouched without reading them (SQLite's page map): the previous page digests, their key
 * and the b-tree decoded with them, per run its count, highest seq and digest, and the media's.
 */
export interface ContentBasis {
  readonly seed: number;
  readonly pages: ChunkedWords<Uint32Array> | null;
  /** The b-tree decoded with `pages` (null: none kept, every b-tree page is read). */
  readonly tree: KeptTree | null;
  /** Per run what the index recorded, as the content of a run read whole (its prefix its digest): an unchanged run's entry is taken as it is. */
  readonly runs: ReadonlyMap<string, RunContent>;
  /** The bucket digests of `runs` the index kept (runBuckets): only the buckets of runs that changed are hashed again. */
  readonly runBuckets?: Uint8Array | null;
  /**
   * Every run is about to be replayed from rows that carry the digest's cells (StoreReader.snapshotRows):
   * the backend may leave the runs' digests out (StoreContent.runsElsewhere), the replay makes them.
   */
  readonly rowsElsewhere?: boolean;
  /** The media as the index kept them with `pages` (null: none kept, the media rows are read). */
  readonly media: KnownMedia | null;
  /** The runs table as the index kept it with `pages` (null or absent: none kept, the runs rows are read). */
  readonly runsTable?: KnownRunsTable | null;
  /** The media and runs tables' walks kept with `pages` (null or absent: none kept, they are walked). */
  readonly walks?: KeptWalks | null;
  /** The store file's hashing pass as the index kept it (FilePass), read only when asked. */
  readonly filePass?: () => KeptFilePass | null;
  /** How many runs the index placed: a reader that lists its runs as it reads the content may take the digest of that many first (StoreReader.runListDigests). */
  readonly listed?: number;
}

/**
 * A page map's pass over the store file itself (store/sqlite/pages.ts), kept next to a live writer, whose
 * commits go to its log and leave the file as it was until a checkpoint: every page's raw digest (keyed by
 * `seed`, no role mixed in) and first word, with the file's stamp when it was hashed (inode, size,
 * modification and change times: stamp.ts; unchanged from before the pass to after it). A map of a file
 * with that same identity takes these instead of reading the file again, and hashes the log's pages only.
 */
export interface FilePass {
  readonly stamp: string;
  readonly seed: number;
  readonly pageSize: number;
  /** Four 32-bit lanes per page of the file, page 1 first. */
  readonly digests: Uint32Array;
  /** Each page's first four bytes, as the big-endian number the file holds. */
  readonly next: Uint32Array;
}

/** A FilePass as the index kept it: `words` holds the digests of its `pages` pages (four each), then their first words. */
export interface KeptFilePass extends Pick<FilePass, 'stamp' | 'seed' | 'pageSize'> {
  readonly pages: number;
  readonly words: ChunkedWords<Uint32Array>;
}

/** What the index recorded of a run's content: what RunContent holds but the prefix digest. */
export type KnownRunContent = Pick<RunContent, 'count' | 'maxSeq' | 'digest'>;

/** The entry of a run the index recorded, as a RunContent of all its rows (the prefix is the whole). */
export function recordedContent(count: number, maxSeq: number, digest: string): RunContent {
  return { count, maxSeq, digest, prefix: digest };
}

/** The digest of nothing: `createHash('sha256').digest('base64')`, written out so that loading this module hashes nothing. */
export const EMPTY_DIGEST = '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';

/** What hashCell puts before a string cell's text: its kind and length (UTF-16 units). */
const textHead = (v: string): string => `\u0000s${v.length}\u0000`;

/** Text cells up to this long are joined to a row's other small cells, to be hashed in one call. */
const SMALL_TEXT = 1024;

/**
 * What hashCell hashes of a cell that is not a BLOB nor a text longer than SMALL_TEXT, as text whose
 * UTF-8 bytes those are (every form starts with a NUL, so joined texts encode as they would one by one),
 * or null for the others.
 */
function smallCellText(v: unknown): string | null {
  if (v === null || v === undefined) return '\u0000n';
  if (typeof v === 'number') return `\u0000i${v}\u0000`;
  if (typeof v === 'bigint') return `\u0000g${v}\u0000`;
  if (typeof v === 'string') return v.length <= SMALL_TEXT ? textHead(v) + v : null;
  if (Buffer.isBuffer(v)) return null;
  return `\u0000?${String(v)}\u0000`;
}

/** A value as the replay receives it, unambiguously: type tag, length where it varies, bytes. */
export function hashCell(h: Hash, v: unknown): void {
  // a long text is hashed where it is: joined to its head it would be copied
  if (typeof v === 'string') h.update(textHead(v)).update(v, 'utf8');
  else if (Buffer.isBuffer(v)) h.update(`\u0000b${v.length}\u0000`).update(v);
  else h.update(smallCellText(v)!);
}

/** Where a run's chain of row digests starts (ContentDigester). */
const CHAIN_START = Buffer.alloc(32);

/** A text longer than this is not held for the next row to be compared with: it is hashed whole (a huge message is not held twice). */
const SHARED_MAX = 1 << 24;

/**
 * The longest start `text` shares with `prev`, in UTF-16 units, but never ending between the halves of a
 * surrogate pair (so that the rest's UTF-8 bytes are its own). Found by comparing slices of 16,384, then
 * 1,024, then 64 characters (each a memcmp in V8), then characters: about one pass over the shared part.
 */
export function sharedStart(prev: string, text: string): number {
  const n = Math.min(prev.length, text.length);
  let l = 0;
  for (let step = 1 << 14; step >= 64; step >>= 4) while (l + step <= n && text.slice(l, l + step) === prev.slice(l, l + step)) l += step;
  while (l < n && text.charCodeAt(l) === prev.charCodeAt(l)) l++;
  const last = l > 0 ? text.charCodeAt(l - 1) : 0;
  return last >= 0xd800 && last <= 0xdbff ? l - 1 : l;
}

/** sharedStart of two ASCII texts given as their bytes (no surrogates: the longest common start), compared as it does. */
export function sharedBytes(prev: Buffer, text: Buffer): number {
  const n = Math.min(prev.length, text.length);
  let l = 0;
  for (let step = 1 << 14; step >= 64; step >>= 4) while (l + step <= n && text.compare(prev, l, l + step, l, l + step) === 0) l += step;
  while (l < n && text[l] === prev[l]) l++;
  return l;
}

/**
 * Digests one run's snapshots as they come, in seq order, taking the prefix digest at `cut`. A row's
 * last cell is its messages text: of the start it shares with the previous row's (sharedStart) only the
 * length is hashed, then the rest. Every text is still bound exactly (its shared start compared in full
 * with a text bound before, the rest hashed), and a snapshot repeats its predecessor, so the hash reads
 * only the new bytes (~1/6 of the bench store's).
 *
 * The rows are chained: row r's digest is SHA-256 of row r-1's (32 zero bytes before the first) and of
 * what row r hashes, and the run's digest is its last row's. So a digest, with the run's last text,
 * is where the digest of rows appended after them goes on from (`resume`): a run that grew by a
 * snapshot is read from its new rows, not from its first (a long run repeats 100 MB and more).
 */
export class ContentDigester {
  /** The row being hashed, chained to `last`. */
  private hash: Hash | null = null;
  /** The digest of the rows so far (the chain's zero start before the first). */
  private last: Buffer = CHAIN_START;
  private count = 0;
  private maxSeq = 0;
  private prefix: string | null = null;
  /** The previous row's messages text, when it is one and not too long to hold: as a string, or as its ASCII bytes (addAscii). */
  private previous: string | null = null;
  private previousAscii: Buffer | null = null;
  private readonly stats: RowStats | null;

  /** `stats`: the cells are a SQLite row's (seq, step_index, timestamp, state, typeof(messages), messages): count them (RunContent.stats). */
  constructor(
    private readonly cut: number,
    stats = false,
  ) {
    this.stats = stats ? new RowStats() : null;
  }

  /**
   * A digester that goes on after the rows `known` digested (their cut is the last of them: its prefix
   * is `known.digest`), `lastText` being the messages cell of the last of them as a row gives it (a
   * string, or an ASCII text's bytes; anything else: none to share). Its RunContent counts those rows
   * too, and carries no stats (it did not see them). Null when `known.digest` is not a chain's.
   */
  static resume(known: RunContent, lastText: unknown): ContentDigester | null {
    const last = Buffer.from(known.digest, 'base64');
    if (known.count < 1 || last.length !== 32 || last.toString('base64') !== known.digest) return null;
    const d = new ContentDigester(known.maxSeq);
    d.last = last;
    d.count = known.count;
    d.maxSeq = known.maxSeq;
    d.prefix = known.digest;
    d.hold(typeof lastText === 'string' || Buffer.isBuffer(lastText) ? lastText : null);
    return d;
  }

  add(seq: number, cells: readonly unknown[]): void {
    const last = cells.length - 1;
    const head = this.begin(seq, cells, last);
    const text = cells[last];
    const prev = typeof text === 'string' ? (this.previous ?? this.previousAscii?.toString('latin1') ?? null) : null;
    const shared = prev !== null ? sharedStart(prev, text as string) : 0;
    const h = this.hash!;
    if (shared > 0) {
      // (`\u0000r`: a tag hashCell never writes)
      h.update(`${head}\u0000r${(text as string).length}:${shared}\u0000`, 'utf8').update((text as string).slice(shared), 'utf8');
    } else {
      h.update(head, 'utf8');
      hashCell(h, text);
    }
    this.hold(typeof text === 'string' ? text : null);
    this.end(seq);
  }

  /**
   * `add` of a row whose last cell is a text given as its bytes, every one ASCII (a byte is then a UTF-16
   * unit, and the bytes are its UTF-8): the same digest, with no JavaScript string made of the text. A
   * run's texts grow snapshot by snapshot; as strings each took fresh pages of the engine's heap (a run
   * of 250 MB read as strings: 62k page faults; as bytes, 18k).
   */
  addAscii(seq: number, cells: readonly unknown[], text: Buffer): void {
    const head = this.begin(seq, cells, cells.length);
    let shared = 0;
    if (this.previousAscii !== null) shared = sharedBytes(this.previousAscii, text);
    else if (this.previous !== null) shared = sharedStart(this.previous, text.toString('latin1'));
    const h = this.hash!;
    if (shared > 0) h.update(`${head}\u0000r${text.length}:${shared}\u0000`, 'utf8').update(text.subarray(shared));
    else h.update(`${head}\u0000s${text.length}\u0000`, 'utf8').update(text);
    this.hold(text);
    this.end(seq);
  }

  /** Holds a row's text (a string, or ASCII bytes) for the next row to be compared with, unless it is too long to hold. */
  private hold(text: string | Buffer | null): void {
    const kept = text !== null && text.length <= SHARED_MAX ? text : null;
    this.previous = typeof kept === 'string' ? kept : null;
    this.previousAscii = Buffer.isBuffer(kept) ? kept : null;
  }

  /**
   * A row's start: its stats, the prefix digest when it is the first past the cut, and its first `n`
   * cells hashed, the small ones returned as text to be hashed with what follows them.
   */
  private begin(seq: number, cells: readonly unknown[], n: number): string {
    this.stats?.add(cells[3], cells[1]);
    if (this.prefix === null && seq > this.cut) this.prefix = this.digestSoFar();
    const h = (this.hash = createHash('sha256').update(this.last));
    // the small cells in one update (one call into the hash per row, not one or two per cell)
    let head = '';
    for (let i = 0; i < n; i++) {
      const t = smallCellText(cells[i]);
      if (t !== null) head += t;
      else {
        h.update(head, 'utf8');
        head = '';
        hashCell(h, cells[i]);
      }
    }
    return head;
  }

  private end(seq: number): void {
    this.last = this.hash!.digest();
    this.hash = null;
    this.count++;
    if (seq > this.maxSeq) this.maxSeq = seq;
  }

  /**
   * Lets the previous row's text go: the next row is hashed whole. For a reader that reads runs one after
   * another, once a run's rows are done (then no row follows, and the text is not held to the end).
   */
  release(): void {
    this.hold(null);
  }

  /** The digest of the rows so far: the last one's, or that of nothing. */
  private digestSoFar(): string {
    return this.count === 0 ? EMPTY_DIGEST : this.last.toString('base64');
  }

  finish(): RunContent {
    const digest = this.digestSoFar();
    const content = { count: this.count, maxSeq: this.maxSeq, digest, prefix: this.prefix ?? digest };
    return this.stats ? { ...content, stats: this.stats.finish() } : content;
  }
}

/**
 * A run's snapshots by state and its last step, counted row by row exactly as SQLite's
 * `SUM(state = 'complete'), SUM(state = 'interrupted'), MAX(step_index)` (sqlite/snapshots.ts) and
 * stepOf count them: a state is one only as that very text; MAX orders any number below any text and
 * any text below any BLOB, so a text or BLOB step makes the last step none, and a maximum that is not
 * an integer is none too. What a build reads anyway: no second pass over the table for them.
 */
export class RowStats {
  private complete = 0;
  private interrupted = 0;
  private maxStep: number | null = null;
  /** A text or BLOB step was met: MAX is one of those, not a number. */
  private notNumber = false;

  add(state: unknown, step: unknown): void {
    if (state === 'complete') this.complete++;
    else if (state === 'interrupted') this.interrupted++;
    if (typeof step === 'number') {
      if (this.maxStep === null || step > this.maxStep) this.maxStep = step;
    } else if (typeof step === 'string' || Buffer.isBuffer(step)) this.notNumber = true;
  }

  finish(): RunSnapshotStats {
    const step = this.notNumber ? null : this.maxStep;
    return { complete: this.complete, interrupted: this.interrupted, lastStep: step !== null && Number.isInteger(step) ? step : null };
  }
}

/**
 * The complete snapshots of a run's rows of every state (in seq order), each row added to `d` as it
 * passes: what the digest of the run's content covers, taken from the rows its replay reads, with the
 * cells and order `allRuns` (sqlite/content.ts) hashes them in, so the digests are bit-identical.
 */
export function* completeDigested(rows: Iterable<DigestRow>, d: ContentDigester): Generator<StoreSnapshot> {
  for (const r of rows) {
    d.add(Number(r.seq), [r.seq, r.stepIndex, r.timestamp, r.state, r.type, r.messages]);
    if (r.state === 'complete') yield r;
  }
}

/** `content` (its runs left out, StoreContent.runsElsewhere) with the runs' digests made by their replay. */
export function withRuns(content: StoreContent, runs: ReadonlyMap<string, RunContent>, rowsDigested: number): StoreContent {
  return withDigest({ ...content, runs, rowsDigested, runsElsewhere: false });
}

/** `content` with the digest of what it holds now, and the bucket digests of its runs (`buckets` when they are its runs' already). */
export function withDigest(content: StoreContent, buckets: Uint8Array = runBuckets(content.runs)): StoreContent {
  return { ...content, runBuckets: buckets, digest: totalDigest(content.runs, content.media, content.runsTable, buckets) };
}

/**
 * Lines for a hash, gathered and handed over about 64 KB at a time: one update a batch, not one or two a
 * line (50k runs: ~100k calls). The same bytes as a line at a time: a batch ends only where a line does.
 */
export class BatchedHash {
  private text = '';

  constructor(private readonly hash: Hash) {}

  add(line: string): void {
    this.text += line;
    if (this.text.length >= 1 << 16) this.flush();
  }

  /** The hash, every line added so far handed over. */
  flush(): Hash {
    this.hash.update(this.text, 'utf8');
    this.text = '';
    return this.hash;
  }
}

/**
 * What `pick` makes of each entry of `map`, in its forEach's order, gathered into an array and iterated:
 * the iterators of a map that makes its entries as it goes (plain loops, not generators).
 */
export function collected<K, V, T>(map: ReadonlyMap<K, V>, pick: (value: V, key: K) => T): MapIterator<T> {
  const out: T[] = [];
  map.forEach((v, k) => {
    out.push(pick(v, k));
  });
  return out[Symbol.iterator]() as unknown as MapIterator<T>;
}

/**
 * `base` with some entries put in place (`changes`: a key of base keeps its place, a new key comes after
 * them all, in order) and `gone` keys (none of them in `changes`) removed: what a copy of base changed so
 * would hold, in its order, made without copying base (at 50k runs the copy was 44 ms of an update that
 * changed one run).
 */
export class OverlaidMap<K, V> implements ReadonlyMap<K, V> {
  readonly size: number;
  /** The keys of `changes` that base lacks, in order. */
  private readonly added: K[] = [];

  constructor(
    readonly base: ReadonlyMap<K, V>,
    private readonly changes: ReadonlyMap<K, V>,
    private readonly gone: ReadonlySet<K>,
  ) {
    for (const k of changes.keys()) if (!base.has(k)) this.added.push(k);
    let removed = 0;
    for (const k of gone) if (base.has(k) && !changes.has(k)) removed++;
    this.size = base.size - removed + this.added.length;
  }

  get(key: K): V | undefined {
    const v = this.changes.get(key);
    if (v !== undefined || this.changes.has(key)) return v;
    return this.gone.has(key) ? undefined : this.base.get(key);
  }

  has(key: K): boolean {
    return this.changes.has(key) || (!this.gone.has(key) && this.base.has(key));
  }

  /**
   * Base's entries (changed ones in their place, gone ones left out), then the added ones: plain loops,
   * not generators (50,001 entries: 13–14 ms through the generators, cold; 2 ms so).
   */
  forEach(f: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    const { changes, gone } = this;
    this.base.forEach((v, k) => {
      if (changes.has(k)) f.call(thisArg, changes.get(k)!, k, this);
      else if (!gone.has(k)) f.call(thisArg, v, k, this);
    });
    for (const k of this.added) f.call(thisArg, changes.get(k)!, k, this);
  }

  entries(): MapIterator<[K, V]> {
    return collected(this, (v, k): [K, V] => [k, v]);
  }

  /** forEach's keys, read from base's keys (an entry base makes when asked for is not made for them). */
  keys(): MapIterator<K> {
    const { changes, gone } = this;
    // (a spread of a Map's keys is one call into V8, a loop over them one per key)
    const all = [...this.base.keys()];
    const out = gone.size === 0 ? all : all.filter((k) => changes.has(k) || !gone.has(k));
    for (const k of this.added) out.push(k);
    return out[Symbol.iterator]() as unknown as MapIterator<K>;
  }

  values(): MapIterator<V> {
    return collected(this, (v) => v);
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  /** What is laid over base: the entries put in place or added, and the keys removed. */
  delta(): { readonly changes: ReadonlyMap<K, V>; readonly gone: ReadonlySet<K>; readonly added: readonly K[] } {
    return { changes: this.changes, gone: this.gone, added: this.added };
  }

  /** The keys whose entry may not be base's: those put in place or added, then those removed. */
  overlaid(): K[] {
    return [...this.changes.keys(), ...this.gone];
  }
}

/** The buckets the runs' entries are hashed in (totalDigest): a run's by a hash of its key. */
export const DIGEST_BUCKETS = 256;
/** The bytes of a bucket's digest. */
export const BUCKET_BYTES = 32;

/** A run key's bucket: FNV-1a over its UTF-16 code units (lone surrogates as they are). */
function bucketOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % DIGEST_BUCKETS;
}

/** Bucket digests kept with the run entries they were taken of (`base`: the very map). */
export interface KeptBuckets {
  readonly base: ReadonlyMap<string, RunContent>;
  readonly buckets: Uint8Array;
}

/**
 * Each bucket's SHA-256 (32 bytes, bucket 0 first) over its runs in key order: per run the bytes
 * hashCell makes of its key, then its count, last seq and digest (a key's lone surrogates stay lone in
 * a line: a NUL and digits stand on either side of it). With `kept` taken of the map `runs` lays its
 * changes over (OverlaidMap), only the buckets of the runs laid over are hashed again: at 50,000 runs
 * hashing every run's line took ~30 ms of an update after one appended run.
 */
export function runBuckets(runs: ReadonlyMap<string, RunContent>, kept: KeptBuckets | null = null): Uint8Array {
  const usable = kept !== null && kept.buckets.length === DIGEST_BUCKETS * BUCKET_BYTES;
  if (usable && runs === kept.base) return kept.buckets;
  let again: Uint8Array | null = null;
  const out = new Uint8Array(DIGEST_BUCKETS * BUCKET_BYTES);
  if (usable && runs instanceof OverlaidMap && runs.base === kept.base) {
    out.set(kept.buckets);
    again = new Uint8Array(DIGEST_BUCKETS);
    for (const key of runs.overlaid() as string[]) again[bucketOf(key)] = 1;
  }
  const keys: string[][] = Array.from({ length: DIGEST_BUCKETS }, () => []);
  runs.forEach((_, key) => {
    const b = bucketOf(key);
    if (again === null || again[b] === 1) keys[b]!.push(key);
  });
  for (let b = 0; b < DIGEST_BUCKETS; b++) {
    if (again !== null && again[b] !== 1) continue;
    const h = new BatchedHash(createHash('sha256'));
    for (const key of keys[b]!.sort()) {
      const r = runs.get(key)!;
      h.add(`${textHead(key)}${key}${r.count}:${r.maxSeq}:${r.digest}\n`);
    }
    out.set(h.flush().digest(), b * BUCKET_BYTES);
  }
  return out;
}

/**
 * The one digest of everything: the runs table's digest, the media's count and digest, then the runs'
 * bucket digests (runBuckets; `buckets` when taken already).
 */
export function totalDigest(
  runs: ReadonlyMap<string, RunContent>,
  media: RunContent,
  runsTable: string,
  buckets: Uint8Array = runBuckets(runs),
): string {
  return createHash('sha256').update(`${runsTable}\n${media.count}:${media.digest}\n`).update(buckets).digest('base64');
}

/**
 * The content of a store read through the seam alone, for backends that have no faster way: every
 * run's snapshots of both states merged in seq order, the run list, and the reader's own stamp
 * (which covers what cannot be listed, such as media) standing for the media and runs digests.
 */
export function readerContent(reader: StoreReader, cuts: ReadonlyMap<string, RunCut>): StoreContent {
  const runs = new Map<string, RunContent>();
  let rowsDigested = 0;
  for (const run of reader.runs()) {
    const d = new ContentDigester(cuts.get(run.runId)?.maxSeq ?? 0);
    const complete = reader.completeSnapshots(run.runId)[Symbol.iterator]();
    const interrupted = reader.interruptedSnapshots(run.runId)[Symbol.iterator]();
    let c = complete.next();
    let i = interrupted.next();
    while (!c.done || !i.done) {
      const fromComplete = i.done === true || (c.done !== true && c.value.seq < i.value.seq);
      const s: StoreSnapshot = fromComplete ? (c.value as StoreSnapshot) : (i.value as StoreSnapshot);
      d.add(s.seq, [s.seq, s.stepIndex, s.timestamp, fromComplete ? 'complete' : 'interrupted', typeof s.messages, s.messages]);
      if (fromComplete) c = complete.next();
      else i = interrupted.next();
    }
    const done = d.finish();
    rowsDigested += done.count;
    runs.set(run.runId, done);
  }
  const media: RunContent = { count: 0, maxSeq: 0, digest: EMPTY_DIGEST, prefix: EMPTY_DIGEST };
  const runsTable = createHash('sha256')
    .update(JSON.stringify(reader.runs()))
    .update(reader.stamp() ?? '')
    .digest('base64');
  return { runs, media, runsTable, digest: totalDigest(runs, media, runsTable), rowsDigested, pages: null };
}
