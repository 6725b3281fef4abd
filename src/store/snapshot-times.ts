import type { Store } from './open.js';

/**
 * The `timestamp` of snapshot rows by `seq`, looked up on demand and remembered: the time a message
 * without one of its own is dated by (the snapshot that first carried it).
 */
export function snapshotTimes(store: Store): (seq: number) => string | null {
  const stmt = store.db.prepare('SELECT timestamp FROM snapshots WHERE seq = ?').pluck();
  const seen = new Map<number, string | null>();
  return (seq) => {
    let t = seen.get(seq);
    if (t === undefined) {
      const v = stmt.get(seq);
      seen.set(seq, (t = typeof v === 'string' ? v : null));
    }
    return t;
  };
}
