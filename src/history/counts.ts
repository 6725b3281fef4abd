import type { RunSnapshotStats, StoreRun } from '../store/reader.js';
import { attributeSections, sectionLength } from './attribution.js';
import type { HistorySource, Warning } from './source.js';

/**
 * The message counts a listing shows: from a fresh replay, or read from the persistent index
 * (src/sidecar), which holds the same numbers without replaying.
 */
export interface RecordCounts {
  /** The runs counted, in corpus order: the index's list (the store's, as of the index's sync) or the source's. */
  runs(): readonly StoreRun[];
  /** Length of the run's replayed full record. */
  recordLength(runId: string): number;
  /**
   * Messages a search of the conversation covers: its runs' sections after cross-run attribution.
   * For runs without a conversation (no conversation search reaches them) it is their full records.
   */
  conversationMessages(conversationId: string | null, runs: readonly StoreRun[]): number;
  warnings(runIds: readonly string[]): Warning[];
  /**
   * Per run, its snapshots by state and its last step, when known without asking the store (the
   * index keeps them); null or absent: the store's countsByRun and lastSteps give them.
   */
  snapshotStats?(): Pick<ReadonlyMap<string, RunSnapshotStats>, 'get'> | null;
}

/** Counts from replaying the runs (with the source's progress reporting). */
export function replayCounts(source: HistorySource): RecordCounts {
  return {
    runs: () => source.runs(),
    recordLength: (runId) => source.replay(runId).messages.length,
    conversationMessages(conversationId, runs) {
      const replays = source.replayAll(runs.map((r) => r.runId));
      if (conversationId === null) return replays.reduce((n, r) => n + r.messages.length, 0);
      const sections = attributeSections(
        runs.map((run, i) => ({ run, record: replays[i]!.messages })),
        false,
      );
      return sections.reduce((n, s) => n + sectionLength(s), 0);
    },
    warnings: (runIds) => {
      source.replayAll(runIds);
      return source.warnings(runIds);
    },
  };
}
