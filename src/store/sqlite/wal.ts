import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
// the -shm is in the machine's byte order, a log's checksums in either
import { LITTLE_ENDIAN, swapped } from './page-hash.js';

/**
 * What a reader of a WAL-mode file next to a live writer sees, told by the writer's shared-memory
 * index (`-shm`): the database is the main file with, for each page, the latest of the log's first
 * `mxFrame` frames that writes it laid over it, `nPage` pages long. The page map (pages.ts) reads the
 * same bytes SQLite's read transaction does once it knows this header: the one SQLite read when the
 * transaction began (open.ts takes it on both sides of that moment and keeps it only when the two reads
 * agree: `iChange` moves with every commit and every restart of the log, and a writer attaches to the
 * index to write at all). A reader that finds no writer attached does not trust the index: it recovers
 * the log itself (its frames up to the last commit whose checksums hold), so the header is kept only
 * when that recovery gives the very same snapshot (`recoversAs`).
 */
export interface WalSnapshot {
  /** The header's first 48 bytes as read: equal bytes, the same commit of the same log. */
  readonly header: Buffer;
  readonly pageSize: number;
  /** Frames of the log the snapshot holds (the last is a commit frame). */
  readonly mxFrame: number;
  /** The database's size in pages at that commit. */
  readonly nPage: number;
  /** Salt-1 and salt-2 as the log's header holds them (big-endian bytes): frames of this log carry them. */
  readonly salt: Buffer;
  /** The running checksum of the log after frame `mxFrame`. */
  readonly checksum: readonly [number, number];
}

const HEADER_BYTES = 48;
const WAL_INDEX_VERSION = 3007000;
const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;
const CHUNK_BYTES = 1 << 20;
const WAL_MAGIC = 0x377f0682;

const u32 = (b: Buffer, at: number): number => (LITTLE_ENDIAN ? b.readUInt32LE(at) : b.readUInt32BE(at));

/**
 * The writer's current wal-index header from `-shm`, or null when there is none to trust: the file is
 * missing or short, its two copies differ (a writer was between them), it is not initialised, its
 * checksum fails, or its version is not the one this reads. Reading is all it does (a read-only
 * descriptor: no lock taken, nothing written).
 */
export function readWalSnapshot(shmPath: string): WalSnapshot | null {
  return readingFile(shmPath, null, (fd) => {
    // its own memory, aligned: the checksum reads it as 32-bit words
    const b = Buffer.from(new ArrayBuffer(2 * HEADER_BYTES));
    if (readSync(fd, b, 0, b.length, 0) !== b.length) return null;
    const first = b.subarray(0, HEADER_BYTES);
    if (!first.equals(b.subarray(HEADER_BYTES))) return null;
    if (u32(b, 0) !== WAL_INDEX_VERSION || b[12] !== 1) return null;
    // the index's own checksum, over its first 40 bytes in the machine's byte order
    const sum: [number, number] = [0, 0];
    continueChecksum(new Uint32Array(b.buffer, 0, 10), 0, 10, false, sum);
    if (sum[0] !== u32(b, 40) || sum[1] !== u32(b, 44)) return null;
    const raw = LITTLE_ENDIAN ? b.readUInt16LE(14) : b.readUInt16BE(14);
    const pageSize = (raw & 0xfe00) + ((raw & 1) << 16);
    const mxFrame = u32(b, 16);
    const nPage = u32(b, 20);
    // an empty log (mxFrame 0) leaves the size to the main file
    if (pageSize < 512 || (nPage < 1 && mxFrame > 0)) return null;
    return {
      header: Buffer.from(first),
      pageSize,
      mxFrame,
      nPage,
      salt: Buffer.from(b.subarray(32, 40)),
      checksum: [u32(b, 24), u32(b, 28)],
    };
  });
}

/** `read` of the file at `path` (its descriptor closed after), or `fallback` when it cannot be opened or read. */
function readingFile<T>(path: string, fallback: T, read: (fd: number) => T): T {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return fallback;
  }
  try {
    return read(fd);
  } catch {
    return fallback;
  } finally {
    closeSync(fd);
  }
}

/** Two reads of the header: the same commit of the same log. */
export const sameSnapshot = (a: WalSnapshot | null, b: WalSnapshot | null): boolean =>
  a !== null && b !== null && a.header.equals(b.header);

/**
 * A snapshot its log recovers as (recoveredLog), with the page each of its frames writes: enough to lay
 * the log over the main file without reading the log again. The read transaction that took the snapshot
 * keeps those frames in place (a writer restarts the log only once no reader reads it); the page map
 * still checks the salts after its read (pages.ts sameLog).
 */
export interface WalLog extends WalSnapshot {
  /** Per frame of the snapshot (`mxFrame` of them), the page number it writes. */
  readonly framePages: Uint32Array;
}

/**
 * Where the log's pages are: per page number (index), the byte offset of its latest frame's page data
 * within the snapshot's frames, 0 for a page read from the main file.
 */
export function walPageOffsets({ pageSize, nPage, framePages }: WalLog): Float64Array {
  const at = new Float64Array(nPage + 1);
  const frameBytes = FRAME_HEADER_BYTES + pageSize;
  for (let i = 0; i < framePages.length; i++) {
    const page = framePages[i]!;
    // a page past the size of the snapshot's commit is not in the database it reads
    if (page <= nPage) at[page] = WAL_HEADER_BYTES + i * frameBytes + FRAME_HEADER_BYTES;
  }
  return at;
}

function readFully(fd: number, b: Buffer, bytes: number, position: number): boolean {
  for (let got = 0; got < bytes; ) {
    const n = readSync(fd, b, got, bytes - got, position + got);
    if (n <= 0) return false;
    got += n;
  }
  return true;
}

