import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import {
  ChunkedWords,
  type FilePass,
  type KeptFilePass,
  type KeptTree,
  type KeptWalks,
  type PageTree,
  type TableWalk,
  treeValues,
} from '../content.js';
import { type HashJob, type HelperStart, hashAll, hashPagesAt, newHashJob, stopHelper } from './page-hash.js';
import { PRIME as LANE_PRIMES } from './page-hash-wasm.js';
import { settledAt, stampOf } from './stamp.js';
import { readWalSnapshot, type WalLog, walPageOffsets } from './wal.js';

/**
 * A map of the database's pages (the store file's, or next to a live writer the file's with its log's
 * latest frames in their place: WalView): a keyed 128-bit digest of every page, mixed with what the page is
 * to the snapshots table (interior, leaf, or overflow page `k` of the row `seq`), and per run (by the
 * run ids read from the leaf cells) its row count, highest seq and pages. Two maps with equal digests
 * for every page of a run, and equal counts, mean the run's rows are byte-identical: its content digest
 * need not be read again. The digest is not cryptographic (`--verify` re-reads with SHA-256); it is
 * keyed with a random seed kept in the index, and a change of one 32-bit word per lane always shows.
 *
 * Reading the file costs one sequential pass (about 0.1 s for 600 MB from the page cache on one core,
 * the hash in WebAssembly SIMD adding little: page-hash-wasm.ts; shared with a helper thread:
 * page-hash.ts) and a read of each b-tree page of the snapshots table whose digest changed since the
 * previous map (all of them without one); what SQLite would spend decoding
 * and SHA-256 spends ~0.6 s. Anything this parser does not expect (another text encoding, a misordered
 * tree, a run id that is not text, a cycle, a failed read) gives null: the caller reads the whole content instead.
 */
export interface PageMap {
  readonly pageSize: number;
  /** Four 32-bit lanes per page, page 1 first. */
  readonly digests: Uint32Array;
  readonly runs: PageRuns;
  /** The snapshots b-tree as decoded, for the next map. */
  readonly tree: PageTree;
  /**
   * The media table's b-tree walked: its pages in walk order, and their fingerprint (their digests in one
   * SHA-256: tablePages); null when no media root was given or its tree is not one the walk knows.
   */
  readonly media: TableWalk | null;
  /** The runs table's b-tree, as `media` is (tablePages); null when no runs root was given or its tree is not one the walk knows. */
  readonly runsTable: TableWalk | null;
  /** The runs table walked again: its first leaves that still hold the rows the kept walk's held (null: not walked again, or no kept walk listed its leaves). */
  readonly runsLeaves: LeavesHeld | null;
  /** Pages of the file this map read and hashed (0: it took the file pass it was given). */
  readonly pagesHashed: number;
  /** The pass to keep for the next map: taken next to a live writer from a file that held still, else null. */
  readonly filePass: FilePass | null;
}

/**
 * Per run (in the order the walk met them, `ids` being the tree's run ids): its row count, highest seq,
 * and whether a page of it (a leaf holding one of its cells, or an overflow page of one) has a digest,
 * its role mixed in, other than the one the previous map holds for it (a page past its end included):
 * always true without previous digests. Of a run with such a page, the first row whose own bytes may
 * have changed (ROW_CHANGED): a row is vouched for when each of its overflow pages is as it was and its
 * cell, wherever it lies now, has the bytes a cell of that seq had in the previous tree (cellDigest; a
 * cell the previous tree did not digest vouches for nothing). A run none of whose rows changed, with
 * its count and highest seq, has its rows as they were; one whose first changed row lies past the rows
 * the index read was only appended to. Typed arrays, not an object or a boxed number per run: an update reads every entry once.
 */
export interface PageRuns {
  readonly ids: readonly string[];
  readonly counts: Float64Array;
  readonly maxSeqs: Float64Array;
  /** PAGE_CHANGED: a page of the run changed; ROW_CHANGED too: `firstChanged` holds the first row that may have. */
  readonly changed: Uint8Array;
  readonly firstChanged: Float64Array;
}

export const PAGE_CHANGED = 1;
export const ROW_CHANGED = 2;

/**
 * When the pass is shared with a helper thread: a file of `bytes` or more, while `spare()` says a core is
 * free for it (tests force a helper, or none, whatever the machine).
 */
export interface HelperPolicy {
  readonly bytes: number;
  readonly spare: () => boolean;
}

/** Files smaller than 64 MB are hashed on the main thread alone: a helper thread costs more to start than it saves. */
const HELPER: HelperPolicy = { bytes: 64 * 1024 * 1024, spare: () => coreToSpare() };
/** A helper stalled this long while copying a chunk in is given up on (the caller then reads the whole content). */
const HELPER_STALL_MS = 2000;
/** A helper started ahead that no pass has taken within this ends by itself. */
const SPARE_WAIT_MS = 5000;
const HELPER_SCRIPT = new URL('./page-hash-worker.js', import.meta.url);

/** The hashing pass under way: this thread's share is hashed by finishHashing. */
interface Hashing {
  readonly job: HashJob;
  readonly helper: Worker | null;
}

function procLoadavg(): string | null {
  try {
    return readFileSync('/proc/loadavg', 'latin1');
  } catch {
    return null;
  }
}

/**
 * Whether a core is spare for the pass: one left over when this thread and V8's own background threads
 * have theirs (a process this young keeps one busy compiling its code and collecting). On a 2-CPU VM a
 * helper took ~130 ms of CPU and ~2,400 page faults of a search after one appended run and gave no wall
 * time back (README); on a saturated machine its start-up and share cost more than they save. Linux
 * tells how many tasks are runnable now (/proc/loadavg's fourth field, this thread among them): the
 * pass lasts ~0.1 s, and a minute's load average (the measure elsewhere) tells more of what ran before
 * it than of what runs beside it.
 */
