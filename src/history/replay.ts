import { parseJson, splitTopLevelArray } from './json-parse.js';
import type { JsonValue } from './json-value.js';
import { messageKeys, type MessageKeys } from './keys.js';
import { toMessage, unknownPartKinds, type Message } from './messages.js';
import { longestOverlap } from './overlap.js';
import { isSummaryArtifact } from './summary.js';
import { mayHaveMarkers, restoreMedia, type MediaLookup } from '../store/media.js';
import type { SnapshotRow } from '../store/snapshots.js';

/** One message of a run's durable record. */
export interface RecordMessage {
  readonly message: Message;
  readonly keys: MessageKeys;
  /** The snapshot (seq, step_index) that first carried this message; later copies replace the message only. */
  readonly firstSeq: number;
  readonly firstStep: number | null;
}

export interface SkippedSnapshot {
  readonly runId: string;
  readonly seq: number;
  readonly reason: string;
}

export interface RunReplay {
  readonly runId: string;
  readonly messages: RecordMessage[];
  readonly snapshotsRead: number;
  readonly skipped: SkippedSnapshot[];
  /** part_kind → count over the record's messages, for kinds that render nothing because they are unknown. */
  readonly unknownPartKinds: Map<string, number>;
}

interface ParsedElement {
  readonly raw: string;
  readonly message: Message;
  readonly summary: boolean;
  readonly keys: MessageKeys;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Rebuilds one run's durable record from its complete snapshots (spec §3.2 with the loose key and the
 * later copy kept). Consecutive snapshots mostly repeat each other byte for byte, so a message whose raw
 * JSON equals one of the previous snapshot's is reused instead of parsed again.
 */
export function replayRun(runId: string, rows: Iterable<SnapshotRow>, media: MediaLookup): RunReplay {
  const messages: RecordMessage[] = [];
  const keys: string[] = [];
  const skipped: SkippedSnapshot[] = [];
  let snapshotsRead = 0;
  let previous = new Map<string, ParsedElement>();

  for (const row of rows) {
    snapshotsRead++;
    let elements: ParsedElement[];
    try {
      elements = parseSnapshot(row.messages, previous, media);
    } catch (e) {
      skipped.push({ runId, seq: row.seq, reason: errorText(e) });
      continue;
    }
    previous = new Map(elements.map((el) => [el.raw, el]));
    const kept = elements.filter((el) => !el.summary);
    const nextKeys = kept.map((el) => el.keys.loose);
    const overlap = longestOverlap(keys, nextKeys);
    const step = typeof row.stepIndex === 'number' ? row.stepIndex : null;
    const base = messages.length - overlap;
    for (let i = 0; i < kept.length; i++) {
      const el = kept[i]!;
      if (i < overlap) {
        // later copy kept: it carries what core stamped after the first save (e.g. instruction deltas)
        const old = messages[base + i]!;
        messages[base + i] = { message: el.message, keys: el.keys, firstSeq: old.firstSeq, firstStep: old.firstStep };
      } else {
        messages.push({ message: el.message, keys: el.keys, firstSeq: row.seq, firstStep: step });
        keys.push(el.keys.loose);
      }
    }
  }

  const unknown = new Map<string, number>();
  for (const m of messages) for (const pk of unknownPartKinds(m.message)) unknown.set(pk, (unknown.get(pk) ?? 0) + 1);
  return { runId, messages, snapshotsRead, skipped, unknownPartKinds: unknown };
}

function parseSnapshot(value: unknown, previous: Map<string, ParsedElement>, media: MediaLookup): ParsedElement[] {
  if (typeof value !== 'string') {
    throw new Error(`messages column holds ${value === null ? 'NULL' : Buffer.isBuffer(value) ? 'a BLOB' : typeof value}, not JSON text`);
  }
  const ranges = splitTopLevelArray(value);
  const withMarkers = mayHaveMarkers(value);
  const out: ParsedElement[] = new Array(ranges.length);
  for (let i = 0; i < ranges.length; i++) {
    const [s, e] = ranges[i]!;
    const raw = value.slice(s, e);
    const seen = previous.get(raw);
    if (seen) {
      out[i] = seen;
      continue;
    }
    let json: JsonValue = parseJson(value, s, e);
    if (withMarkers && mayHaveMarkers(raw)) json = restoreMedia(json, media);
    const message = toMessage(json, i);
    out[i] = { raw, message, summary: isSummaryArtifact(message), keys: messageKeys(message) };
  }
  return out;
}
