import type { RecordMessage } from '../history/replay.js';
import { HistorySource, replayWarnings, type Warning } from '../history/source.js';
import type { StoreRun } from '../store/reader.js';
import type { Message } from '../history/messages.js';
import { shownMessage } from './show.js';

/**
 * One run's replayed record as export writes it: the run's fields and each record message with the exact
 * text it has inside the snapshot whose copy the replay kept (never re-serialized). Plain data.
 */
export interface ExportedRun {
  /** The run, named as the session names it. */
  readonly run: StoreRun;
  readonly messages: readonly ExportedMessage[];
  readonly warnings: readonly Warning[];
}

export interface ExportedMessage {
  /** Its position in the record, as `show` and search excerpts number it. */
  readonly position: number;
  /** The message's JSON, byte for byte as stored (a slice of the snapshot's text). */
  readonly json: string;
  /** The message parsed (media restored), for a transcript. */
  readonly message: Message;
  /** The stored timestamp, raw (null when none). */
  readonly timestamp: string | null;
}

/** Replays `runId` of `store` from nothing, keeping each message's stored text. Holds one run's record. */
export function exportRun(source: HistorySource, storeRunId: string): Omit<ExportedRun, 'run'> {
  const replay = source.replay(storeRunId);
  const record: readonly RecordMessage[] = replay.messages;
  return {
    messages: record.map((m, i) => ({ position: i, json: m.json!, message: m.message, timestamp: shownMessage(m, i).timestamp })),
    warnings: replayWarnings(replay),
  };
}

/** A source that keeps stored message text and forgets each run once exported (memory follows the largest run). */
export function exportSource(source: ConstructorParameters<typeof HistorySource>[0]): HistorySource {
  return new HistorySource(source, { keepJson: true, retain: false });
}