export function coreToSpare(loadavgText: string | null = procLoadavg(), cores = availableParallelism()): boolean {
  const runnable = Number(/^\S+ \S+ \S+ (\d+)\//.exec(loadavgText ?? '')?.[1] ?? NaN);
  return Number.isInteger(runnable) ? runnable - 1 < cores - 2 : loadavg()[0]! < cores - 2;
}

/** A helper started with its job, or one that waits for it as a message. Null when none starts. */
function startHelper(start: HelperStart): Worker | null {
  try {
    const helper = new Worker(HELPER_SCRIPT, { workerData: start, stdout: true, stderr: true });
    helper.unref();
    helper.on('error', () => {}); // a helper that cannot start claims nothing: this thread hashes its share
    return helper;
  } catch {
    return null;
  }
}

/** A helper started ahead of the next pass (prestartPageHashing), waiting for its job. */
let spare: Worker | null = null;

/**
 * A pass over a file of `bytes` comes next (the store's stamp changed): its helper thread starts now,
 * so that its ~20 ms of start-up overlap what the caller does before the pass (the pass posts it the job).
 * A spare no pass takes ends by itself after SPARE_WAIT_MS.
 */
export function prestartPageHashing(bytes: number, helper: HelperPolicy = HELPER): void {
  if (spare === null && bytes >= helper.bytes && helper.spare()) spare = startHelper({ waitMs: SPARE_WAIT_MS });
}

/**
 * Starts the hashing pass: for a large file on a machine with a core to spare, a helper thread that
 * takes chunks as soon as it runs (finishHashing hashes the rest on this thread). A helper started
 * ahead is given the job; one started ahead for a file too small is stopped.
 */
function startHashing(fd: number, pageSize: number, pages: number, seed: number, policy: HelperPolicy): Hashing {
  const job = newHashJob(fd, pageSize, pages, seed);
  const ahead = spare;
  spare = null;
  if (pages * pageSize < policy.bytes) {
    void ahead?.terminate();
    return { job, helper: null };
  }
  if (ahead === null) return { job, helper: policy.spare() ? startHelper({ job }) : null };
  try {
    ahead.postMessage(job);
  } catch {
    // it has ended: this thread hashes everything
  }
  return { job, helper: ahead };
}

/**
 * The raw digest of every page (keyed by `seed`) and each page's first four bytes (an overflow page's
 * next page), once this thread has hashed what the helper did not publish. Null when the helper stalled
 * in the middle of copying a chunk in.
 */
function finishHashing({ job }: Hashing): { digests: Uint32Array; next: Uint32Array } | null {
  if (!hashAll(job, HELPER_STALL_MS)) return null;
  return { digests: new Uint32Array(job.digests), next: new Uint32Array(job.next) };
}

/** Mixes what a page is into its digest: a page that changed role changed, whatever its bytes. */
function mixRole(digests: Uint32Array, page: number, role: number, seq: number, k: number): void {
  const i = (page - 1) * 4;
  digests[i] = Math.imul(digests[i]! ^ role, LANE_PRIMES[0]);
  digests[i + 1] = Math.imul(digests[i + 1]! ^ seq, LANE_PRIMES[1]);
  digests[i + 2] = Math.imul(digests[i + 2]! ^ Math.floor(seq / 2 ** 32), LANE_PRIMES[2]);
  digests[i + 3] = Math.imul(digests[i + 3]! ^ k, LANE_PRIMES[3]);
}

class Unexpected extends Error {}

/** Numbers as chunks: a previous map from the index comes so (ChunkedWords), one made here is one array. */
function chunksOf<T extends Uint32Array | Float64Array>(words: T | ChunkedWords<T>): ChunkedWords<T> {
  return words instanceof ChunkedWords ? words : ChunkedWords.of(words);
}

function varint(b: Buffer, at: number): [value: number, end: number] {
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const x = b[at + i];
    if (x === undefined) throw new Unexpected('varint past the page');
    v = v * 128 + (x & 0x7f);
    if (x < 0x80) return [v, at + i + 1];
  }
  const x = b[at + 8];
  if (x === undefined) throw new Unexpected('varint past the page');
  return [v * 256 + x, at + 9];
}

/** Bytes a record value of this serial type takes. */
function serialSize(t: number): number {
  if (t >= 12) return Math.floor((t - 12) / 2);
  return [0, 1, 2, 3, 4, 6, 8, 8, 0, 0][t] ?? -1;
}

const LEAF = 1;
const INTERIOR = 2;
/** Values a leaf cell takes in the tree: its run (index), seq, first overflow page, bytes past the page, and cellDigest (CELL_UNKNOWN: none). */
const CELL = 5;
/** A cell decoded while no previous tree was at hand (a first map): its bytes were not digested, it vouches for nothing. */
const CELL_UNKNOWN = -1;

/** A table b-tree page's geometry (the file header's page size and reserved bytes). */
interface Geometry {
  readonly pageSize: number;
  readonly usable: number;
  /** Pages in the database. */
  readonly pages: number;
}

/** Reads page `p` of the database into `into` (a page's bytes), wherever it is: the main file or a live writer's log. */
type PageReader = (p: number, into: Buffer) => void;

/** A live writer's log and the snapshot of it SQLite reads (wal.ts): the page map then reads those very pages. */
export interface WalView {
  readonly wal: string;
  readonly shm: string;
  readonly log: WalLog;
}

/** A table leaf cell at `at`: its payload size, rowid, where the payload starts, how much of it is on the page, and its first overflow page (0: none). */
function leafCell(
  page: Buffer,
  at: number,
  usable: number,
): { payload: number; rowid: number; start: number; local: number; overflow: number } {
  const [payload, a1] = varint(page, at);
  const [rowid, start] = varint(page, a1);
  let local = payload;
  if (payload > usable - 35) {
    const minLocal = Math.floor(((usable - 12) * 32) / 255) - 23;
    const k = minLocal + ((payload - minLocal) % (usable - 4));
    local = k <= usable - 35 ? k : minLocal;
  }
  if (start + local + (local < payload ? 4 : 0) > usable) throw new Unexpected('cell past the page');
  return { payload, rowid, start, local, overflow: local < payload ? page.readUInt32BE(start + local) : 0 };
}

/**
 * A keyed digest (53 bits, the seed mixed in) of a leaf cell's bytes on its page, `from`…`to`: its
 * payload size, rowid, the payload's local part and the first overflow page. SQLite moves a cell from
 * page to page as these bytes, so a row that a split or merge moved keeps its digest. Not
 * cryptographic, as the page digests are not (`--verify` re-reads with SHA-256).
 */
export function cellDigest(page: Buffer, from: number, to: number, seed: number): number {
  let a = (seed ^ 0x9e3779b9) | 0;
  let b = (Math.imul(seed, 0x85ebca6b) ^ (to - from)) | 0;
  let i = from;
  for (; i + 4 <= to; i += 4) {
    const w = page[i]! | (page[i + 1]! << 8) | (page[i + 2]! << 16) | (page[i + 3]! << 24);
    a = Math.imul(a ^ w, 0xcc9e2d51);
    a = (a << 15) | (a >>> 17);
    b = Math.imul(b ^ w, 0x1b873593);
    b = ((b << 13) | (b >>> 19)) + a;
  }
  for (; i < to; i++) {
    a = Math.imul(a ^ page[i]!, 0xcc9e2d51);
    b = Math.imul(b ^ page[i]!, 0x1b873593) + a;
  }
  a = fmix(a ^ b);
  b = fmix(b + a);
  return (a >>> 11) * 2 ** 32 + (b >>> 0);
}

