/**
 * Export: the replayed records of chosen runs, each message with the exact text it has in the stored
 * snapshot whose copy the replay kept (never re-serialized), for printers that write them out as JSON or
 * as a transcript. The records are the ones `show` prints (same replay, same positions).
 */
import type { Message } from '../history/messages.js';
import { HistorySource, replayWarnings, type Warning } from '../history/source.js';
import { messageTimestamp } from '../history/timestamps.js';
import type { SearchOutcome } from '../search/search.js';
import type { StoreReader, StoreRun } from '../store/reader.js';
import type { SearchRequest } from './search.js';

/** What to export: one run, a conversation's runs (corpus order), every run, or the runs a search's hits are in (hit order). */
export type ExportSelection =
  | { readonly runId: string }
  | { readonly conversationId: string }
  | { readonly all: true }
  | { readonly search: SearchRequest };

export interface ExportedMessage {
  /** Its position in the record, as `show` and search excerpts number it. */
  readonly position: number;
  /** The message's JSON, exactly the characters of the kept copy in its stored snapshot. */
  readonly json: string;
  /** The message parsed (media restored), for a transcript. */
  readonly message: Message;
  /** The stored timestamp, raw (null when none). */
  readonly timestamp: string | null;
}

/** One run's replayed record as export writes it. Plain data. */
export interface ExportedRun {
  /** The run, named as the session names it. */
  readonly run: StoreRun;
  readonly messages: readonly ExportedMessage[];
  /** What its replay skipped or could not render (unreadable snapshots, unknown part kinds). */
  readonly warnings: readonly Warning[];
}

/** A run to export: as the session names it, and where it lives. */
export interface ExportTarget {
  readonly run: StoreRun;
  readonly store: number;
  readonly storeRunId: string;
}

/**
 * The chosen runs, resolved before anything is replayed (an unknown name fails before any output), and
 * their records, replayed one at a time on demand.
 */
export interface ExportRuns {
  /** The runs, in export order, named as the session names them. */
  readonly runs: readonly StoreRun[];
  /** For a search selection: the outcome whose hits chose the runs (null otherwise). */
  readonly outcome: SearchOutcome | null;
  /** Store-level notices, as every answer carries them; each record carries its own run's warnings. */
  readonly warnings: readonly Warning[];
  /**
   * The records, in order: a generator, so that a caller writing each out holds one run's record at a
   * time. Each call replays again from the start.
   */
  records(): Generator<ExportedRun>;
}

/**
 * Replays `targets` in order, keeping each message's stored text and forgetting each run once yielded
 * (memory follows the largest run). `rename` names a run's warnings as the session names its runs.
 */
export function* exportRecords(
  targets: readonly ExportTarget[],
  stores: readonly StoreReader[],
  rename: (w: Warning, store: number) => Warning,
  onProgress?: (done: number, total: number) => void,
): Generator<ExportedRun> {
  const sources = new Map<number, HistorySource>();
  const sourceOf = (store: number): HistorySource => {
    let source = sources.get(store);
    if (!source) {
      source = new HistorySource(stores[store]!, { keepJson: true, retain: false });
      // a conversation's parse seed is dropped after its last run here
      source.plan(targets.filter((t) => t.store === store).map((t) => t.storeRunId));
      sources.set(store, source);
    }
    return source;
  };
  let done = 0;
  for (const t of targets) {
    const replay = sourceOf(t.store).replay(t.storeRunId);
    const messages = replay.messages.map(
      (m, position): ExportedMessage => ({ position, json: m.json!, message: m.message, timestamp: messageTimestamp(m.message) }),
    );
    onProgress?.(++done, targets.length);
    yield { run: t.run, messages, warnings: replayWarnings(replay).map((w) => rename(w, t.store)) };
  }
}
