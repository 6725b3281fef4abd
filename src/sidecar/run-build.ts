import { unknownPartKinds } from '../history/messages.js';
import type { DriverRun, ReplayDriver } from '../history/driver.js';
import type { RecordMessage, SkippedSnapshot } from '../history/replay.js';
import type { RenderedPart } from '../render/message.js';
import { renderRecordMessage } from '../render/record.js';
import type { Role } from '../render/roles.js';
import { onePieceJson, type StoredField } from './fields.js';
import { ContentDigester, type RunContent } from '../store/content.js';

/**
 * One replayed message as the index stores it (columns of `messages` but the position and length; its
 * fields as the parts, whose JSON text and search text are made piece by piece as they are written and
 * tokenized). Plain data: it can cross threads. (The writer tokenizes: in a two-thread build the
 * replaying thread is already the busier one.)
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
  fields: readonly StoredField[],
  /** The fields' JSON text when it is one piece, made by a build worker (the writer is the busier thread); else absent. */
  json?: string | null,
];

/**
 * The rendered parts as the `messages` table keeps them: who speaks in `roles` (`[role, tool]` pairs),
 * what is said in `fields` (`[label, text, clip]` triples, their JSON text written by fields.ts), one
 * entry per part in both.
 */
export function storedParts(parts: readonly RenderedPart[]): { roles: string; fields: StoredField[] } {
  return {
    roles: JSON.stringify(parts.map((p) => [p.role, p.toolName])),
    fields: parts.map((p) => [p.label, p.text, p.clip]),
  };
}

export function partsFromStored(roles: string, fields: string): RenderedPart[] {
  const who = JSON.parse(roles) as Array<[Role, string | null]>;
  return (JSON.parse(fields) as StoredField[]).map(([label, text, clip], k) => ({
    role: who[k]![0],
    toolName: who[k]![1],
    label,
    text,
    clip,
  }));
}

export function messageRow(m: RecordMessage, json = false): MessageRow {
  const { parts, timestamp } = renderRecordMessage(m);
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
    json ? onePieceJson(stored.fields) : null,
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
  /** The digest of the run's rows of every state, made as they were read (`digest`), else absent. */
  readonly content?: RunContent;
}

/**
 * Replays a run's complete snapshots from nothing, through the driver (seeded with its conversation's
 * last parse); `digest`: reading every row of the run, of any state, for its content digest too.
 */
export function buildRun(driver: ReplayDriver, run: DriverRun, digest = false, json = false): RunBuild {
  // (only a store with snapshotRows digests here: SQLite's rows, whose states and steps it counts)
  const digester = digest ? new ContentDigester(0, true) : undefined;
  const { replayer, maxSeq } = driver.replay(run, undefined, digester);
  return {
    ...(digester ? { content: digester.finish() } : {}),
    runId: run.runId,
    completeCount: replayer.snapshotsRead,
    maxSeq,
    snapshotsRead: replayer.snapshotsRead,
    skipped: replayer.skipped,
    rows: replayer.freshMessages(0).map((m) => messageRow(m, json)),
  };
}
