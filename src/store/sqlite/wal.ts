import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * What a reader of a WAL-mode file next to a live writer sees, told by the writer's shared-memory
 * index (`-shm`): the database is the main file with, for each page, the latest of the log's first
 * `mxFrame` frames that writes it laid over it, `nPage` pages long. The page map (pages.ts) reads the
 * same bytes SQLite's read transaction does once it knows this header: the one SQLite read when the
 * transaction began (open.ts takes it on both sides of that moment and keeps it only when the two reads
 * agree: `iChange` moves with every commit and every restart of the log).
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
}

const HEADER_BYTES = 48;
const WAL_INDEX_VERSION = 3007000;
const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;
const CHUNK_BYTES = 1 << 20;
const WAL_MAGIC = 0x377f0682;
/** Whether typed arrays read this machine's words little-endian: the -shm is in native byte order. */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

const u32 = (b: Buffer, at: number): number => (LITTLE_ENDIAN ? b.readUInt32LE(at) : b.readUInt32BE(at));

/** SQLite's WAL checksum over `b` in native byte order (two running sums over pairs of 32-bit words). */
function nativeChecksum(b: Buffer, bytes: number): [number, number] {
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < bytes; i += 8) {
    s1 = (s1 + u32(b, i) + s2) >>> 0;
    s2 = (s2 + u32(b, i + 4) + s1) >>> 0;
  }
  return [s1, s2];
}

/**
 * The writer's current wal-index header from `-shm`, or null when there is none to trust: the file is
 * missing or short, its two copies differ (a writer was between them), it is not initialised, its
 * checksum fails, or its version is not the one this reads. Reading is all it does (a read-only
 * descriptor: no lock taken, nothing written).
 */
export function readWalSnapshot(shmPath: string): WalSnapshot | null {
  let fd: number;
  try {
    fd = openSync(shmPath, 'r');
  } catch {
    return null;
  }
  try {
    const b = Buffer.alloc(2 * HEADER_BYTES);
    if (readSync(fd, b, 0, b.length, 0) !== b.length) return null;
    const first = b.subarray(0, HEADER_BYTES);
    if (!first.equals(b.subarray(HEADER_BYTES))) return null;
    if (u32(b, 0) !== WAL_INDEX_VERSION || b[12] !== 1) return null;
    const [c1, c2] = nativeChecksum(b, 40);
    if (c1 !== u32(b, 40) || c2 !== u32(b, 44)) return null;
    const raw = LITTLE_ENDIAN ? b.readUInt16LE(14) : b.readUInt16BE(14);
    const pageSize = (raw & 0xfe00) + ((raw & 1) << 16);
    const mxFrame = u32(b, 16);
    const nPage = u32(b, 20);
    // an empty log (mxFrame 0) leaves the size to the main file
    if (pageSize < 512 || (nPage < 1 && mxFrame > 0)) return null;
    return { header: Buffer.from(first), pageSize, mxFrame, nPage, salt: Buffer.from(b.subarray(32, 40)) };
  } finally {
    closeSync(fd);
  }
}

/** Two reads of the header: the same commit of the same log. */
export const sameSnapshot = (a: WalSnapshot | null, b: WalSnapshot | null): boolean =>
  a !== null && b !== null && a.header.equals(b.header);

/**
 * Where the snapshot's pages that the log holds are: per page number (index), the byte offset of its
 * latest frame's page data within the first `mxFrame` frames, 0 for a page read from the main file.
 * Null when the log is not the one the snapshot names: a header or a frame with other salts (the log
 * restarted), another page size, fewer frames than the snapshot holds, or a last frame that is not the
 * commit of `nPage` pages.
 */
export function walPageOffsets(fd: number, snapshot: WalSnapshot): Float64Array | null {
  const { pageSize, mxFrame, nPage, salt } = snapshot;
  const at = new Float64Array(nPage + 1);
  if (mxFrame === 0) return at; // the log holds nothing the snapshot reads
  const header = Buffer.alloc(WAL_HEADER_BYTES);
  if (readSync(fd, header, 0, WAL_HEADER_BYTES, 0) !== WAL_HEADER_BYTES) return null;
  if ((header.readUInt32BE(0) & ~1) >>> 0 !== WAL_MAGIC || header.readUInt32BE(8) !== pageSize) return null;
  if (!header.subarray(16, 24).equals(salt)) return null;
  const frameBytes = FRAME_HEADER_BYTES + pageSize;
  if (fstatSync(fd).size < WAL_HEADER_BYTES + mxFrame * frameBytes) return null;
  // the frames in runs of about 1 MiB: one read each, however many frames the log holds
  const perRead = Math.max(1, Math.floor(CHUNK_BYTES / frameBytes));
  const chunk = Buffer.allocUnsafe(perRead * frameBytes);
  for (let first = 0; first < mxFrame; first += perRead) {
    const count = Math.min(perRead, mxFrame - first);
    const base = WAL_HEADER_BYTES + first * frameBytes;
    if (!readFully(fd, chunk, count * frameBytes, base)) return null;
    for (let i = 0; i < count; i++) {
      const h = i * frameBytes;
      if (!chunk.subarray(h + 8, h + 16).equals(salt)) return null;
      const page = chunk.readUInt32BE(h);
      if (page < 1) return null;
      // a page past the size of the snapshot's commit is not in the database it reads
      if (page <= nPage) at[page] = base + h + FRAME_HEADER_BYTES;
      if (first + i === mxFrame - 1 && chunk.readUInt32BE(h + 4) !== nPage) return null;
    }
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