/** cellDigest of the cell at `ptr` on `page`, as leafCell read it (`c`): from its first byte to its overflow page number. */
const digestOfCell = (page: Buffer, ptr: number, c: { start: number; local: number; overflow: number }, seed: number): number =>
  cellDigest(page, ptr, c.start + c.local + (c.overflow !== 0 ? 4 : 0), seed);

/** MurmurHash3's finalizer: every bit of `h` moves every bit out. */
function fmix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * Puts into the tree's entry of leaf `p` (at `at` in `values`, as decoded) the digest of each of its
 * cells, read again from the page.
 */
function digestLeafCells(read: PageReader, p: number, values: Float64Array, at: number, usable: number, seed: number, page: Buffer): void {
  read(p, page);
  const h = p === 1 ? 100 : 0;
  const n = values[at + 2]!;
  if (page.readUInt16BE(h + 3) !== n) throw new Unexpected('a leaf read again is not the one decoded');
  for (let i = 0; i < n; i++) {
    const ptr = page.readUInt16BE(h + 8 + 2 * i);
    values[at + 3 + i * CELL + 4] = digestOfCell(page, ptr, leafCell(page, ptr, usable), seed);
  }
}

/**
 * The overflow chain from `first` of a payload with `rest` bytes past the page: as many pages as they
 * need, each claimed in `seen` (a page claimed twice is a cycle or a corrupt file) and passed to `take`
 * with its place `k` in the chain.
 */
function overflowChain(
  first: number,
  rest: number,
  g: Geometry,
  next: Uint32Array,
  seen: Uint8Array,
  take: (page: number, k: number) => void,
): void {
  let o = first;
  for (let k = 0, left = rest; left > 0; k++, left -= g.usable - 4) {
    if (o < 1 || o > g.pages || seen[o]) throw new Unexpected('bad overflow chain');
    seen[o] = 1;
    take(o, k);
    o = next[o - 1]!;
  }
}

/**
 * Whether the leaf cell at `at` keeps its whole payload on the page, within it (no overflow chain to
 * follow), read from its two varints alone; false sends it to leafCell, which follows the chain or
 * finds the cell bad. A table walk meets every row's cell (50,000 at 50,000 runs, most of them whole on
 * their page), and leafCell's arrays and object for each took ~20 ms of an update after one appended run.
 */
function payloadOnPage(page: Buffer, at: number, usable: number): boolean {
  let payload = 0;
  let i = at;
  // the payload's size (a varint longer than 8 bytes is past any page: left to leafCell)
  for (;;) {
    const x = page[i++];
    if (x === undefined || i - at > 8) return false;
    payload = payload * 128 + (x & 0x7f);
    if (x < 0x80) break;
  }
  if (payload > usable - 35) return false;
  // the rowid's varint, skipped (its ninth byte, if it comes to that, ends it)
  for (let k = 0; ; k++) {
    const x = page[i++];
    if (x === undefined) return false;
    if (x < 0x80 || k === 8) break;
  }
  return i + payload <= usable;
}

/**
 * The pages of the table b-tree at `root` (a rowid table: the media table, the runs table) in walk order, each page
 * number with its digest, in one SHA-256. The walk reads only those pages and goes where their bytes
 * point (children, cells, overflow chains), so two equal fingerprints (same geometry, same key) mean it
 * read the same bytes: the same rows, in the same order. Reads the interior and leaf pages (overflow
 * pages are known by the hashing pass's `next`). Null when a page is not what a rowid table's b-tree
 * holds, or one `seen` already claimed (the snapshots tree's pages are in it).
 */
function tablePages(
  read: PageReader,
  root: number,
  g: Geometry,
  digests: Uint32Array,
  next: Uint32Array,
  seen: Uint8Array,
): WalkedTable | null {
  // per page: its number, then its four lanes (grown by doubling: a large media table has ~100k pages)
  let walked = new Uint32Array(5 * 1024);
  let n = 0;
  const take = (p: number): void => {
    if (n + 5 > walked.length) {
      const grown = new Uint32Array(walked.length * 2);
      grown.set(walked);
      walked = grown;
    }
    walked[n] = p;
    walked.set(digests.subarray((p - 1) * 4, p * 4), n + 1);
    n += 5;
  };
  // per leaf, in walk order: its page, its cells, its last cell's rowid, and where its pages start and end in `walked`
  const leaves: number[] = [];
  const starts: number[] = [];
  const cells: number[] = [];
  const lastRowids: number[] = [];
  const ends: number[] = [];
  const page = Buffer.allocUnsafe(g.pageSize);
  const visit = (p: number, depth: number): void => {
    if (p < 2 || p > g.pages || seen[p] || depth > 40) throw new Unexpected('bad page number');
    seen[p] = 1;
    take(p);
    read(p, page);
    const type = page[0];
    const count = page.readUInt16BE(3);
    if (type === 0x05) {
      const children: number[] = [];
      for (let i = 0; i < count; i++) children.push(page.readUInt32BE(page.readUInt16BE(12 + 2 * i)));
      children.push(page.readUInt32BE(8));
      for (const c of children) visit(c, depth + 1);
      return;
    }
    if (type !== 0x0d) throw new Unexpected('not a table b-tree page');
    // (taken above: its overflow pages follow it)
    starts.push(n / 5 - 1);
    for (let i = 0; i < count; i++) {
      const at = page.readUInt16BE(8 + 2 * i);
      if (payloadOnPage(page, at, g.usable)) continue;
      const c = leafCell(page, at, g.usable);
      overflowChain(c.overflow, c.payload - c.local, g, next, seen, take);
    }
    leaves.push(p);
    cells.push(count);
    // (an empty leaf is only ever the root of an empty table)
    lastRowids.push(count > 0 ? leafCell(page, page.readUInt16BE(8 + 2 * (count - 1)), g.usable).rowid : Number.NaN);
    ends.push(n / 5);
  };
  try {
    visit(root, 0);
  } catch {
    // a tree this walk does not know, or a read that failed: the table's rows are read and digested
    return null;
  }
  const pages = new Uint32Array(n / 5);
  for (let i = 0; i < pages.length; i++) pages[i] = walked[i * 5]!;
  return {
    root,
    pageSize: g.pageSize,
    usable: g.usable,
    pages,
    walked: createHash('sha256').update(`${g.pageSize} ${g.usable} ${root}\n`).update(walked.subarray(0, n)).digest('base64'),
    leaves: Uint32Array.from(leaves),
    leafRows: {
      cells: Uint32Array.from(cells),
      lastRowids: Float64Array.from(lastRowids),
      starts: Uint32Array.from(starts),
      ends: Uint32Array.from(ends),
    },
  };
}

/** A table walked now: its walk, and per leaf (as TableWalk.leaves lists them) what the walk read of it. */
interface WalkedTable extends TableWalk {
  readonly leaves: Uint32Array;
  readonly leafRows: {
    readonly cells: Uint32Array;
    /** The rowid of its last cell (NaN: none). */
    readonly lastRowids: Float64Array;
    /** Where its pages (the leaf, then its cells' overflow pages) start and end in `pages`. */
    readonly starts: Uint32Array;
    readonly ends: Uint32Array;
  };
}

