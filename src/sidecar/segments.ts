import { liveGroups, type SegmentBuilder } from './postings.js';
import { type Layout, liveSegment } from './meta.js';
import { IndexDamagedError } from './errors.js';
import { bucketOf, TERM_BUCKETS, type IndexTables } from './tables.js';

/**
 * Writes a finished segment's postings and lists each row in its term's directory bucket, or (`tier`:
 * an update's segment, after the base) in the segment's own directory: an appended run's few hundred
 * terms land in most of the main directory's buckets (about 225 of its ~250 pages rewritten), and in
 * TIER_PARTS small rows of their own (a few pages).
 */
export function writeSegment(t: IndexTables, builder: SegmentBuilder, segment: number, tier: boolean): number {
  let bytes = 0;
  const added = new Map<number, Array<[string, number]>>();
  const listed: Array<[string, number]> = [];
  let rows: Array<[string, Buffer]> = [];
  const insert = (): void => {
    const first = t.insertPostings(segment, rows);
    rows.forEach(([term], i) => {
      if (tier) {
        listed.push([term, first + i]);
        return;
      }
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
  if (tier) t.putTierDirectory(segment, listed);
  for (const [b, list] of added) t.addToBucket(b, list);
  return bytes;
}

/**
 * Postings rows a merge reads before it writes their merged rows (at 50k runs, a build's 13 segments hold
 * ~700k rows, ~58 MB: ~5 MB a group, read in ~11 passes over the table's pages).
 */
const MERGE_ROWS = 65536;
/** Directory buckets a merge holds decoded at once (a tier merge reads few rows of each). */
const MERGE_BUCKETS = 512;

/** The bytes a merge keeps of the rows it read, copied into blocks of SLAB_BYTES (not one Buffer of SQLite's each, ~200 bytes more a row). */
class Slabs {
  private slab = new Uint8Array(0);
  private used = 0;

  copy(data: Uint8Array): Uint8Array {
    if (this.used + data.length > this.slab.length) {
      this.slab = new Uint8Array(Math.max(SLAB_BYTES, data.length));
      this.used = 0;
    }
    this.slab.set(data, this.used);
    return this.slab.subarray(this.used, (this.used += data.length));
  }
}

const SLAB_BYTES = 1024 * 1024;

/** Postings rows handed to the index at once (a few statements' worth). */
const INSERT_ROWS = 256;

/**
 * Merges postings rows into one row per term of segment `into`, a group of buckets at a time (memory
 * follows MERGE_ROWS rows, not the index); entries of replaced or removed runs are dropped. `full`: every row
 * (the base is rewritten), listed in the main directory; otherwise only the rows the tier segments' own
 * directories list (`layout.tierSegments`, written since the base: cost follows them, the base's rows
 * and the main directory are not read, nor the run rows of the runs before them), listed in `into`'s
 * own directory. Returns the postings bytes written, the corpus positions of the runs whose live segment moved,
 * and how many run rows it read.
 */
export function merge(
  t: IndexTables,
  runCount: number,
  layout: Layout,
  into: number,
  full: boolean,
): { bytes: number; moved: number[]; runsRead: number } {
  // per run, the first and last segments of its live postings (liveSegment): [from, to]
  const live = new Map<number, readonly [number, number]>();
  const moved: number[] = [];
  // a tier merge: only the runs written since the base have live postings in its rows (segments only
  // grow), and only theirs move: found through runs_seg (at 50k runs, reading every run row made a
  // merge ~0.4 s slower, and finding them by reading every row's seg cost ~79 ms)
  for (const r of full ? t.runsInOrder(runCount) : t.runsAfterSegment(layout.base)) {
    const seg = liveSegment(r.seg, layout);
    live.set(r.run_key, [liveSegment(r.seg_from, layout), seg]);
    if (full || seg > layout.base) moved.push(r.ord);
  }
  // a run its rows name that is not among those: removed, or its row damaged (then checkRun says so)
  const gone = new Set<number>();
  const liveIn = (runKey: number, seg: number): boolean => {
    const at = live.get(runKey);
    if (at !== undefined) return seg >= at[0] && seg <= at[1];
    if (!full && !gone.has(runKey)) {
      if (t.runIfAny(runKey) !== undefined)
        throw new IndexDamagedError(`run key ${runKey} has postings written after the base, its row says it was written before`);
      gone.add(runKey);
    }
    return false;
  };
  // the tier segments' own directories, by main bucket (each term's ids in id order: segments ascending)
  const tierEntries = new Map<number, Map<string, number[]>>();
  let lowestTierId = Infinity;
  for (const seg of layout.tierSegments)
    for (const [term, ids] of t.tierDirectory(seg)) {
      const b = bucketOf(term);
      let entries = tierEntries.get(b);
      if (entries === undefined) tierEntries.set(b, (entries = new Map()));
      const list = entries.get(term);
      if (list === undefined) entries.set(term, ids);
      else list.push(...ids);
      if (ids.length > 0) lowestTierId = Math.min(lowestTierId, ids[0]!);
    }
  // full: every row, the main directory's and the tier's, merged into the main directory; tier: the rows
  // the tier's directories list, merged into `into`'s own (the main directory is neither read nor written)
  const buckets = full ? Array.from({ length: TERM_BUCKETS }, (_, b) => b) : [...tierEntries.keys()].sort((a, b) => a - b);
  const bucketEntries = (b: number): Map<string, number[]> => {
    const tier = tierEntries.get(b);
    if (!full) return tier!;
    const entries = t.bucket(b);
    for (const [term, ids] of tier ?? []) entries.set(term, [...(entries.get(term) ?? []), ...ids]);
    return entries;
  };
  const listed: Array<[term: string, id: number]> = [];
  let bytes = 0;
  // every row it reads was written before the merged rows: they go in one statement at the end (at 50k
  // runs, ~700k single-row deletes were seconds of the build)
  const firstMerged = t.nextPostingId();
  // buckets are merged a group at a time (up to MERGE_ROWS rows to read, MERGE_BUCKETS buckets): the
  // group's rows are read in id order (postingsByIds: at 50k runs, a lookup per row took ~3 of the
  // merge's ~4.5 s), their live bytes kept in slabs, then merged term by term in the buckets' order, as
  // one bucket at a time would (the same rows, ids and directory)
  let group: Array<[bucket: number, entries: Map<string, number[]>]> = [];
  // the rows to read, in the order the merge takes them (bucket, term, id)
  let ids: number[] = [];
  let terms: string[] = [];
  let next = firstMerged;
  let rows: Array<[term: string, data: Buffer]> = [];
  const mergeGroup = (): void => {
    const order = Int32Array.from(ids.keys()).sort((x, y) => ids[x]! - ids[y]!);
    const parts: Uint8Array[] = Array(ids.length);
    const slabs = new Slabs();
    t.postingsByIds(
      Array.from(order, (k) => ids[k]!),
      Array.from(order, (k) => terms[k]!),
      (i, seg, data) => {
        parts[order[i]!] = slabs.copy(liveGroups(data, (runKey) => liveIn(runKey, seg)));
      },
    );
    let k = 0;
    for (const [b, entries] of group) {
      const merged = new Map<string, number[]>();
      for (const [term, list] of entries) {
        // the live groups one after another, rows in segment order (a run appended to has a group in each
        // segment from seg_from on, for positions past the ones before: a group is self-contained, the
        // merged row holds them as they were)
        const data = Buffer.concat(parts.slice(k, (k += list.length)));
        if (data.length === 0) continue;
        bytes += data.length;
        rows.push([term, data]);
        if (full) merged.set(term, [next]);
        else listed.push([term, next]);
        next++;
        if (rows.length === INSERT_ROWS) {
          t.insertPostings(into, rows); // the ids given above, in this order
          rows = [];
        }
      }
      if (full) t.putBucket(b, merged);
    }
    group = [];
    ids = [];
    terms = [];
  };
  for (const b of buckets) {
    const entries = bucketEntries(b);
    if (entries.size === 0) continue;
    group.push([b, entries]);
    for (const [term, list] of entries)
      for (const id of list) {
        ids.push(id);
        terms.push(term);
      }
    if (ids.length >= MERGE_ROWS || group.length >= MERGE_BUCKETS) mergeGroup();
  }
  if (group.length > 0) mergeGroup();
  t.insertPostings(into, rows);
  if (full) t.deletePostingsBefore(firstMerged);
  else t.deletePostingsFrom(Math.min(layout.tierFrom, lowestTierId), firstMerged);
  // the folded segments' own directories; the tier merged into `into` has one of its own
  t.deleteTierDirectoriesBefore(into);
  if (!full) t.putTierDirectory(into, listed);
  return { bytes, moved, runsRead: live.size + gone.size };
}
