import { decodePostings, encodeGroups, type SegmentBuilder } from './postings.js';
import { liveSegment } from './meta.js';
import { bucketOf, TERM_BUCKETS, type IndexTables } from './tables.js';

/** Writes a finished segment's postings and lists each row in its term's directory bucket. */
export function writeSegment(t: IndexTables, builder: SegmentBuilder, segment: number): void {
  const added = new Map<number, Array<[string, number]>>();
  for (const [term, data] of builder.postings()) {
    const id = t.insertPosting(term, segment, data);
    const b = bucketOf(term);
    const list = added.get(b);
    if (list) list.push([term, id]);
    else added.set(b, [[term, id]]);
  }
  for (const [b, list] of added) {
    const entries = t.bucket(b);
    for (const [term, id] of list) {
      const ids = entries.get(term);
      if (ids) ids.push(id);
      else entries.set(term, [id]);
    }
    t.putBucket(b, entries);
  }
}

/**
 * Merges every term's live postings into one row of segment `into`, term by term (memory follows the
 * largest term, not the index); entries of replaced or removed runs are dropped.
 */
export function compact(t: IndexTables, runCount: number, compacted: number, into: number): void {
  const live = new Map<number, number>();
  for (const r of t.runsInOrder(runCount)) live.set(r.run_key, liveSegment(r.seg, compacted));
  for (let b = 0; b < TERM_BUCKETS; b++) {
    const entries = t.bucket(b);
    if (entries.size === 0) continue;
    for (const [term, ids] of [...entries]) {
      const groups = new Map<number, number[]>();
      for (const id of ids) {
        const row = t.posting(id, term);
        decodePostings(
          row.data,
          (runKey, pos, tf) => {
            const g = groups.get(runKey);
            if (g) g.push(pos, tf);
            else groups.set(runKey, [pos, tf]);
          },
          (runKey) => live.get(runKey) === row.seg,
        );
        t.deletePosting(id, term);
      }
      if (groups.size > 0) entries.set(term, [t.insertPosting(term, into, encodeGroups(groups))]);
      else entries.delete(term);
    }
    t.putBucket(b, entries);
  }
}
