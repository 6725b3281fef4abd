/**
 * glibc serves a request above its mmap threshold (128 KiB at start) with a mapping of its own, unmapped
 * again when freed, and raises the threshold to the size of a larger such block when one is freed
 * (mallopt(3), "dynamic mmap threshold"). A run's snapshots grow step by step: each messages value
 * SQLite reads is a little larger than the one before, so each was mapped afresh and every one of its
 * pages faulted (~12 µs a page on the bench machine). Freeing one block just under the ceiling of that
 * threshold (32 MiB on 64-bit) raises it once: values up to it then come from the heap, whose freed
 * memory the next value takes again. Measured against the code before, alternating, on a store whose
 * longest run holds 300 snapshots of up to 1.2 MB: `--no-index` 2.0–2.4 s → 1.4–1.6 s (page faults
 * 102k → 69k), an index build 3.1–3.5 s → 2.6–2.7 s; on the bench store (values of 22 KB on average)
 * `--no-index` 1.8–2.0 s → 1.8 s, peak RSS +5 MB. The block is never touched (calloc leaves a fresh
 * mapping as it is); it goes at the next young collection, which V8 runs early for a large young
 * buffer: one more scavenge (~2 ms), paid only by a command that reads snapshots (a warm search from
 * the index reads none). Process-wide, but it changes nothing but where glibc takes large blocks from;
 * nothing happens under another C library, or where $MALLOC_MMAP_THRESHOLD_ pins the threshold (then
 * glibc adjusts nothing).
 */

/** Just under the threshold's ceiling (DEFAULT_MMAP_THRESHOLD_MAX), the chunk's header and page rounding included. */
const LARGE_BLOCK = 32 * 1024 * 1024 - 64 * 1024;

let raised = false;

/** Snapshot values are about to be read: large blocks from the heap from now on (once per thread). */
export function expectLargeValues(): void {
  if (raised) return;
  raised = true;
  new ArrayBuffer(LARGE_BLOCK);
}
