import { type Layout, liveSegment } from './meta.js';
import { CORPUS_RUN_COLUMNS, SNAPSHOT_STAT_COLUMNS } from './schema.js';
import { CACHE_CHUNK, type IndexTables } from './tables.js';

/** Where an entry holds the offset and the size of its run's document lengths (after the columns and the warnings flag). */
const LENGTHS_AT = CORPUS_RUN_COLUMNS.length + 1;
const LENGTHS_SIZE = LENGTHS_AT + 1;

/**
 * The entries of cache row `chunk` (positions `from`…) before the first position of `from`…`to` in
 * `fresh` (none: every entry), with the row's lengths; none without a row or a set of positions.
 */
function keptEntries(
  t: IndexTables,
  chunk: number,
  from: number,
  to: number,
  fresh: ReadonlySet<number> | null,
): { entries: unknown[][]; lengths: Buffer } {
  const none = { entries: [], lengths: Buffer.alloc(0) };
  if (fresh === null) return none;
  let first = from;
  while (first < to && !fresh.has(first)) first++;
  if (first === from) return none;
  const row = t.cacheChunk(chunk);
  if (row === null) return none;
  const entries = JSON.parse(row.runs) as unknown[][];
  if (!Array.isArray(entries) || entries.length < first - from) return none;
  return { entries: entries.slice(0, first - from), lengths: row.lengths };
}

/**
 * What every search needs of every run, in corpus order, as JSON rows plus blobs of document lengths,
 * CACHE_CHUNK runs a row: a search reads a few rows instead of one per run, and an update rewrites
 * the rows holding the corpus positions whose run rows it wrote (`written`), and drops those past the end.
 */
export function writeCorpusCache(t: IndexTables, runCount: number, layout: Layout, written: Iterable<number> | 'all'): void {
  const chunks = Math.ceil(runCount / CACHE_CHUNK);
  const dirty =
    written === 'all'
      ? Array.from({ length: chunks }, (_, i) => i)
      : [...new Set([...written].map((ord) => Math.floor(ord / CACHE_CHUNK)))];
  const fresh = written === 'all' ? null : new Set(written);
  for (const chunk of dirty) {
    if (chunk >= chunks) continue;
    const from = chunk * CACHE_CHUNK;
    const to = Math.min(runCount, from + CACHE_CHUNK);
    const blobs: Buffer[] = [];
    const runs: unknown[][] = [];
    let offset = 0;
    // the chunk's entries before the first position written are kept as they are (their run rows and live
    // segments did not change: `written` names every one that did); an appended run reads its own row only
    const kept = keptEntries(t, chunk, from, to, fresh);
    for (const entry of kept.entries) {
      const at = entry[LENGTHS_AT] as number;
      const size = entry[LENGTHS_SIZE] as number;
      blobs.push(kept.lengths.subarray(at, at + size));
      entry[LENGTHS_AT] = offset;
      runs.push(entry);
      offset += size;
    }
    for (const r of t.runsAt(from + kept.entries.length, to)) {
      const entry: unknown[] = CORPUS_RUN_COLUMNS.map((c) => (c === 'seg' ? liveSegment(r.seg, layout) : r[c]));
      entry.push(r.skipped !== '[]' || r.unknown !== '[]' ? 1 : 0, offset, r.lengths.length, ...SNAPSHOT_STAT_COLUMNS.map((c) => r[c]));
      runs.push(entry);
      blobs.push(r.lengths);
      offset += r.lengths.length;
    }
    t.putCache(chunk, JSON.stringify(runs), Buffer.concat(blobs));
  }
  t.dropCache(chunks);
}