/** The last commit recovery finds in a log: none (mxFrame 0), or its frame, size, salts and running checksum. */
interface Recovered {
  readonly mxFrame: number;
  /** Per frame up to the last commit, its page number. */
  readonly framePages: Uint32Array;
  readonly nPage: number;
  readonly salt: Buffer | null;
  readonly checksum: readonly [number, number];
}

const NOTHING: Recovered = { mxFrame: 0, framePages: new Uint32Array(0), nPage: 0, salt: null, checksum: [0, 0] };

/**
 * SQLite's log checksum, continued from `sum` over `count` 32-bit words of `words` from `at` (pairs:
 * s1 += x0 + s2, s2 += x1 + s1), the words read in the log's byte order (`swap`: not the machine's).
 */
function continueChecksum(words: Uint32Array, at: number, count: number, swap: boolean, sum: [number, number]): void {
  let s1 = sum[0];
  let s2 = sum[1];
  const end = at + count;
  // two loops rather than a test per word: this runs over every byte of the log
  if (swap) {
    for (let i = at; i < end; i += 2) {
      s1 = (s1 + swapped(words[i]!) + s2) >>> 0;
      s2 = (s2 + swapped(words[i + 1]!) + s1) >>> 0;
    }
  } else {
    for (let i = at; i < end; i += 2) {
      s1 = (s1 + words[i]! + s2) >>> 0;
      s2 = (s2 + words[i + 1]! + s1) >>> 0;
    }
  }
  sum[0] = s1;
  sum[1] = s2;
}

/**
 * What SQLite's recovery of the log in `fd` finds (wal.c walIndexRecover): a header with the magic,
 * version, a page size and its own checksum, then frames while each carries the header's salts, a page
 * number and a checksum that continues the chain; the snapshot is the last commit frame met. Read in
 * runs of about 1 MiB; each frame's page number is kept (4 bytes a frame) for walPageOffsets.
 */
function recover(fd: number): Recovered {
  const size = fstatSync(fd).size;
  // its own memory, aligned: read as 32-bit words
  const header = Buffer.from(new ArrayBuffer(WAL_HEADER_BYTES));
  if (size < WAL_HEADER_BYTES || !readFully(fd, header, WAL_HEADER_BYTES, 0)) return NOTHING;
  const magic = header.readUInt32BE(0);
  const pageSize = header.readUInt32BE(8);
  if ((magic & ~1) >>> 0 !== WAL_MAGIC || header.readUInt32BE(4) !== WAL_INDEX_VERSION) return NOTHING;
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return NOTHING;
  // the log's words are big-endian when the magic's low bit is set
  const swap = (magic & 1) === 1 ? LITTLE_ENDIAN : !LITTLE_ENDIAN;
  const sum: [number, number] = [0, 0];
  continueChecksum(new Uint32Array(header.buffer), 0, 6, swap, sum);
  if (sum[0] !== header.readUInt32BE(24) || sum[1] !== header.readUInt32BE(28)) return NOTHING;
  const salt = header.subarray(16, 24);
  const frameBytes = FRAME_HEADER_BYTES + pageSize;
  const frames = Math.floor((size - WAL_HEADER_BYTES) / frameBytes);
  // no larger than the log (a buffer's fresh pages cost a fault each); aligned: frames are read as 32-bit words
  const perRead = Math.max(1, Math.min(frames, Math.floor(CHUNK_BYTES / frameBytes)));
  const chunk = Buffer.from(new ArrayBuffer(perRead * frameBytes));
  const words = new Uint32Array(chunk.buffer);
  const pages = new Uint32Array(frames);
  let last = NOTHING;
  for (let first = 0; first < frames; first += perRead) {
    const count = Math.min(perRead, frames - first);
    if (!readFully(fd, chunk, count * frameBytes, WAL_HEADER_BYTES + first * frameBytes)) return last;
    for (let i = 0; i < count; i++) {
      const h = i * frameBytes;
      const page = chunk.readUInt32BE(h);
      if (page === 0 || !chunk.subarray(h + 8, h + 16).equals(salt)) return last;
      continueChecksum(words, h / 4, 2, swap, sum);
      continueChecksum(words, (h + FRAME_HEADER_BYTES) / 4, pageSize / 4, swap, sum);
      if (sum[0] !== chunk.readUInt32BE(h + 16) || sum[1] !== chunk.readUInt32BE(h + 20)) return last;
      pages[first + i] = page;
      const nPage = chunk.readUInt32BE(h + 4);
      if (nPage !== 0) {
        const mxFrame = first + i + 1;
        last = { mxFrame, framePages: pages.subarray(0, mxFrame), nPage, salt: Buffer.from(salt), checksum: [sum[0], sum[1]] };
      }
    }
  }
  return last;
}

/**
 * `snapshot` with its frames' pages when a reader that recovers the log at `walPath` itself (no writer
 * attached to the index) finds exactly it: then the snapshot is what SQLite reads whichever way it reads
 * the log. Null when the index and the log disagree: a writer that stopped between writing a commit and
 * indexing it, a frame whose bytes no longer match its checksum, a log the index does not describe.
 */
export function recoveredLog(walPath: string, snapshot: WalSnapshot): WalLog | null {
  return readingFile(walPath, null, (fd) => {
    const r = recover(fd);
    if (r.mxFrame !== snapshot.mxFrame) return null;
    const same =
      r.mxFrame === 0 ||
      (r.nPage === snapshot.nPage &&
        r.salt!.equals(snapshot.salt) &&
        r.checksum[0] === snapshot.checksum[0] &&
        r.checksum[1] === snapshot.checksum[1]);
    return same ? { ...snapshot, framePages: r.framePages } : null;
  });
}