/**
 * The first leaves of a table walked now that are the kept walk's first leaves, in the same places, each
 * with the bytes it had (its page and its cells' overflow pages: the same rows, `differs` false for all):
 * then the table's first rows, as many as they hold, are the rows they held when the kept walk was taken.
 * Per leaf its rows and its last rowid; null when the kept walk lists no leaves (an older convsearch kept it).
 */
export interface LeavesHeld {
  readonly cells: Uint32Array;
  readonly lastRowids: Float64Array;
}

function leavesHeld(now: WalkedTable, kept: TableWalk | null | undefined, differs: (p: number) => boolean): LeavesHeld | null {
  const before = kept?.leaves;
  if (before === undefined || kept!.root !== now.root || kept!.pageSize !== now.pageSize || kept!.usable !== now.usable) return null;
  const { cells, lastRowids, starts, ends } = now.leafRows;
  let held = 0;
  for (let i = 0; i < now.leaves.length && i < before.length; i++) {
    if (now.leaves[i] !== before[i]) break;
    let same = true;
    for (let k = starts[i]!; same && k < ends[i]!; k++) same = !differs(now.pages[k]!);
    if (!same) break;
    held++;
  }
  return { cells: cells.subarray(0, held), lastRowids: lastRowids.subarray(0, held) };
}

/**
 * A table's walk kept with the previous map, when every page it met still has the digest it had there
 * (none changed, none past the end, none the snapshots table claims now): a walk from the same root would
 * read the same bytes in each page and meet them all again, in the same order, to the same fingerprint.
 * Its pages are marked seen, as the walk marks them. Null otherwise: the table is walked. (An agent's step
 * changes neither the media nor the runs table: at 50,000 runs the runs table's walk read 737 pages one by one.)
 */
function heldWalk(
  kept: TableWalk | null | undefined,
  root: number,
  g: Geometry,
  seen: Uint8Array,
  differs: (p: number) => boolean,
): TableWalk | null {
  // (the same bytes read with another usable size are other cells: the header's reserved bytes changed)
  if (!kept || kept.root !== root || kept.pageSize !== g.pageSize || kept.usable !== g.usable) return null;
  if (kept.pages.length === 0 || kept.pages[0] !== root) return null;
  for (const p of kept.pages) if (!(p >= 2 && p <= g.pages) || seen[p] !== 0 || differs(p)) return null;
  for (const p of kept.pages) seen[p] = 1;
  return kept;
}

function grownTo(a: Uint32Array, length: number): Uint32Array {
  const b = new Uint32Array(length);
  b.set(a);
  return b;
}

/** Whether the writer's log is still the one of the snapshot (its salts: not restarted since), at or past its commit. */
function sameLog({ shm, log }: WalView): boolean {
  const now = readWalSnapshot(shm);
  return now?.salt.equals(log.salt) === true && now.mxFrame >= log.mxFrame;
}

/** Whether the previous map holds lanes `a`…`d` for the page whose lanes start at `i` (none past its end). */
function sameLanes(prior: ChunkedWords<Uint32Array>, i: number, a: number, b: number, c: number, d: number): boolean {
  if (i + 4 > prior.length) return false;
  // a page's four lanes lie in one chunk (a chunk holds whole pages)
  const w = prior.chunks[i >>> prior.shift]!;
  const j = i & prior.mask;
  return w[j] === a && w[j + 1] === b && w[j + 2] === c && w[j + 3] === d;
}

/** Whether page `p`'s digest, mixed with the role of a b-tree page of `kind`, is the one `before` holds. */
function sameAs(before: ChunkedWords<Uint32Array>, digests: Uint32Array, p: number, kind: number): boolean {
  const i = (p - 1) * 4;
  return sameLanes(
    before,
    i,
    Math.imul(digests[i]! ^ kind, LANE_PRIMES[0]) >>> 0,
    Math.imul(digests[i + 1]!, LANE_PRIMES[1]) >>> 0,
    Math.imul(digests[i + 2]!, LANE_PRIMES[2]) >>> 0,
    Math.imul(digests[i + 3]!, LANE_PRIMES[3]) >>> 0,
  );
}

/** Probes of RunTally's table past which its ids are looked up in a Map instead (ids made to collide). */
const MAX_PROBES = 64;

/**
 * The runs a walk meets, numbered in the order it meets them: each id's number, and per number its rows,
 * highest seq and whether a page of it changed. The numbers are found in an open-addressing table keyed
 * by a hash of the id's UTF-16 units, the tallies kept in typed arrays: at 50k runs, a Map of the ids and
 * three arrays of boxed values took ~30–50 ms of every update (the Map's growth and the collector
 * copying what lived on), this ~10. Ids whose hashes pile up (a store crafted so) turn it into a Map.
 */
export class RunTally {
  readonly ids: string[] = [];
  counts: Float64Array;
  maxSeqs: Float64Array;
  changed: Uint8Array;
  firstChanged: Float64Array;
  /** Per slot, an id's number plus one (0: empty); null once the ids are in `byId`. */
  private slots: Int32Array | null;
  private byId: Map<string, number> | null = null;

  constructor(expected: number) {
    const room = Math.max(1024, expected);
    this.counts = new Float64Array(room);
    this.maxSeqs = new Float64Array(room);
    this.changed = new Uint8Array(room);
    this.firstChanged = new Float64Array(room);
    this.slots = new Int32Array(RunTally.slotsFor(room));
  }

  private static slotsFor(ids: number): number {
    let n = 1024;
    while (n < ids * 2) n *= 2;
    return n;
  }

  private static hash(id: string): number {
    let h = 0x811c9dc5;
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
    return h;
  }

  /** The number of run `id`, given it the next one when it is met first. */
  indexOf(id: string): number {
    const slots = this.slots;
    if (slots === null) {
      const i = this.byId!.get(id);
      return i ?? this.add(id);
    }
    const mask = slots.length - 1;
    let slot = RunTally.hash(id) & mask;
    for (let probes = 0; probes < MAX_PROBES; probes++, slot = (slot + 1) & mask) {
      const k = slots[slot]!;
      if (k === 0) {
        const i = this.add(id);
        // (a table grown meanwhile placed it already)
        if (this.slots === slots) slots[slot] = i + 1;
        return i;
      }
      if (this.ids[k - 1] === id) return k - 1;
    }
    this.byId = new Map(this.ids.map((x, i) => [x, i]));
    this.slots = null;
    return this.indexOf(id);
  }

