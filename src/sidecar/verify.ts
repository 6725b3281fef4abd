import { EMPTY_DIGEST, type StoreContent } from '../store/content.js';
import { StoreError } from '../store/errors.js';
import type { StoreRun } from '../store/reader.js';
import type { IndexMeta } from './meta.js';
import type { RunMarks } from './tables.js';

/**
 * `--verify` found rows the index read changed while the store's stamp said nothing changed: the file
 * system (or someone below it) hid a write. Exit status 2, naming what changed.
 */
export class UnseenChangeError extends StoreError {}

/**
 * What appends cannot explain, compared with what the index read: runs whose rows the index read are no
 * longer byte-identical (edited, removed), runs gone from the store or whose run record changed, and
 * media rows the index read that changed. Empty when the store only gained rows: new runs, snapshots
 * after the last one the index read of a run, media rows after those it read.
 */
export function unexplainedChanges(rows: readonly RunMarks[], meta: IndexMeta, content: StoreContent, runs: readonly StoreRun[]): string[] {
  const listed = new Map(runs.map((r) => [r.runId, r]));
  const out: string[] = [];
  for (const row of rows) {
    const run = listed.get(row.run_id);
    const readAgain = content.runs.get(row.run_id)?.prefix ?? EMPTY_DIGEST;
    const sameRecord =
      run !== undefined &&
      run.conversationId === row.conversation_id &&
      run.parentRunId === row.parent_run_id &&
      run.agentName === row.agent_name &&
      run.startedAt === row.started_at;
    if (!sameRecord || readAgain !== row.content) out.push(row.run_id);
  }
  if (content.media.prefix !== meta.mediaDigest) out.push('the media rows');
  return out;
}

/** One line for UnseenChangeError: the first few names, and how many more. */
export function describeUnseen(label: string, changed: readonly string[]): string {
  const shown = changed.slice(0, 5).join(', ') + (changed.length > 5 ? ` and ${changed.length - 5} more` : '');
  return (
    `${label}: --verify: ${shown} changed in place although the store's stamp (inode, size, times) says nothing was written: ` +
    'a write the file system did not show; the index was not used, and the next search re-reads the store'
  );
}
