import { type Layout, liveSegment } from './meta.js';
import { CORPUS_RUN_COLUMNS, SNAPSHOT_STAT_COLUMNS } from './schema.js';
import { CACHE_CHUNK, type IndexTables } from './tables.js';

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
  for (const chunk of dirty) {
    if (chunk >= chunks) continue;
    const blobs: Buffer[] = [];
    const runs: unknown[][] = [];
    let offset = 0;
    for (const r of t.runsAt(chunk * CACHE_CHUNK, Math.min(runCount, (chunk + 1) * CACHE_CHUNK))) {
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