  private add(id: string): number {
    const i = this.ids.push(id) - 1;
    if (i >= this.counts.length) {
      this.counts = doubled(this.counts, Float64Array);
      this.maxSeqs = doubled(this.maxSeqs, Float64Array);
      this.changed = doubled(this.changed, Uint8Array);
      this.firstChanged = doubled(this.firstChanged, Float64Array);
    }
    if (this.byId !== null) this.byId.set(id, i);
    else if (this.ids.length * 2 > this.slots!.length) this.rehash();
    return i;
  }

  /** A table twice as large, every id placed again (the one being added too: its number is in `ids`). */
  private rehash(): void {
    const slots = new Int32Array(this.slots!.length * 2);
    const mask = slots.length - 1;
    this.slots = slots;
    for (let i = 0; i < this.ids.length; i++) {
      let slot = RunTally.hash(this.ids[i]!) & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = i + 1;
    }
  }

  /** Row `seq` of run `run` may have changed (a page of it did). */
  rowChanged(run: number, seq: number): void {
    const c = this.changed[run]!;
    if (!(c & ROW_CHANGED) || seq < this.firstChanged[run]!) this.firstChanged[run] = seq;
    this.changed[run] = c | ROW_CHANGED | PAGE_CHANGED;
  }

  runs(): PageRuns {
    const n = this.ids.length;
    return {
      ids: this.ids,
      counts: this.counts.subarray(0, n),
      maxSeqs: this.maxSeqs.subarray(0, n),
      changed: this.changed.subarray(0, n),
      firstChanged: this.firstChanged.subarray(0, n),
    };
  }
}

function doubled<T extends Float64Array | Uint8Array>(a: T, kind: { new (length: number): T }): T {
  const b = new kind(a.length * 2);
  b.set(a);
  return b;
}

/** A growing list of numbers, kept as doubles (the tree's form): no array of boxed values to copy at the end. */
class Values {
  private a: Float64Array;
  length = 0;

  constructor(capacity: number) {
    this.a = new Float64Array(Math.max(1024, capacity));
  }

  private room(n: number): Float64Array {
    if (this.length + n > this.a.length) {
      const b = new Float64Array(Math.max(this.a.length * 2, this.length + n));
      b.set(this.a.subarray(0, this.length));
      this.a = b;
    }
    return this.a;
  }

  push1(x: number): void {
    this.room(1)[this.length++] = x;
  }

  push3(x: number, y: number, z: number): void {
    const a = this.room(3);
    a[this.length++] = x;
    a[this.length++] = y;
    a[this.length++] = z;
  }

  push2(x: number, y: number): void {
    const a = this.room(2);
    a[this.length++] = x;
    a[this.length++] = y;
  }

  push5(v: number, w: number, x: number, y: number, z: number): void {
    const a = this.room(5);
    a[this.length++] = v;
    a[this.length++] = w;
    a[this.length++] = x;
    a[this.length++] = y;
    a[this.length++] = z;
  }

  /** Appends `xs[from..to)`, a chunk's piece at a time; returns where they start. */
  copy(xs: ChunkedWords<Float64Array>, from: number, to: number): number {
    const a = this.room(to - from);
    const at = this.length;
    xs.copyTo(a, at, from, to);
    this.length += to - from;
    return at;
  }

  /** The values so far, to be changed in place (valid until the next push). */
  get values(): Float64Array {
    return this.a;
  }

  pushAll(xs: Float64Array | readonly number[]): void {
    const a = this.room(xs.length);
    for (let i = 0; i < xs.length; i++) a[this.length++] = xs[i]!;
  }

  /** The values (a view: the room past them was never written, so it was never touched). */
  finish(): Float64Array {
    return this.a.subarray(0, this.length);
  }
}

/**
 * The tree being written, in step with the previous one (`before`) for as long as the walk meets the same
 * entries at the same places: those values are the previous tree's own chunks, taken as they are (at
 * 50,000 runs an update copied ~9 MB of them into fresh memory, 40–70 ms). From the first entry that
 * differs on, values are written: from the start of the chunk it lies in (`tailStart`), so that the
 * chunks before it are whole and the pieces end to end are the tree.
 */
class TreeBuilder {
  /** While in step: how many leading values are `before`'s own. */
  private shared = 0;
  private tail: Values | null = null;
  /** Where `tail` starts in the tree (a multiple of `before`'s chunk size). */
  tailStart = 0;

  constructor(
    private readonly before: ChunkedWords<Float64Array>,
    private readonly capacity: number,
  ) {}

  get length(): number {
    return this.tail === null ? this.shared : this.tailStart + this.tail.length;
  }

  /** Whether every value so far is `before`'s at the same place (none written). */
  get inStep(): boolean {
    return this.tail === null;
  }

  /** In step: the next `n` values are `before`'s at the same places (the caller compared them), taken as they are. */
  keep(n: number): void {
    this.shared += n;
  }

  /** The values written, from `tailStart` (to be changed in place: valid until the next push). */
  get written(): Float64Array {
    return this.writing().values;
  }

  /** Where values are written: on the first call, the values from the start of the chunk the tree has reached are copied there. */
  private writing(): Values {
    if (this.tail !== null) return this.tail;
    const chunk = 2 ** this.before.shift;
    this.tailStart = Math.floor(this.shared / chunk) * chunk;
    const t = new Values(Math.max(0, this.capacity - this.tailStart));
    if (this.shared > this.tailStart) t.copy(this.before, this.tailStart, this.shared);
    this.tail = t;
    return t;
  }

  push3(x: number, y: number, z: number): void {
    this.writing().push3(x, y, z);
  }

  push5(v: number, w: number, x: number, y: number, z: number): void {
    this.writing().push5(v, w, x, y, z);
  }

  pushAll(xs: Float64Array | readonly number[]): void {
    this.writing().pushAll(xs);
  }

  /** Appends `xs[from..to)`; returns where they start in the tree. */
  copy(xs: ChunkedWords<Float64Array>, from: number, to: number): number {
    const t = this.writing();
    return this.tailStart + t.copy(xs, from, to);
  }

  /** The tree: `before`'s whole chunks it kept (and, in step to the end, the part of the next), then the values written. */
  finish(): BuiltTree {
    const { chunks, shift } = this.before;
    const chunk = 2 ** shift;
    if (this.tail === null) {
      const pieces: Float64Array[] = [];
      for (let k = 0; k * chunk < this.shared; k++) {
        const c = chunks[k]!;
        pieces.push(this.shared - k * chunk >= c.length ? c : c.subarray(0, this.shared - k * chunk));
      }
      return { pieces, kept: this.before, tailStart: this.shared, tail: new Float64Array(0) };
    }
    const tail = this.tail.finish();
    return { pieces: [...chunks.slice(0, this.tailStart / chunk), tail], kept: this.before, tailStart: this.tailStart, tail };
  }
}

