import { readSync } from 'node:fs';
import { WasmPages } from './page-hash-wasm.js';

/**
 * The hashing pass of the page map (pages.ts), shared between the main thread and one helper thread:
 * the file is cut into chunks of CHUNK_BYTES, each thread claims the next chunk from a shared counter,
 * reads it from the same file descriptor and hashes its pages. The main thread starts at once; the
 * helper joins when it has started. The main thread never waits on the helper's pace: a chunk the
 * helper claimed and has not published when the main thread runs out of chunks is taken back (stolen)
 * and hashed again here; the helper publishes a chunk into the shared arrays only if it was not taken
 * back, so nothing it writes can land once the main thread has gone on. A helper that is slow to start,
 * is descheduled on a busy machine, or never starts costs nothing but the chunk it was on.
 */
export interface HashJob {
  /** The store file, opened by the main thread (descriptors are the process's: the helper reads the same file). */
  readonly fd: number;
  readonly pageSize: number;
  readonly pages: number;
  readonly seed: number;
  /** Four 32-bit lanes per page (Uint32Array). */
  readonly digests: SharedArrayBuffer;
  /** Each page's first four bytes, big-endian: an overflow page's next page (Uint32Array). */
  readonly next: SharedArrayBuffer;
  /** Int32Array: [0] the next chunk to claim, [1] set to stop the helper, then one slot per chunk (OPEN, …). */
  readonly state: SharedArrayBuffer;
}

/** A helper thread's workerData: its job, or how long to wait for the job as a message (a helper started ahead). */
export type HelperStart = { readonly job: HashJob } | { readonly waitMs: number };

export const CHUNK_BYTES = 1 << 20;
/** Whether this machine's typed arrays read words little-endian. */
export const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;
/** A 32-bit word with its bytes in the other order. */
export const swapped = (x: number): number => ((x << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24)) >>> 0;
/** A page's first word as read in the machine's order, as the big-endian number the file holds. */
const firstWord = (x: number): number => (LITTLE_ENDIAN ? swapped(x) : x);
const CLAIM = 0;
const STOP = 1;
const SLOTS = 2;
/** A chunk's slot: not hashed yet; being copied in by the helper; hashed; taken back by the main thread. */
const OPEN = 0;
const PUBLISHING = 1;
const DONE = 2;
const STOLEN = 3;

export const chunkPages = (pageSize: number): number => Math.max(1, Math.floor(CHUNK_BYTES / pageSize));
export const chunkCount = (pageSize: number, pages: number): number => Math.ceil(pages / chunkPages(pageSize));

export function newHashJob(fd: number, pageSize: number, pages: number, seed: number): HashJob {
  return {
    fd,
    pageSize,
    pages,
    seed,
    digests: new SharedArrayBuffer(pages * 16),
    next: new SharedArrayBuffer(pages * 4),
    state: new SharedArrayBuffer((SLOTS + chunkCount(pageSize, pages)) * 4),
  };
}

/** Reads and hashes one chunk into `digests` and `next`, whose index 0 is page `base` (0-based). */
class ChunkHasher {
  private readonly perChunk: number;
  private readonly pages: WasmPages;

  constructor(private readonly job: HashJob) {
    this.perChunk = chunkPages(job.pageSize);
    this.pages = new WasmPages(this.perChunk * job.pageSize, this.perChunk);
  }

  /** The pages of `chunk`: the first, and how many. */
  span(chunk: number): [first: number, count: number] {
    const first = chunk * this.perChunk;
    return [first, Math.min(this.perChunk, this.job.pages - first)];
  }

  hash(chunk: number, digests: Uint32Array, next: Uint32Array, base: number): void {
    const { fd, pageSize, seed } = this.job;
    const buf = this.pages.input;
    const [first, count] = this.span(chunk);
    const want = count * pageSize;
    let got = 0;
    // straight into the hasher's memory: no copy
    while (got < want) {
      const n = readSync(fd, buf, got, want - got, first * pageSize + got);
      if (n <= 0) throw new Error('the store file ended early');
      got += n;
    }
    this.pages.hash(count, pageSize, seed);
    digests.set(this.pages.digests.subarray(0, count * 4), (first - base) * 4);
    // each page's first word, big-endian: read as a word in the machine's order (no call per page)
    const words = this.pages.words;
    const step = pageSize >> 2;
    for (let w = 0, end = count * step, p = first - base; w < end; w += step, p++) {
      const x = words[w]!;
      next[p] = firstWord(x);
    }
  }
}

