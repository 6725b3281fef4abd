import { liveGroups, type SegmentBuilder } from './postings.js';
import { type Layout, liveSegment } from './meta.js';
import { IndexDamagedError } from './errors.js';
import { bucketOf, TERM_BUCKETS, type IndexTables } from './tables.js';

/** Writes a finished segment's postings and lists each row in its term's directory bucket. */
export function writeSegment(t: IndexTables, builder: SegmentBuilder, segment: number): number {
  let bytes = 0;
  const added = new Map<number, Array<[string, number]>>();
  let rows: Array<[string, Buffer]> = [];
  const insert = (): void => {
    const first = t.insertPostings(segment, rows);
    rows.forEach(([term], i) => {
      const b = bucketOf(term);
      const list = added.get(b);
      if (list) list.push([term, first + i]);
      else added.set(b, [[term, first + i]]);
    });
    rows = [];
  };
  for (const [term, data] of builder.postings()) {
    rows.push([term, data]);
    bytes += data.length;
    if (rows.length === INSERT_ROWS) insert();
  }
  insert();
  for (const [b, list] of added) t.addToBucket(b, list);
  return bytes;
}

/** Postings rows handed to the index at once (a few statements' worth). */
const INSERT_ROWS = 256;

/**
 * Merges postings rows into one row per term of segment `into`, term by term (memory follows the
 * largest term, not the index); entries of replaced or removed runs are dropped. `full`: every row
 * (the base is rewritten); otherwise only the rows from `layout.tierFrom` on, the segments written
 * since the base (cost follows them, the base's rows are not read, nor the run rows of the runs before
 * them). Returns the postings bytes written, the corpus positions of the runs whose live segment moved,
 * and how many run rows it read.
 */
export function merge(
  t: IndexTables,
  runCount: number,
  layout: Layout,
  into: number,
  full: boolean,
): { bytes: number; moved: number[]; runsRead: number } {
  const live = new Map<number, number>();
  const moved: number[] = [];
  // a tier merge: only the runs written since the base have live postings in its rows (segments only
  // grow), and only theirs move (at 50k runs, reading every run row made a merge ~0.4 s slower)
  for (const r of full ? t.runsInOrder(runCount) : t.runsAfterSegment(layout.base)) {
    const seg = liveSegment(r.seg, layout);
    live.set(r.run_key, seg);
    if (full || seg > layout.base) moved.push(r.ord);
  }
  // a run its rows name that is not among those: removed, or its row damaged (then checkRun says so)
  const gone = new Set<number>();
  const liveIn = (runKey: number, seg: number): boolean => {
    const at = live.get(runKey);
    if (at !== undefined) return at === seg;
    if (!full && !gone.has(runKey)) {
      if (t.runIfAny(runKey) !== undefined)
        throw new IndexDamagedError(`run key ${runKey} has postings written after the base, its row says it was written before`);
      gone.add(runKey);
    }
    return false;
  };
  const merging = (id: number): boolean => full || id >= layout.tierFrom;
  let buckets: Iterable<number>;
  if (full) buckets = Array.from({ length: TERM_BUCKETS }, (_, b) => b);
  else buckets = new Set(t.postingTermsFrom(layout.tierFrom).map(bucketOf));
  let bytes = 0;
  // a full merge reads every row and writes its merged rows after them: the rows read go in one
  // statement at the end (at 50k runs, ~700k single-row deletes were seconds of the build)
  const firstMerged = full ? t.nextPostingId() : 0;
  for (const b of buckets) {
    const entries = t.bucket(b);
    if (entries.size === 0) continue;
    let changed = false;
    for (const [term, ids] of [...entries]) {
      const kept: number[] = [];
      // a run's live groups are in one row (its live segment's), rows in segment order: the merged row
      // is their bytes one after another, as encoding the decoded entries again would make them
      const parts: Uint8Array[] = [];
      for (const id of ids) {
        if (!merging(id)) {
          kept.push(id);
          continue;
        }
        const row = t.posting(id, term);
        parts.push(liveGroups(row.data, (runKey) => liveIn(runKey, row.seg)));
        if (!full) t.deletePosting(id, term);
      }
      if (kept.length === ids.length) continue;
      changed = true;
      const data = Buffer.concat(parts);
      if (data.length > 0) {
        bytes += data.length;
        kept.push(t.insertPosting(term, into, data));
      }
      if (kept.length > 0) entries.set(term, kept);
      else entries.delete(term);
    }
    if (changed) t.putBucket(b, entries);
  }
  if (full) t.deletePostingsBefore(firstMerged);
  return { bytes, moved, runsRead: live.size + gone.size };
}
