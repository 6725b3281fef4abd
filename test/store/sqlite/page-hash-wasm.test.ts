/**
 * The page hash in WebAssembly SIMD (page-hash-wasm.ts) against the hash written out in JS below: the
 * specification, and the digests that page maps kept in existing indexes hold. The same digests on
 * random pages and keys, through the hasher and through the chunked pass over a file; and a change of
 * any one word of a page changes its digest.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WasmPages } from '../../../src/store/sqlite/page-hash-wasm.js';
import { hashAll, newHashJob } from '../../../src/store/sqlite/page-hash.js';
import { mulberry32 } from '../../../scripts/lib/random.js';

/** The reference: four 32-bit lanes, lane j takes word j of each 16 bytes (little-endian). */
function referenceDigest(page: Uint8Array, seed: number): number[] {
  const words = new Int32Array(page.buffer.slice(page.byteOffset, page.byteOffset + page.length));
  let a = seed ^ 0x9e3779b1;
  let b = seed ^ 0x85ebca77;
  let c = seed ^ 0xc2b2ae3d;
  let d = seed ^ 0x27d4eb2f;
  for (let i = 0; i < words.length; i += 4) {
    a = Math.imul(a ^ words[i]!, 0x01000193);
    b = Math.imul(b ^ words[i + 1]!, 0x5bd1e995);
    c = Math.imul(c ^ words[i + 2]!, 0x85ebca6b);
    d = Math.imul(d ^ words[i + 3]!, 0xcc9e2d51);
  }
  return [a >>> 0, b >>> 0, c >>> 0, d >>> 0];
}

function randomBytes(random: () => number, n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i += 4) b.writeUInt32LE(Math.floor(random() * 2 ** 32), i);
  return b;
}

const PAGE_SIZES = [512, 1024, 4096, 8192, 65536];

test('the SIMD digests are the reference digests, for random pages, keys and page counts (four at once and one by one)', () => {
  const random = mulberry32(2101);
  for (const pageSize of PAGE_SIZES) {
    const maxPages = 11;
    const hasher = new WasmPages(maxPages * pageSize, maxPages);
    for (let round = 0; round < 6; round++) {
      const count = 1 + Math.floor(random() * maxPages);
      const seed = Math.floor(random() * 2 ** 32) | 0;
      const pages = randomBytes(random, count * pageSize);
      pages.copy(hasher.input);
      hasher.hash(count, pageSize, seed);
      for (let p = 0; p < count; p++) {
        const want = referenceDigest(pages.subarray(p * pageSize, (p + 1) * pageSize), seed);
        assert.deepEqual([...hasher.digests.subarray(p * 4, p * 4 + 4)], want, `page ${p} of ${count}, ${pageSize} bytes, seed ${seed}`);
      }
    }
  }
});

test('a page of zeros, of ones, and the extreme keys: the reference digests', () => {
  const hasher = new WasmPages(4 * 4096, 4);
  for (const fill of [0x00, 0xff]) {
    for (const seed of [0, -1, 0x7fffffff, -0x80000000]) {
      hasher.input.fill(fill);
      hasher.hash(4, 4096, seed);
      const want = referenceDigest(hasher.input.subarray(0, 4096), seed);
      for (let p = 0; p < 4; p++) assert.deepEqual([...hasher.digests.subarray(p * 4, p * 4 + 4)], want);
    }
  }
});

test('a change of any one word, in any lane of any page, changes that page digest and no other', () => {
  const random = mulberry32(2102);
  for (const pageSize of [512, 4096]) {
    // five pages: four hashed together and one alone
    const count = 5;
    const hasher = new WasmPages(count * pageSize, count);
    const pages = randomBytes(random, count * pageSize);
    pages.copy(hasher.input);
    hasher.hash(count, pageSize, 77);
    const before = Uint32Array.from(hasher.digests.subarray(0, count * 4));
    for (let at = 0; at < count * pageSize; at += 4) {
      const word = hasher.input.readUInt32LE(at);
      // one bit, or the whole word: both seen
      for (const changed of [(word ^ (1 << (at & 31))) >>> 0, ~word >>> 0]) {
        hasher.input.writeUInt32LE(changed, at);
        hasher.hash(count, pageSize, 77);
        const page = Math.floor(at / pageSize);
        for (let p = 0; p < count; p++) {
          const same = [0, 1, 2, 3].every((j) => hasher.digests[p * 4 + j] === before[p * 4 + j]);
          if (same !== (p !== page))
            assert.fail(
              `word at ${at} (lane ${(at >> 2) & 3}) of ${pageSize}-byte pages: page ${p} digest ${same ? 'unchanged' : 'changed'}`,
            );
        }
      }
      hasher.input.writeUInt32LE(word, at);
    }
  }
});

test('the chunked pass over a file: every page the reference digest and its first four bytes, for chunk-sized and ragged files', () => {
  const random = mulberry32(2103);
  const dir = mkdtempSync(join(tmpdir(), 'convsearch-page-hash-'));
  try {
    // 1 MiB chunks: 256 pages of 4 KiB, 16 of 64 KiB; a last chunk shorter than the others
    for (const [pageSize, pages] of [
      [4096, 256 * 2 + 7],
      [65536, 16 + 3],
      [512, 2048 + 1],
    ] as const) {
      const bytes = randomBytes(random, pageSize * pages);
      const path = join(dir, `${pageSize}.bin`);
      writeFileSync(path, bytes);
      const fd = openSync(path, 'r');
      try {
        const seed = Math.floor(random() * 2 ** 32) | 0;
        const job = newHashJob(fd, pageSize, pages, seed);
        assert.equal(hashAll(job, 10), true);
        const digests = new Uint32Array(job.digests);
        const next = new Uint32Array(job.next);
        for (let p = 0; p < pages; p++) {
          const page = bytes.subarray(p * pageSize, (p + 1) * pageSize);
          assert.deepEqual([...digests.subarray(p * 4, p * 4 + 4)], referenceDigest(page, seed), `page ${p} of ${pageSize} bytes`);
          assert.equal(next[p], page.readUInt32BE(0));
        }
      } finally {
        closeSync(fd);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