/**
 * The main thread's part: hashes the chunks it claims straight into the shared arrays, then takes back
 * and hashes every chunk the helper has not published. False only when the helper stalled for
 * `timeoutMs` in the middle of publishing one (its copy is then unfinished: the caller takes no map).
 */
export function hashAll(job: HashJob, timeoutMs: number): boolean {
  const state = new Int32Array(job.state);
  const digests = new Uint32Array(job.digests);
  const next = new Uint32Array(job.next);
  const hasher = new ChunkHasher(job);
  const chunks = chunkCount(job.pageSize, job.pages);
  for (let chunk = Atomics.add(state, CLAIM, 1); chunk < chunks; chunk = Atomics.add(state, CLAIM, 1)) {
    hasher.hash(chunk, digests, next, 0);
    Atomics.store(state, SLOTS + chunk, DONE);
  }
  Atomics.store(state, STOP, 1);
  for (let chunk = 0; chunk < chunks; chunk++) {
    const was = Atomics.compareExchange(state, SLOTS + chunk, OPEN, STOLEN);
    if (was === OPEN) hasher.hash(chunk, digests, next, 0);
    else if (was === PUBLISHING) {
      Atomics.wait(state, SLOTS + chunk, PUBLISHING, timeoutMs);
      if (Atomics.load(state, SLOTS + chunk) !== DONE) return false;
    }
  }
  return true;
}

/**
 * The helper's part: hashes the chunks it claims into buffers of its own and copies each into the
 * shared arrays only if the main thread has not taken it back meanwhile. Stops when told to, or at a
 * failure (the main thread then hashes what is left: nothing is published for the chunk it was on).
 */
export function helpHash(job: HashJob): void {
  try {
    helpWith(job);
  } catch {
    // the main thread takes back what was not published
  }
}

function helpWith(job: HashJob): void {
  const state = new Int32Array(job.state);
  const digests = new Uint32Array(job.digests);
  const next = new Uint32Array(job.next);
  const hasher = new ChunkHasher(job);
  const perChunk = chunkPages(job.pageSize);
  const ownDigests = new Uint32Array(perChunk * 4);
  const ownNext = new Uint32Array(perChunk);
  const chunks = chunkCount(job.pageSize, job.pages);
  for (let chunk = Atomics.add(state, CLAIM, 1); chunk < chunks; chunk = Atomics.add(state, CLAIM, 1)) {
    if (Atomics.load(state, STOP) !== 0) return;
    const [first, count] = hasher.span(chunk);
    hasher.hash(chunk, ownDigests, ownNext, first);
    if (Atomics.compareExchange(state, SLOTS + chunk, OPEN, PUBLISHING) !== OPEN) return; // taken back: the main thread is past it
    digests.set(ownDigests.subarray(0, count * 4), first * 4);
    next.set(ownNext.subarray(0, count), first);
    Atomics.store(state, SLOTS + chunk, DONE);
    Atomics.notify(state, SLOTS + chunk);
  }
}

/** The helper claims no further chunk (a map given up, or finished). */
export function stopHelper(job: HashJob): void {
  Atomics.store(new Int32Array(job.state), STOP, 1);
}

/**
 * Hashes, into `digests` and `next` (as the pass does: same seed, same lanes), the pages of `fd` at
 * `offsets` (per page number; 0: none there): a live writer's log, whose latest frame of a page is what
 * a reader sees in its place. False when a read falls short.
 */
export function hashPagesAt(
  fd: number,
  pageSize: number,
  seed: number,
  offsets: Float64Array,
  digests: Uint32Array,
  next: Uint32Array,
): boolean {
  const batch = chunkPages(pageSize);
  const pages = new WasmPages(batch * pageSize, batch);
  const numbers: number[] = [];
  const flush = (): void => {
    pages.hash(numbers.length, pageSize, seed);
    const step = pageSize >> 2;
    for (let k = 0; k < numbers.length; k++) {
      const p = numbers[k]!;
      digests.set(pages.digests.subarray(k * 4, k * 4 + 4), (p - 1) * 4);
      const x = pages.words[k * step]!;
      next[p - 1] = firstWord(x);
    }
    numbers.length = 0;
  };
  for (let p = 1; p < offsets.length; p++) {
    const at = offsets[p]!;
    if (at === 0) continue;
    if (readSync(fd, pages.input, numbers.length * pageSize, pageSize, at) !== pageSize) return false;
    numbers.push(p);
    if (numbers.length === batch) flush();
  }
  if (numbers.length > 0) flush();
  return true;
}
