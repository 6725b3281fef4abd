import { unknownPartKinds } from '../history/messages.js';
import { RunReplayer, type ParsedSnapshot, type RecordMessage, type SkippedSnapshot } from '../history/replay.js';
import { searchText, type ClipRule, type RenderedPart } from '../render/message.js';
import { renderRecordMessage } from '../render/record.js';
import type { Role } from '../render/roles.js';
import type { MediaCache } from '../history/media.js';
import type { StoreReader } from '../store/reader.js';

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

/**
 * The rendered parts as the `messages` table keeps them: who speaks in `roles` (`[role, tool]` pairs),
 * what is said in `fields` (`[label, text, clip]` triples), one entry per part in both.
 */
export function storedParts(parts: readonly RenderedPart[]): { roles: string; fields: string } {
  return { roles: JSON.stringify(parts.map((p) => [p.role, p.toolName])), fields: JSON.stringify(parts.map((p) => [p.label, p.text, p.clip])) };
}

export function partsFromStored(roles: string, fields: string): RenderedPart[] {
  const who = JSON.parse(roles) as Array<[Role, string | null]>;
  return (JSON.parse(fields) as Array<[string, string, ClipRule]>).map(([label, text, clip], k) => ({ role: who[k]![0], toolName: who[k]![1], label, text, clip }));
}

/** The search text of stored parts (their roles are not needed for it). */
export function storedSearchText(fields: string): string {
  return searchText((JSON.parse(fields) as Array<[string, string]>).map(([label, text]) => ({ label, text })));
}

export function messageRow(m: RecordMessage): MessageRow {
  const { text, parts, timestamp } = renderRecordMessage(m);
  const stored = storedParts(parts);
  const unknown = unknownPartKinds(m.message);
  return [
    m.keys.loose,
    m.keys.strict,
    m.message.kind,
    timestamp,
    m.firstSeq,
    m.firstStep,
    unknown.length ? JSON.stringify(unknown) : null,
    stored.roles,
    stored.fields,
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
export function buildRun(runId: string, reader: StoreReader, media: MediaCache, seed: ParsedSnapshot | null): { build: RunBuild; last: ParsedSnapshot | null } {
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
