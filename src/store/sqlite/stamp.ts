import { type BigIntStats, statSync } from 'node:fs';

/** What changes when a file is written: identity, size and times (nanoseconds). */
export const stampOf = (st: BigIntStats): string => `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;

/** The stamp of the file at `path` now. */
export const stampAt = (path: string): string => stampOf(statSync(path, { bigint: true }));

/**
 * Whether the file was last changed long enough before now (by its change or modification time) that
 * any later write must move its stamp: kernels stamp writes with a coarse clock (ticks of a few ms), so
 * a write in the same tick as the stat could otherwise go unseen.
 */
export const settledAt = (st: BigIntStats, time: 'ctimeNs' | 'mtimeNs'): boolean =>
  BigInt(Date.now()) * 1_000_000n - st[time] > 25_000_000n;