/** A tree as TreeBuilder made it: its pieces; value `i` is `kept.at(i)` below `tailStart`, `tail[i - tailStart]` from there. */
interface BuiltTree {
  readonly pieces: Float64Array[];
  readonly kept: ChunkedWords<Float64Array>;
  readonly tailStart: number;
  readonly tail: Float64Array;
}

/** A tree's values as chunks: the index's, as they came; one made in this process, as one array. */
function treeChunks(tree: PageTree | KeptTree): ChunkedWords<Float64Array> {
  return 'pieces' in tree ? ChunkedWords.of(treeValues(tree)) : tree.values;
}

/**
 * Walks the overflow chain of every cell (`cellsAt`: where each cell's run, seq, first page and bytes
 * left are in `tree`): each page is mixed with its role (overflow page k of row seq, as mixRole does),
 * and the row of a page whose digest is not the one `prior` holds is marked in `tally`. One flat loop
 * over every overflow page of the store (most of its pages): kept apart so that it is optimized as one.
 */
function overflowChains(
  tree: BuiltTree,
  cellsAt: Float64Array,
  f: { digests: Uint32Array; prior: ChunkedWords<Uint32Array>; next: Uint32Array; seen: Uint8Array; pages: number; usable: number },
  tally: RunTally,
): void {
  const { digests, prior, next, seen, pages } = f;
  const { kept, tailStart, tail } = tree;
  // (a cell may straddle tailStart, a chunk boundary: each value is read where it lies)
  const value = (i: number): number => (i >= tailStart ? tail[i - tailStart]! : kept.at(i));
  const step = f.usable - 4;
  const [p0, p1, p2, p3] = LANE_PRIMES;
  for (let c = 0; c < cellsAt.length; c++) {
    const j = cellsAt[c]!;
    const run = value(j);
    const seq = value(j + 1);
    const high = Math.floor(seq / 2 ** 32);
    let o = value(j + 2);
    let moved = false;
    for (let k = 0, left = value(j + 3); left > 0; k++, left -= step) {
      if (!(o >= 1 && o <= pages) || seen[o] !== 0) throw new Unexpected('bad overflow chain');
      seen[o] = 1;
      const i = (o - 1) * 4;
      const a = (digests[i] = Math.imul(digests[i]! ^ 3, p0));
      const b = (digests[i + 1] = Math.imul(digests[i + 1]! ^ seq, p1));
      const d = (digests[i + 2] = Math.imul(digests[i + 2]! ^ high, p2));
      const e = (digests[i + 3] = Math.imul(digests[i + 3]! ^ k, p3));
      if (!sameLanes(prior, i, a >>> 0, b >>> 0, d >>> 0, e >>> 0)) moved = true;
      o = next[o - 1]!;
    }
    if (moved) tally.rowChanged(run, seq);
  }
}

/**
 * The page map of the SQLite file `path`: `root` is the snapshots table's root page and `runIdColumn`
 * the position of `run_id` in its records (seq being the rowid). Null when the file is not laid out as
 * expected. With `previous` digests (a map of this file), each run says whether any of its pages
 * changed since (PageRuns.changed); with the tree decoded with them too, a b-tree page whose digest and
 * role are unchanged is taken as decoded then: only the changed ones are read again (their children may
 * have changed without them, so every page of the tree is still checked, never a subtree trusted
 * whole). `helper`: when a helper thread hashes a share (tests force one, or none).
 * `mediaRoot`: the media table's root page, whose b-tree is walked for PageMap.media. `wal`: the file is
 * read next to a live writer, as that snapshot of its log shows it (the log's latest frames of a page in
 * its place); null when the log is no longer the snapshot's once the map is taken. `runsRoot`: the runs
 * table's root page, whose b-tree is walked for PageMap.runsTable.
 */
