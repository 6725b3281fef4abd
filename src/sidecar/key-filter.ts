/**
 * A Bloom filter of the message keys (20-byte SHA-1s: run-writer.ts) of every run the index holds,
 * kept with the index (tables.ts, pages row 8) so that attribution (attribution.ts) can tell that a
 * key no earlier run holds is new without reading every earlier run's keys: a key it says is absent
 * is in no run's record; one it may hold sends attribution to its store-wide scan, as before. It is a
 * superset by construction: keys are only ever added (a run removed or rewritten leaves its old keys
 * in, which can only cost a scan), and every update adds the keys of every run it attributes.
 *
 * Blocked (each key's bits in one 64-byte block, chosen by its first four bytes; eight bits in it from
 * the next sixteen): a key added rewrites one 32 KiB part of the row, not the whole filter. Sized at
 * SIZED_BITS bits per distinct key when built from every key; past FULL_BITS per key added it is
 * full (false positives grow) and attribution builds it again from every key at its next scan.
 */

const BLOCK_BYTES = 64;
/** Bits per distinct key a filter is built with (about 0.1% false positives for eight bits a key in 512-bit blocks). */
const SIZED_BITS = 16;
/** Below this many bits per key added the filter counts as full (a few percent of false positives). */
const FULL_BITS = 8;
/** Even a store of few keys gets this much: a part of the row (tables.ts PART_BYTES) is never smaller. */
const MIN_BYTES = 8 * 1024;

export class KeyFilter {
  private readonly blockMask: number;

  /**
   * `bits`: a power of two of BLOCK_BYTES or more; `added`: the keys that set a bit when added (the
   * distinct keys, give or take the few a fuller filter took for ones it had).
   */
  constructor(
    readonly bits: Uint8Array,
    private count: number,
  ) {
    if (!KeyFilter.sound(bits.length, count)) throw new RangeError('a key filter is a power of two of 64 bytes or more');
    this.blockMask = bits.length / BLOCK_BYTES - 1;
  }

  /** Whether a filter of `bytes` bytes that took `added` keys is one this class makes (tables.ts checks a kept one). */
  static sound(bytes: number, added: number): boolean {
    return Number.isSafeInteger(bytes) && bytes >= BLOCK_BYTES && (bytes & (bytes - 1)) === 0 && Number.isSafeInteger(added) && added >= 0;
  }

  /** An empty filter for `keys` distinct keys. */
  static sized(keys: number): KeyFilter {
    let bytes = MIN_BYTES;
    while (bytes * 8 < keys * SIZED_BITS) bytes *= 2;
    return new KeyFilter(new Uint8Array(bytes), 0);
  }

  /** Keys added (see the constructor). */
  get added(): number {
    return this.count;
  }

  /** Too many keys added for its size: its answers would send attribution to the scan too often. */
  get full(): boolean {
    return this.count * FULL_BITS > this.bits.length * 8;
  }

  /** Adds the key at `src[at .. at + 20)`; true when that set a bit (the filter changed). */
  add(src: Uint8Array, at: number): boolean {
    const base = this.block(src, at);
    let changed = false;
    for (let i = 0; i < 8; i++) {
      const bit = this.bitOf(src, at, i);
      const byte = base + (bit >>> 3);
      const mask = 1 << (bit & 7);
      if ((this.bits[byte]! & mask) === 0) {
        this.bits[byte]! |= mask;
        changed = true;
      }
    }
    if (changed) this.count++;
    return changed;
  }

  /** False when no key added was the one at `src[at .. at + 20)`; true when one may have been. */
  mayHold(src: Uint8Array, at: number): boolean {
    const base = this.block(src, at);
    for (let i = 0; i < 8; i++) {
      const bit = this.bitOf(src, at, i);
      if ((this.bits[base + (bit >>> 3)]! & (1 << (bit & 7))) === 0) return false;
    }
    return true;
  }

  private block(src: Uint8Array, at: number): number {
    const first = (src[at]! | (src[at + 1]! << 8) | (src[at + 2]! << 16) | (src[at + 3]! << 24)) >>> 0;
    return (first & this.blockMask) * BLOCK_BYTES;
  }

  /** Bit `i` of the key's eight in its block: nine bits of its bytes 4 + 2i and 5 + 2i. */
  private bitOf(src: Uint8Array, at: number, i: number): number {
    return (src[at + 4 + 2 * i]! | (src[at + 5 + 2 * i]! << 8)) & 511;
  }
}
