import { OverlaidMap, type StoreContent } from '../store/content.js';
import type { StoreRun } from '../store/reader.js';
import type { IndexMeta } from './meta.js';
import type { IndexTables, KnownRuns, RunMarks } from './tables.js';

/**
 * An update that reads the marks of the runs that changed only. The index keeps, with the content
 * digest it answers for (pages row 3), what that digest was made of per run (count, last seq, digest)
 * and a digest of the run list as the index placed it (store/run-list.ts: each run's rowid and record,
 * in order; one an older convsearch kept, of another form, matches no list: every run's marks are
 * read once, and the row written anew). When the store's run list
 * begins with that same list, no run the index holds moved or changed its record, and a run whose
 * content entry is the one kept needs nothing: only the runs whose entry differs, and the runs listed
 * after the kept ones, are looked up. Anything else (a run removed or moved, a changed record, media
 * that changed, no row kept for this content) reads every run's marks, as before.
 */

/** The row that goes with `content` and a run list of `runCount` runs (`runList`: the digest of all of them). */
export function knownRunsOf(content: StoreContent, runCount: number, runList: string): KnownRuns {
  return { content: content.digest, runList, runCount, runs: content.runs, ...(content.runBuckets ? { buckets: content.runBuckets } : {}) };
}

/** Whether the content entry of run `id` is not the one `known` holds. */
function entryChanged(known: KnownRuns, content: StoreContent, id: string): boolean {
  const was = known.runs.get(id);
  const now = content.runs.get(id);
  if (was === now) return false;
  return was === undefined || now === undefined || was.count !== now.count || was.maxSeq !== now.maxSeq || was.digest !== now.digest;
}

/**
 * The marks an update needs when the store's runs table is byte for byte the one the index recorded
 * (StoreContent.runsTableHeld): the run list is then the one `known` describes, so only the runs whose
 * content entry differs are looked up, each at its recorded place, and the list is never read. Null
 * when the content does not tell which entries differ (read otherwise than over the kept entries) or
 * the media changed: the list is read and changedMarks decides.
 */
export function heldMarks(t: IndexTables, known: KnownRuns, meta: IndexMeta, content: StoreContent): RunMarks[] | null {
  if (known.content !== meta.content || known.runCount !== meta.runCount) return null;
  if (content.media.digest !== meta.mediaDigest || content.media.count !== meta.mediaCount) return null;
  const overlaid = overlaidIds(known, content);
  if (overlaid === null) return null;
  const rows: RunMarks[] = [];
  for (const id of overlaid) {
    // (rows of a run the list does not hold have no marks: nothing is placed for them, as changedMarks does)
    const m = entryChanged(known, content, id) ? t.marksOf(id) : undefined;
    if (m !== undefined) rows.push(m);
  }
  return rows;
}

/**
 * The marks an update needs when the store read its run list past the runs the index placed only
 * (StoreContent.runsTail), and the digest of its first `known.runCount` runs is the one kept: those are
 * the list the index placed, records and order, so only the runs whose content entry differs are looked
 * up (at their recorded places, as heldMarks does), and the tail's runs are new to the index. Null when
 * heldMarks cannot tell, or the index holds a run of the tail (a run id listed twice): the list is read
 * and changedMarks decides.
 */
export function tailMarks(
  t: IndexTables,
  known: KnownRuns,
  meta: IndexMeta,
  tail: readonly StoreRun[],
  content: StoreContent,
): RunMarks[] | null {
  const rows = heldMarks(t, known, meta, content);
  if (rows === null || rows.some((m) => m.ord >= known.runCount)) return null;
  for (const run of tail) if (t.marksOf(run.runId) !== undefined) return null;
  return rows;
}

/**
 * The marks an update needs when `known` (taken with the index's content, `meta`) vouches for the
 * rest: `settled` runs lead the list unchanged, and `rows` holds the marks of those of them whose content
 * changed and of every run after them the index holds. Null when it cannot vouch: every run's marks are read.
 */
export function changedMarks(
  t: IndexTables,
  known: KnownRuns,
  meta: IndexMeta,
  runs: readonly StoreRun[],
  /** The digest of the first known.runCount runs of `runs` (store/run-list.ts) */
  listed: string,
  content: StoreContent,
): { rows: RunMarks[]; settled: number } | null {
  const settled = known.runCount;
  if (known.content !== meta.content || settled !== meta.runCount || runs.length < settled) return null;
  // a media row changed: runs that skipped a snapshot may read differently, and only their marks say which
  if (content.media.digest !== meta.mediaDigest || content.media.count !== meta.mediaCount) return null;
  if (listed !== known.runList) return null;
  const rows: RunMarks[] = [];
  const look = (runId: string): void => {
    const m = t.marksOf(runId);
    if (m !== undefined) rows.push(m);
  };
  const changed = (id: string): boolean => entryChanged(known, content, id);
  const overlaid = overlaidIds(known, content);
  if (overlaid === null) {
    for (let i = 0; i < settled; i++) if (changed(runs[i]!.runId)) look(runs[i]!.runId);
  } else {
    // the settled runs are the list the index placed (its digest matched), so the index holds marks of
    // them only, and only the overlaid runs can hold other entries; an overlaid run listed after the
    // settled ones is looked up below, one the list does not hold has no marks
    const after = new Set<string>();
    for (let i = settled; i < runs.length; i++) after.add(runs[i]!.runId);
    for (const id of overlaid) if (!after.has(id) && changed(id)) look(id);
  }
  for (let i = settled; i < runs.length; i++) look(runs[i]!.runId);
  return { rows, settled };
}

/**
 * The runs whose content entry may differ from the kept one, when the content was read over the kept
 * entries (store/sqlite/content.ts runsSince: the kept map itself, or laid over it): then no entry of
 * the other runs need be compared (at 50k runs, ~100k map lookups of an update that changed one run).
 * Null when the content was read otherwise.
 */
function overlaidIds(known: KnownRuns, content: StoreContent): readonly string[] | null {
  if (content.runs === known.runs) return [];
  if (content.runs instanceof OverlaidMap && content.runs.base === known.runs) return content.runs.overlaid();
  return null;
}
