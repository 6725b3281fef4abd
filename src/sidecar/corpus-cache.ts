import { liveSegment } from './meta.js';
import { CORPUS_RUN_COLUMNS } from './schema.js';
import type { IndexTables } from './tables.js';

/**
 * What every search needs of every run, in corpus order, as one JSON row plus one blob of document
 * lengths: reading it costs a single row instead of one per run.
 */
export function writeCorpusCache(t: IndexTables, runCount: number, compacted: number): void {
  const blobs: Buffer[] = [];
  const runs: unknown[][] = [];
  let offset = 0;
  for (const r of t.runsInOrder(runCount)) {
    const entry: unknown[] = CORPUS_RUN_COLUMNS.map((c) => (c === 'seg' ? liveSegment(r.seg, compacted) : r[c]));
    entry.push(r.skipped !== '[]' || r.unknown !== '[]' ? 1 : 0, offset, r.lengths.length);
    runs.push(entry);
    blobs.push(r.lengths);
    offset += r.lengths.length;
  }
  t.putCache(JSON.stringify(runs), Buffer.concat(blobs));
}
