/**
 * glibc serves a request above its mmap threshold (128 KiB at start) with a mapping of its own, unmapped
 * again when freed, and raises the threshold to the size of a larger such block when one is freed
 * (mallopt(3), "dynamic mmap threshold"). A run's snapshots grow step by step: each messages value
 * SQLite reads is a little larger than the one before, so each was mapped afresh and every one of its
 * pages faulted (~12 µs a page on the bench machine). Freeing one block just under the ceiling of that
 * threshold (32 MiB on 64-bit) raises it once: values up to it then come from the heap, whose freed
 * memory the next value takes again. Measured against the code before, alternating, on a store whose
 * longest run holds 300 snapshots of up to 1.2 MB: `--no-index` 2.0–2.4 s → 1.3–1.6 s (page faults
 * 102k → 69–75k), an index build 3.0–3.5 s → 2.1–2.7 s. The price is memory kept: glibc's trim threshold
 * rises with it (to 64 MiB), so freed blocks stay in its heaps, and that build's peak RSS went from
 * 117–124 to 170–176 MB.
 *
 * Raised only once a value of LARGE_VALUE or more was read: raised before any snapshot read, a build of
 * 50,000 small runs (no such value) took 44.8–49.1 s against 41.2–41.7 s, peak RSS +5–8 MB (its other
 * blocks between the two thresholds then came from the heap, zeroed there). The block is never touched
 * (calloc leaves a fresh mapping as it is); it goes at the next young collection, which V8 runs early
 * for a large young buffer (one more scavenge, ~2 ms). Process-wide, but it changes nothing but where
 * glibc takes large blocks from; nothing happens under another C library, or where
 * $MALLOC_MMAP_THRESHOLD_ pins the threshold (then glibc adjusts nothing).
 */

/** glibc's mmap threshold at start: a value this long (in bytes, or in UTF-16 units) was mapped afresh. */
const LARGE_VALUE = 128 * 1024;

/** Just under the threshold's ceiling (DEFAULT_MMAP_THRESHOLD_MAX), the chunk's header and page rounding included. */
const LARGE_BLOCK = 32 * 1024 * 1024 - 64 * 1024;

let raised = false;

/** A snapshot value was read: a text or bytes of LARGE_VALUE or more raises the threshold (once per thread). */
export function sawValue(value: unknown): void {
  if (raised || !(typeof value === 'string' || Buffer.isBuffer(value)) || value.length < LARGE_VALUE) return;
  raised = true;
  new ArrayBuffer(LARGE_BLOCK);
}

/** `rows` as they come, each one's messages seen by sawValue until the threshold is raised. */
export function watchValues<T extends { readonly messages: unknown }>(rows: IterableIterator<T>): IterableIterator<T> {
  return raised ? rows : watching(rows);
}

function* watching<T extends { readonly messages: unknown }>(rows: IterableIterator<T>): Generator<T> {
  for (const row of rows) {
    sawValue(row.messages);
    yield row;
  }
}
