import { unknownPartKinds } from '../history/messages.js';
import { RunReplayer, type ParsedSnapshot, type RecordMessage, type SkippedSnapshot } from '../history/replay.js';
import { renderRecordMessage } from '../search/corpus.js';
import type { MediaLookup } from '../history/media.js';
import type { SnapshotReader } from '../store/sqlite/snapshots.js';

/**
 * One replayed message as the index stores it (columns of `messages` but the position and length),
 * plus the index text whose tokens go into the postings. Plain data: it can cross threads. (The writer
 * tokenizes: in a two-thread build the replaying thread is already the busier one.)
 */
export type MessageRow = readonly [
  loose: string,
  strict: string,
  kind: string,
  timestamp: string | null,
  firstSeq: number,
  firstStep: number | null,
  unknownParts: string | null,
  roles: string,
  fields: string,
  text: string,
];

export function messageRow(m: RecordMessage): MessageRow {
  const { fields, text, parts, timestamp } = renderRecordMessage(m);
  const unknown = unknownPartKinds(m.message);
  return [
    m.keys.loose,
    m.keys.strict,
    m.message.kind,
    timestamp,
    m.firstSeq,
    m.firstStep,
    unknown.length ? JSON.stringify(unknown) : null,
    JSON.stringify(parts.map((p) => [p.role, p.toolName])),
    JSON.stringify(fields.map((f) => [f.label, f.text, f.clip])),
    text,
  ];
}

/** A run replayed from nothing, ready to be written into the index. */
export interface RunBuild {
  readonly runId: string;
  /** Complete snapshots read, and the last one's seq (0: none). */
  readonly completeCount: number;
  readonly maxSeq: number;
  readonly snapshotsRead: number;
  readonly skipped: SkippedSnapshot[];
  readonly rows: MessageRow[];
}

/** Replays a run's complete snapshots from nothing (starting from `seed` when its first snapshot repeats it). */
export function buildRun(runId: string, reader: SnapshotReader, media: MediaLookup, seed: ParsedSnapshot | null): { build: RunBuild; last: ParsedSnapshot | null } {
  const replayer = new RunReplayer(runId, media, [], seed);
  let completeCount = 0;
  let maxSeq = 0;
  for (const row of reader.completeSnapshots(runId)) {
    replayer.add(row);
    completeCount++;
    maxSeq = row.seq;
  }
  const build = { runId, completeCount, maxSeq, snapshotsRead: replayer.snapshotsRead, skipped: replayer.skipped, rows: replayer.freshMessages(0).map(messageRow) };
  return { build, last: replayer.lastSnapshot };
}
