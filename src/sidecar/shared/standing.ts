import type { StoreReader, StoreRun } from '../../store/reader.js';
import type { RunMarks } from '../tables.js';

/**
 * How far the shared index is behind a store, told from what it recorded at its last sync: the store's
 * stamp, and per run its marks (snapshot count, highest seq) and its record. A reader compares them with
 * the store's own (two cheap reads of the store: its run list and its watermarks), never the content.
 */
export interface IndexStanding {
  /** The index, as shown (password masked). */
  readonly index: string;
  /** The store, as its label shows it. */
  readonly store: string;
  /** When the store's part was last synced (ms since the epoch), null when the registry does not say. */
  readonly syncedAt: number | null;
  /** False: the store could not be read (stand-in.ts), so the index answered without comparing; the next three are null. */
  readonly checked: boolean;
  /** False: the store's stamp is the one the index was built from. */
  readonly stale: boolean | null;
  /** Runs added, removed or changed (appended to, re-registered) since the sync; 0 when current. */
  readonly behindRuns: number | null;
  /** Minutes since that sync when stale (0 when current); null when the sync time is unknown. */
  readonly behindMinutes: number | null;
}

/** Runs the store holds now that differ from the index's rows by their marks or their record, plus those it no longer holds. */
export function runsBehind(rows: readonly RunMarks[], store: StoreReader): number {
  const indexed = new Map(rows.map((r) => [r.run_id, r]));
  const marks = store.watermarks();
  const same = (r: RunMarks, run: StoreRun): boolean => {
    const m = marks.get(run.runId) ?? { count: 0, maxSeq: 0 };
    return (
      r.snap_count === m.count &&
      r.snap_max_seq === m.maxSeq &&
      r.store_rowid === run.rowid &&
      r.conversation_id === run.conversationId &&
      r.parent_run_id === run.parentRunId &&
      r.agent_name === run.agentName &&
      r.started_at === run.startedAt
    );
  };
  let behind = 0;
  for (const run of store.runs()) {
    const r = indexed.get(run.runId);
    if (r === undefined || !same(r, run)) behind++;
    indexed.delete(run.runId);
  }
  return behind + indexed.size;
}

/**
 * The index's standing for this store: current when the store's stamp is the recorded one (nothing else
 * is read); otherwise the runs behind, counted from the index's run rows (read only then).
 */
export function standing(
  store: StoreReader,
  index: string,
  recordedStamp: string,
  syncedAt: number | null,
  indexRuns: () => readonly RunMarks[],
): IndexStanding {
  const stamp = store.stamp(recordedStamp);
  const base = { index, store: store.label, syncedAt, checked: true };
  if (stamp !== null && stamp === recordedStamp) return { ...base, stale: false, behindRuns: 0, behindMinutes: 0 };
  const behindMinutes = syncedAt === null ? null : Math.max(0, Math.floor((Date.now() - syncedAt) / 60_000));
  return { ...base, stale: true, behindRuns: runsBehind(indexRuns(), store), behindMinutes };
}

/** The standing of a store that could not be read: only the index's age is known. */
export function uncheckedStanding(index: string, store: string, syncedAt: number | null): IndexStanding {
  return { index, store, syncedAt, checked: false, stale: null, behindRuns: null, behindMinutes: null };
}

/** The stderr line of an index that answered for a store it could not compare with: its age, and why. */
export function uncheckedLine(s: IndexStanding, why: string): string {
  const age =
    s.syncedAt === null
      ? 'at an unknown time'
      : `${new Date(s.syncedAt).toISOString()} (${Math.max(0, Math.floor((Date.now() - s.syncedAt) / 60_000))} min ago)`;
  return `index ${s.index} answers for ${s.store} as of its last sync, ${age}: the store could not be checked (${why})`;
}

const runs = (n: number): string => `${n} run${n === 1 ? '' : 's'}`;

/** The stderr line of a stale index: what it is behind by, and that its answer is the last sync's (or, with `--fresh`, the store's). */
export function behindLine(s: IndexStanding, fresh: boolean): string {
  const time = s.behindMinutes === null ? 'an unknown time' : `${s.behindMinutes} min`;
  const by =
    (s.behindRuns ?? 0) > 0
      ? `by ${runs(s.behindRuns!)} and ${time}`
      : `by ${time}: no run was added, removed or appended to, but the store changed`;
  const answer = fresh ? '--fresh: answering from the store' : 'it answers as of its last sync; run convsearch index sync';
  return `index ${s.index} is behind ${s.store} ${by} (${answer})`;
}
