import { readSync } from 'node:fs';

/**
 * The hashing pass of the page map (pages.ts), shared between the main thread and one helper thread:
 * the file is cut into chunks of CHUNK_BYTES, each thread claims the next chunk from a shared counter,
 * reads it from the same file descriptor and writes its pages' digests into shared arrays. The main
 * thread starts at once; the helper joins when it has started, so a helper that is slow to start, or
 * never starts, costs nothing but its share.
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
  /** Int32Array: [0] the next chunk to claim, [1] set when a thread failed, then one slot per chunk: 1 once hashed. */
  readonly state: SharedArrayBuffer;
}

export const CHUNK_BYTES = 1 << 20;
const CLAIM = 0;
const FAILED = 1;
const SLOTS = 2;

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

/** Hashes chunks until none is left to claim. A failure is marked for the other thread, then thrown. */
export function hashClaimed(job: HashJob): void {
  const state = new Int32Array(job.state);
  const digests = new Uint32Array(job.digests);
  const next = new Uint32Array(job.next);
  const { fd, pageSize, pages, seed } = job;
  const perChunk = chunkPages(pageSize);
  const chunks = chunkCount(pageSize, pages);
  const buf = Buffer.allocUnsafe(perChunk * pageSize);
  const words = new Int32Array(buf.buffer, buf.byteOffset, buf.length >> 2);
  const wordsPerPage = pageSize >> 2;
  try {
    for (let chunk = Atomics.add(state, CLAIM, 1); chunk < chunks; chunk = Atomics.add(state, CLAIM, 1)) {
      if (Atomics.load(state, FAILED) !== 0) return;
      let p = chunk * perChunk;
      const want = Math.min(perChunk, pages - p) * pageSize;
      let got = 0;
      while (got < want) {
        const n = readSync(fd, buf, got, want - got, p * pageSize + got);
        if (n <= 0) throw new Error('the store file ended early');
        got += n;
      }
      for (let o = 0; o < want; o += pageSize, p++) {
        // four independent lanes: each step is a bijection of the lane for a fixed word
        let a = seed ^ 0x9e3779b1;
        let b = seed ^ 0x85ebca77;
        let c = seed ^ 0xc2b2ae3d;
        let d = seed ^ 0x27d4eb2f;
        const end = (o >> 2) + wordsPerPage;
        for (let i = o >> 2; i < end; i += 4) {
          // the primes written out (pages.ts LANE_PRIMES): a constant operand keeps this loop at memory speed
          a = Math.imul(a ^ words[i]!, 0x01000193);
          b = Math.imul(b ^ words[i + 1]!, 0x5bd1e995);
          c = Math.imul(c ^ words[i + 2]!, 0x85ebca6b);
          d = Math.imul(d ^ words[i + 3]!, 0xcc9e2d51);
        }
        digests[p * 4] = a;
        digests[p * 4 + 1] = b;
        digests[p * 4 + 2] = c;
        digests[p * 4 + 3] = d;
        next[p] = buf.readUInt32BE(o);
      }
      Atomics.store(state, SLOTS + chunk, 1);
      Atomics.notify(state, SLOTS + chunk);
    }
  } catch (e) {
    Atomics.store(state, FAILED, 1);
    for (let chunk = 0; chunk < chunks; chunk++) Atomics.notify(state, SLOTS + chunk);
    throw e;
  }
}

/** The job is given up (the main thread found no map to take): the helper claims no further chunk. */
export function abandon(job: HashJob): void {
  Atomics.store(new Int32Array(job.state), FAILED, 1);
}

/**
 * After the main thread's own hashClaimed: waits for the chunks the helper claimed. False when the
 * helper failed, or stalled past `timeoutMs` on one chunk (then its late writes may still land: the
 * caller drops the whole job).
 */
export function awaitHelper(job: HashJob, timeoutMs: number): boolean {
  const state = new Int32Array(job.state);
  const chunks = chunkCount(job.pageSize, job.pages);
  for (let chunk = 0; chunk < chunks; chunk++) {
    if (Atomics.load(state, FAILED) !== 0) return false;
    if (Atomics.load(state, SLOTS + chunk) === 1) continue;
    Atomics.wait(state, SLOTS + chunk, 0, timeoutMs);
    if (Atomics.load(state, SLOTS + chunk) !== 1) return false;
  }
  return Atomics.load(state, FAILED) === 0;
}
