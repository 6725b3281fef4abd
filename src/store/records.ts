/**
 * Run records and snapshot payloads stored as JSON documents (FileStepStore files, Redis values),
 * validated as upstream validates them (spec backends.md §1–§3), with the `messages` value kept as raw
 * text for the replay.
 */
import { isAscii } from 'node:buffer';
import { StoreError } from './errors.js';
import { parseIsoDateTime, pyIsoformat } from './instant.js';
import { unreadable, type UnreadableSnapshot } from './notices.js';
import {
  integerMember,
  isOptionalString,
  MAX_NESTING,
  PayloadError,
  scanPayload,
  stringMember,
  type MessagesHint,
  type PayloadMembers,
} from './payload.js';
import type { StoreSnapshot } from './reader.js';
import type { RunFields } from './run-order.js';

/** Strict UTF-8, as Python's `bytes.decode('utf-8')` (a BOM is kept, so JSON parsing refuses it like Python's). */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function decodeUtf8(bytes: Uint8Array): string | null {
  // json.dumps writes ASCII (ensure_ascii): a latin1 copy is the same text, and much faster
  if (isAscii(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  try {
    return UTF8.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * A `json.dumps` run dict (File `run.json`, Redis `run:{id}`). Like upstream `_run_from_dict`, a bad
 * record fails the whole listing: `where` names it in the error.
 */
export function runFromJson(text: string | null, where: string): RunFields {
  if (text === null) throw new StoreError(`${where}: run record is not valid UTF-8`);
  const parsed = parsedRun(text);
  if (parsed !== null) return parsed;
  let p: PayloadMembers;
  try {
    p = scanPayload(text);
  } catch (e) {
    throw new StoreError(`${where}: run record is not a JSON object (${(e as Error).message})`);
  }
  const runId = stringMember(p, 'run_id');
  const startedAt = stringMember(p, 'started_at');
  const bad = (what: string): never => {
    throw new StoreError(`${where}: run record has wrong types (${what})`);
  };
  if (runId === undefined) bad('run_id is not a string');
  if (startedAt === undefined) bad('started_at is not a string');
  for (const key of OPTIONAL_TEXT) {
    if (!isOptionalString(p, key)) bad(`${key} is not a string or null`);
  }
  // metadata is not read; like the SQLite reader, only its kind is checked (an object, or none)
  const metadata = p.members.get('metadata');
  if (metadata !== undefined && metadata !== 'null' && !metadata.startsWith('{')) bad('metadata is not an object');
  return {
    runId: runId!,
    conversationId: stringMember(p, 'conversation_id') ?? null,
    parentRunId: stringMember(p, 'parent_run_id') ?? null,
    agentName: stringMember(p, 'agent_name') ?? null,
    startedAt: startedAt!,
  };
}

/** The run record's members other than the ids and instant, each absent, null or a string. */
const OPTIONAL_TEXT = ['conversation_id', 'parent_run_id', 'agent_name', 'registration_id'] as const;

/**
 * A valid run record read by JSON.parse, a builtin (a Redis listing of 1,860 runs: ~3 ms, where the scan
 * took ~45 ms with its code still cold). What JSON.parse takes, json.loads takes alike, with the same
 * members (keys decoded, a repeated key keeping its last value), as long as the text is too short to nest
 * MAX_NESTING deep (where json.loads gives up, as the scan does). Null for any other text, or a record
 * that fails a check: the scan then reads it, and says what is wrong in the words it always has.
 */
function parsedRun(text: string): RunFields | null {
  if (text.length >= 2 * MAX_NESTING) return null;
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    return null; // not JSON, or json.loads's extras (NaN, Infinity): the scan decides
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return null;
  const r = o as Record<string, unknown>;
  const member = (key: string): unknown => (Object.hasOwn(r, key) ? r[key] : undefined);
  const runId = member('run_id');
  const startedAt = member('started_at');
  if (typeof runId !== 'string' || typeof startedAt !== 'string') return null;
  for (const key of OPTIONAL_TEXT) {
    const v = member(key);
    if (v !== undefined && v !== null && typeof v !== 'string') return null;
  }
  const metadata = member('metadata');
  if (metadata !== undefined && metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata))) return null;
  const textOf = (key: string): string | null => {
    const v = member(key);
    return typeof v === 'string' ? v : null;
  };
  return {
    runId,
    conversationId: textOf('conversation_id'),
    parentRunId: textOf('parent_run_id'),
    agentName: textOf('agent_name'),
    startedAt,
  };
}

export type SnapshotState = 'complete' | 'interrupted';

/** A payload read in full: its state (null when it cannot be told) and the snapshot, readable or not. */
export interface PayloadSnapshot {
  readonly state: SnapshotState | null;
  readonly snapshot: StoreSnapshot | UnreadableSnapshot;
}

function scan(seq: number, text: string | null, hint?: MessagesHint): PayloadMembers | UnreadableSnapshot {
  if (text === null) return unreadable(seq, 'snapshot payload is not valid UTF-8');
  try {
    return scanPayload(text, false, hint);
  } catch (e) {
    return unreadable(seq, `snapshot payload is not a JSON object (${e instanceof PayloadError ? e.message : String(e)})`);
  }
}

function stateOf(p: PayloadMembers, nullIsComplete: boolean): SnapshotState | string {
  const raw = p.members.get('state');
  if (raw === undefined || (raw === 'null' && nullIsComplete)) return 'complete';
  const s = stringMember(p, 'state');
  return s === 'complete' || s === 'interrupted' ? s : `unknown snapshot state ${raw}`;
}

/**
 * A FileStepStore snapshot file (`_store.py` list_snapshots): a missing or null `state` is complete;
 * `step_index` an int (Python's bool is one), `timestamp` an ISO string, the optional ids strings.
 * `timestamp` is passed on as stored (isoformat text, like SQLite's column).
 */
export function fileSnapshot(seq: number, text: string | null, hint?: MessagesHint): PayloadSnapshot {
  const p = scan(seq, text, hint);
  if (!('members' in p)) return { state: null, snapshot: p };
  const state = stateOf(p, true);
  if (state !== 'complete' && state !== 'interrupted') return { state: null, snapshot: unreadable(seq, state) };
  const fail = (why: string): PayloadSnapshot => ({ state, snapshot: unreadable(seq, why) });
  if (p.messages === undefined) return fail('snapshot payload has no messages');
  const rawStep = p.members.get('step_index');
  const step = rawStep === 'true' ? 1 : rawStep === 'false' ? 0 : integerMember(p, 'step_index');
  if (step === undefined) return fail('snapshot step_index is not an integer');
  const timestamp = stringMember(p, 'timestamp');
  if (timestamp === undefined || parseIsoDateTime(timestamp) === null) return fail('snapshot timestamp is not an ISO date-time');
  for (const key of ['conversation_id', 'parent_run_id', 'agent_name', 'idempotency_key']) {
    if (!isOptionalString(p, key)) return fail(`snapshot ${key} is not a string or null`);
  }
  return { state, snapshot: { seq, stepIndex: step, timestamp, messages: p.messages } };
}

/**
 * A RedisStepStore payload, validated like the newer store's strict `_SnapshotPayload` (which also
 * reads the older `json.dumps` payloads): `run_id` a string, `step_index` a JSON integer, `timestamp`
 * a date-time, `messages` present, `state` absent or `complete`/`interrupted`. The timestamp is given
 * as Python's `isoformat()` of the parsed value, so that `…Z` (pydantic) reads as `…+00:00` (SQLite).
 */
export function redisSnapshot(seq: number, text: string | null, hint?: MessagesHint): StoreSnapshot | UnreadableSnapshot {
  const p = scan(seq, text, hint);
  if (!('members' in p)) return p;
  const state = stateOf(p, false);
  if (state !== 'complete' && state !== 'interrupted') return unreadable(seq, state);
  if (stringMember(p, 'run_id') === undefined) return unreadable(seq, 'snapshot run_id is not a string');
  if (p.messages === undefined) return unreadable(seq, 'snapshot payload has no messages');
  const step = integerMember(p, 'step_index');
  if (step === undefined) return unreadable(seq, 'snapshot step_index is not an integer');
  const raw = stringMember(p, 'timestamp');
  const t = raw === undefined ? null : parseIsoDateTime(raw);
  if (t === null) return unreadable(seq, 'snapshot timestamp is not a date-time');
  for (const key of ['conversation_id', 'parent_run_id', 'agent_name']) {
    if (!isOptionalString(p, key)) return unreadable(seq, `snapshot ${key} is not a string or null`);
  }
  return { seq, stepIndex: step, timestamp: pyIsoformat(t), messages: p.messages };
}