export function readPageMap(
  path: string,
  root: number,
  runIdColumn: number,
  seed: number,
  previous: { readonly digests: Uint32Array | ChunkedWords<Uint32Array>; readonly tree: PageTree | KeptTree | null } | null = null,
  helper: HelperPolicy = HELPER,
  mediaRoot: number | null = null,
  wal: WalView | null = null,
  filePass: (() => KeptFilePass | null) | null = null,
  runsRoot: number | null = null,
  walks: KeptWalks | null = null,
): PageMap | null {
  let fd: number;
  let walFd: number | null = null;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null; // SQLite reads it: whatever stops this read, the full digest decides
  }
  let hashing: Hashing | null = null;
  try {
    const header = Buffer.alloc(100);
    if (readSync(fd, header, 0, 100, 0) !== 100) return null;
    const rawSize = header.readUInt16BE(16);
    const pageSize = rawSize === 1 ? 65536 : rawSize;
    const usable = pageSize - header[20]!;
    if (header.readUInt32BE(56) !== 1) return null; // text other than UTF-8
    const size = fstatSync(fd).size;
    if (pageSize < 512 || size % pageSize !== 0 || usable < 480) return null;
    let pages = size / pageSize;
    // per page, where the log holds its latest frame (0: the main file has it)
    let inLog: Float64Array | null = null;
    if (wal !== null && wal.log.mxFrame > 0) {
      if (wal.log.pageSize !== pageSize) return null;
      walFd = openSync(wal.wal, 'r');
      inLog = walPageOffsets(wal.log);
      pages = wal.log.nPage;
      for (let p = size / pageSize + 1; p <= pages; p++) if (inLog[p] === 0) return null; // past the file, not in the log
    }
    const filePages = Math.min(pages, size / pageSize);
    // next to a live writer the file changes only when the log is checkpointed into it: a pass kept of
    // this very file (the same stamp, settled when taken) stands for reading it again
    const held = wal !== null ? fstatSync(fd, { bigint: true }) : null;
    const stamp = held !== null ? stampOf(held) : null;
    // settled now, before the pass: a write after this moment cannot share the last one's coarse tick
    const settled = held !== null && settledAt(held, 'ctimeNs');
    const kept = stamp !== null ? (filePass?.() ?? null) : null;
    let digests: Uint32Array;
    let next: Uint32Array;
    let pagesHashed = 0;
    let keep: FilePass | null = null;
    if (
      kept !== null &&
      kept.stamp === stamp &&
      kept.seed === seed &&
      kept.pageSize === pageSize &&
      kept.pages === filePages &&
      kept.words.length === filePages * 5
    ) {
      // no pass: a helper started ahead for it is not needed
      void spare?.terminate();
      spare = null;
      // copies, as long as the database the log makes (past the file's end, often): the walk mixes roles
      // into the digests, and the log's pages are laid over both
      digests = new Uint32Array(pages * 4);
      kept.words.copyTo(digests, 0, 0, filePages * 4);
      next = new Uint32Array(pages);
      kept.words.copyTo(next, 0, filePages * 4, filePages * 5);
    } else {
      hashing = startHashing(fd, pageSize, filePages, seed, helper);
      const hashed = finishHashing(hashing);
      if (hashed === null) return null;
      ({ digests, next } = hashed);
      pagesHashed = filePages;
      // kept only if no write can have fallen inside the pass unseen: the file's stamp, settled before it
      // began, the same after it
      if (stamp !== null && settled && stampOf(fstatSync(fd, { bigint: true })) === stamp)
        keep = { stamp, seed, pageSize, digests: digests.slice(0, filePages * 4), next: next.slice(0, filePages) };
    }
    if (inLog !== null) {
      if (digests.length < pages * 4) {
        // the log grew the database past the main file's end
        digests = grownTo(digests, pages * 4);
        next = grownTo(next, pages);
      }
      if (!hashPagesAt(walFd!, pageSize, seed, inLog, digests, next)) return null;
    }
    const readPage: PageReader = (p, into) => {
      const at = inLog?.[p] ?? 0;
      const n = at > 0 ? readSync(walFd!, into, 0, pageSize, at) : readSync(fd, into, 0, pageSize, (p - 1) * pageSize);
      if (n !== pageSize) throw new Unexpected('short page');
    };
    // no previous digests: every page counts as changed
    const prior = chunksOf(previous?.digests ?? new Uint32Array(0));
    /** Whether page `p`'s digest (its role mixed in) differs from the previous map's. */
    const differs = (p: number): boolean => {
      const i = (p - 1) * 4;
      return !sameLanes(prior, i, digests[i]!, digests[i + 1]!, digests[i + 2]!, digests[i + 3]!);
    };
    // where each page of the previous tree is described in it, plus one (0: nowhere): a zeroed array is
    // touched only at the tree's pages (a fresh page of memory costs a fault: README)
    const before = previous?.tree ? treeChunks(previous.tree) : ChunkedWords.of(new Float64Array(0));
    const beforeRunIds = previous?.tree?.runIds ?? [];
    if (before.length >= 2 ** 32 - 1) throw new Unexpected('a previous tree too large');
    const beforeAt = new Uint32Array(pages + 1);
    // the cells of the previous tree's leaves whose bytes changed (seq, cellDigest), in seq order: a
    // cell decoded now is looked up among them (`gone`), the rows of leaves that held still are copied
    const gone = new Values(1024);
    for (let i = 0; i < before.length; ) {
      // (past the end: undefined, not an integer)
      const n = i + 2 < before.length ? before.at(i + 2) : Number.NaN;
      if (!(Number.isInteger(n) && n >= 0)) throw new Unexpected('a malformed previous tree');
      const p = before.at(i);
      const leaf = before.at(i + 1) === LEAF;
      if (Number.isInteger(p) && p >= 1 && p <= pages) beforeAt[p] = i + 1;
      if (leaf && !(Number.isInteger(p) && p >= 1 && p <= pages && sameAs(prior, digests, p, LEAF)))
        for (let c = i + 3; c < i + 3 + n * CELL; c += CELL) gone.push2(before.at(c + 1), before.at(c + 4));
      i += 3 + n * (leaf ? CELL : 1);
    }
    const goneCells = gone.finish();
    for (let c = 2; c < goneCells.length; c += 2)
      if (!(goneCells[c]! > goneCells[c - 2]!)) throw new Unexpected('a malformed previous tree');
    /** Where the next cell decoded is looked up in `goneCells` (cells come in seq order, and so do they). */
    let goneAt = 0;
    /** Whether the previous tree had a cell of row `seq` with these bytes (`digest`), on a leaf that changed since. */
    const wasCell = (seq: number, digest: number): boolean => {
      while (goneAt < goneCells.length && goneCells[goneAt]! < seq) goneAt += 2;
      return goneAt < goneCells.length && goneCells[goneAt] === seq && digest !== CELL_UNKNOWN && goneCells[goneAt + 1] === digest;
    };
    // cells are digested to be compared with a previous tree's; a first map digests those of its last
    // leaf only (lastLeaf), where rows are appended: digesting every leaf's cells cost the bench store's
    // first map 75–120 ms more (290–305 against 364–424 ms)
    const digestCells = previous?.tree != null;
    /** The last leaf decoded: its page and where its entry starts in `tree`. */
    let lastLeaf: { readonly p: number; readonly at: number } | null = null;
    // this map's tree, in the same form: per page (walk order) page, kind, n, then n children or n cells
    const tree = new TreeBuilder(before, before.length + 1024);
    const tally = new RunTally(beforeRunIds.length + 1);
    // the previous tree's run indexes, as this one numbers them (-1: not met yet)
    const renamed = new Int32Array(beforeRunIds.length).fill(-1);
    const page = Buffer.allocUnsafe(pageSize);
    const seen = new Uint8Array(pages + 1);
    const geometry: Geometry = { pageSize, usable, pages };
    let lastSeq = -Infinity;
    // where each cell's entry starts in `tree`: their overflow chains are walked after the tree
    const cellsAt = new Values(before.length / CELL + 1024);
    /**
     * A cell of a leaf written to `tree` at `at` (`leafChanged`: its digest is not the previous one; `rowChanged`:
     * nor was the cell found in the previous tree): the row `seq` of run index `run`, its overflow chain holding `rest` bytes.
     */
    const cell = (leafChanged: boolean, rowChanged: boolean, run: number, seq: number, rest: number, at: number): void => {
      if (seq <= lastSeq || !Number.isSafeInteger(seq)) throw new Unexpected('rowids out of order');
      lastSeq = seq;
      if (rest > 0) cellsAt.push1(at);
      tally.counts[run]!++;
      tally.maxSeqs[run] = seq;
      if (rowChanged) tally.rowChanged(run, seq);
      else if (leafChanged) tally.changed[run]! |= PAGE_CHANGED;
    };
    /** The cells of leaf `p`, read from the file (its run ids as this tree numbers them). */
    const decodeLeaf = (p: number, h: number, count: number, leafChanged: boolean): void => {
      const cells: Array<[string, number, number, number, number]> = [];
      for (let i = 0; i < count; i++) {
        const ptr = page.readUInt16BE(h + 8 + 2 * i);
        const c = leafCell(page, ptr, usable);
        const { payload, rowid: seq, start: a2, local, overflow } = c;
        // the run id: the record header's serial types, then the values before it
        const [headerSize, h1] = varint(page, a2);
        let t = h1;
        let offset = a2 + headerSize;
        let runId: string | null = null;
        for (let col = 0; col <= runIdColumn; col++) {
          if (t >= a2 + headerSize) throw new Unexpected('record shorter than the table');
          const [serial, t2] = varint(page, t);
          t = t2;
          const n = serialSize(serial);
          if (n < 0) throw new Unexpected('bad serial type');
          if (col === runIdColumn) {
            if (serial < 13 || serial % 2 === 0 || offset + n > a2 + local) throw new Unexpected('run id not local text');
            runId = page.toString('utf8', offset, offset + n);
          }
          offset += n;
        }
        const digest = digestCells ? digestOfCell(page, ptr, c, seed) : CELL_UNKNOWN;
        cells.push([runId!, seq, overflow, payload - local, digest]);
      }
      lastLeaf = { p, at: tree.length };
      tree.push3(p, LEAF, cells.length);
      for (const [runId, seq, first, rest, digest] of cells) {
        const run = tally.indexOf(runId);
        const at = tree.length;
        tree.push5(run, seq, first, rest, digest);
        cell(leafChanged, leafChanged && !wasCell(seq, digest), run, seq, rest, at);
      }
    };
    // the tree in post-order (a page's children in order, then the page): an append rewrites the right
    // edge (the last leaves and the interior pages above them), which comes last, so that the entries
    // before it keep their places and the tree stays in step with the previous one up to there
    // (TreeBuilder). A stack of pages still to visit (each with its depth), and of interior pages to
    // write once their subtrees are (-1 - their index in `interiors`, then 0), in one loop (a recursion of
    // one call per page stays unoptimized for most of a single pass).
    const interiors: Array<{ readonly p: number; readonly at: number; readonly children: readonly number[] | null }> = [];
    const stack: number[] = [root, 0];
    while (stack.length > 0) {
      const depth = stack.pop()!;
      const p = stack.pop()!;
      if (p < 0) {
        // an interior page whose subtrees are written: its entry, as decoded last (at `at`) or read now
        const { p: q, at, children } = interiors[-1 - p]!;
        if (children !== null) {
          tree.push3(q, INTERIOR, children.length);
          tree.pushAll(children);
          continue;
        }
        const n = before.at(at + 2);
        if (tree.inStep && tree.length === at) tree.keep(3 + n);
        else {
          tree.push3(q, INTERIOR, n);
          tree.copy(before, at + 3, at + 3 + n);
        }
        continue;
      }
      if (p < 1 || p > pages || seen[p] || depth > 40) throw new Unexpected('bad page number');
      seen[p] = 1;
      const at = beforeAt[p]! - 1;
      if (at >= 0 && sameAs(prior, digests, p, before.at(at + 1))) {
        // the bytes this page had when it was decoded last: its children or cells are those
        const kind = before.at(at + 1);
        const n = before.at(at + 2);
        mixRole(digests, p, kind, 0, 0);
        if (kind === INTERIOR) {
          stack.push(-1 - interiors.push({ p, at, children: null }) + 1, 0);
          for (let i = at + 2 + n; i > at + 2; i--) stack.push(before.at(i), depth + 1);
          continue;
        }
        // the cells' run indexes as this tree numbers them (runs met in the same order keep theirs)
        let same = tree.inStep && tree.length === at;
        for (let c = at + 3; c < at + 3 + CELL * n; c += CELL) {
          const old = before.at(c);
          let run = renamed[old];
          if (run === undefined) throw new Unexpected('run index outside the tree');
          if (run < 0) {
            const runId = beforeRunIds[old];
            if (runId === undefined) throw new Unexpected('run index outside the tree');
            renamed[old] = run = tally.indexOf(runId);
          }
          if (run !== old) same = false;
        }
        if (same) {
          // the very entry, at the same place: kept as it is
          tree.keep(3 + CELL * n);
          for (let c = at + 3; c < at + 3 + CELL * n; c += CELL) cell(false, false, before.at(c), before.at(c + 1), before.at(c + 3), c);
          continue;
        }
        // the leaf's cells copied in one piece, then their run indexes renumbered in place
        tree.push3(p, kind, n);
        const from = tree.copy(before, at + 3, at + 3 + CELL * n);
        const cells = tree.written;
        for (let i = from - tree.tailStart, end = i + CELL * n; i < end; i += CELL) {
          const run = renamed[cells[i]!]!;
          cells[i] = run;
          cell(false, false, run, cells[i + 1]!, cells[i + 3]!, i + tree.tailStart);
        }
        continue;
      }
      readPage(p, page);
      const h = p === 1 ? 100 : 0;
      const type = page[h];
      const count = page.readUInt16BE(h + 3);
      if (type === 0x05) {
        mixRole(digests, p, INTERIOR, 0, 0);
        const children: number[] = [];
        for (let i = 0; i < count; i++) children.push(page.readUInt32BE(page.readUInt16BE(h + 12 + 2 * i)));
        children.push(page.readUInt32BE(h + 8));
        stack.push(-1 - interiors.push({ p, at: -1, children }) + 1, 0);
        for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!, depth + 1);
        continue;
      }
      if (type !== 0x0d) throw new Unexpected('not a table b-tree page');
      mixRole(digests, p, LEAF, 0, 0);
      decodeLeaf(p, h, count, differs(p));
    }
    const built = tree.finish();
    // (set by decodeLeaf: TypeScript does not follow the closure)
    const last = lastLeaf as { readonly p: number; readonly at: number } | null;
    // (no previous tree: every value was written, from 0)
    if (!digestCells && last !== null) digestLeafCells(readPage, last.p, built.tail, last.at - built.tailStart, usable, seed, page);
    overflowChains(built, cellsAt.finish(), { digests, prior, next, seen, pages, usable }, tally);
    const runs = tally.runs();
    // after the snapshots tree and its overflow chains: a page both trees claim is not the media's
    const walk = (root: number | null, kept: TableWalk | null | undefined): TableWalk | WalkedTable | null =>
      root === null ? null : (heldWalk(kept, root, geometry, seen, differs) ?? tablePages(readPage, root, geometry, digests, next, seen));
    const media = walk(mediaRoot, walks?.media);
    const runsTable = walk(runsRoot, walks?.runs);
    // a runs table walked again (a page of it changed): how many of its first rows its pages still vouch for
    const runsLeaves = runsTable !== null && 'leafRows' in runsTable ? leavesHeld(runsTable, walks?.runs, differs) : null;
    // the log's frames up to the snapshot are never rewritten while it keeps its salts: what was read is the snapshot's
    if (inLog !== null && !sameLog(wal!)) return null;
    return {
      pageSize,
      digests,
      runs,
      tree: { runIds: runs.ids, pieces: built.pieces },
      media,
      runsTable,
      runsLeaves,
      pagesHashed,
      filePass: keep,
    };
  } catch {
    // a layout not expected, or a read that failed (the file replaced meanwhile): no map, the full digest decides
    return null;
  } finally {
    // every chunk is hashed, or the map is given up: the helper claims no more (it reads nothing once
    // this returns), and one still starting is stopped
    if (hashing !== null) stopHelper(hashing.job);
    void hashing?.helper?.terminate();
    closeSync(fd);
    if (walFd !== null) closeSync(walFd);
  }
}
