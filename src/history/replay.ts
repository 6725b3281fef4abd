import { parseJson } from '../py/json-parse.js';
import { membersFrom, objectMembers, splitTopLevelArray } from '../py/json-scan.js';
import type { JsonValue } from '../py/json-value.js';
import { KEYLESS_FIELDS, messageKeys, type MessageKeys } from './keys.js';
import { toMessage, unknownPartKinds, type Message } from './messages.js';
import { longestOverlap } from './overlap.js';
import { isSummaryArtifact } from './summary.js';
import type { StoreSnapshot } from '../store/reader.js';
import { mayHaveMarkers, restoreMedia, type MediaCache } from './media.js';
import { objectArray } from './arrays.js';

/** One message of a run's durable record. */
export interface RecordMessage {
  readonly message: Message;
  readonly keys: MessageKeys;
  /** The snapshot (seq, step_index) that first carried this message; later copies replace the message only. */
  readonly firstSeq: number;
  readonly firstStep: number | null;
  /** The kept copy's exact text inside its snapshot: set only by a replayer asked to keep it (export). */
  readonly json?: string;
}

/** A record position known only by its keys (resuming a replay from a persisted index). */
export interface StoredPosition {
  readonly keys: MessageKeys;
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
  readonly message: Message;
  readonly summary: boolean;
  readonly keys: MessageKeys;
}

/** A parsed snapshot, kept so that the next one (of the run, or of a later run of the conversation) can reuse it. */
export interface ParsedSnapshot {
  readonly text: string;
  readonly ranges: Array<[number, number]>;
  readonly elements: ParsedElement[];
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Rebuilds one run's durable record from its complete snapshots, in `seq` order (spec §3.2 with the
 * loose key and the later copy kept). Resumable: a persisted index feeds it the stored positions and
 * then only the snapshots added since.
 *
 * Consecutive snapshots mostly repeat each other byte for byte: the longest run of leading elements
 * whose text equals the previous snapshot's is found with native string comparison and reused, so only
 * the changed tail of each snapshot is scanned and parsed. A run's first snapshot is compared with
 * `seed`, the last snapshot of the conversation's previous run, whose history it usually inherits.
 * An element that differs from the previous snapshot's element at its position only in what core
 * stamps later (timestamp, run id, instructions) reuses that element's parts and keys.
 */
export class RunReplayer {
  private readonly entries: Array<RecordMessage | StoredPosition>;
  private readonly looseKeys: string[];
  private previous: ParsedSnapshot | null = null;
  readonly skipped: SkippedSnapshot[] = [];
  snapshotsRead = 0;
  /** Lowest position whose message was appended or replaced since construction. */
  firstChanged: number;

  constructor(
    readonly runId: string,
    private readonly media: MediaCache,
    stored: readonly StoredPosition[] = [],
    seed: ParsedSnapshot | null = null,
    /** Keep each message's stored text (the bytes export writes); off for search, which never needs it. */
    private readonly keepJson = false,
    /** Reuse the previous snapshot's parse (off only to check that reuse changes nothing: every snapshot parsed whole). */
    private readonly reuse = true,
  ) {
    this.previous = seed;
    this.entries = objectArray();
    this.looseKeys = objectArray();
    for (const p of stored) {
      this.entries.push(p);
      this.looseKeys.push(p.keys.loose);
    }
    this.firstChanged = stored.length;
  }

  /** The last snapshot parsed (or the seed): what a later run of the conversation may start from. */
  get lastSnapshot(): ParsedSnapshot | null {
    return this.previous;
  }

  get length(): number {
    return this.entries.length;
  }

  /** Positions from `from` on, all replayed in this process (`from >= firstChanged`). */
  freshMessages(from = this.firstChanged): RecordMessage[] {
    return this.entries.slice(from) as RecordMessage[];
  }

  add(row: StoreSnapshot): void {
    this.snapshotsRead++;
    if (row.problem !== undefined) {
      this.skipped.push({ runId: this.runId, seq: row.seq, reason: row.problem });
      return;
    }
    let parsed: ParsedSnapshot;
    try {
      parsed = this.parse(row.messages);
    } catch (e) {
      this.skipped.push({ runId: this.runId, seq: row.seq, reason: errorText(e) });
      return;
    }
    this.previous = parsed;
    // plain loops, no callbacks: a closure made per snapshot never gets type feedback of its own
    const keptAt: number[] = [];
    const kept: ParsedElement[] = objectArray();
    const keptKeys: string[] = objectArray();
    for (let i = 0; i < parsed.elements.length; i++) {
      const el = parsed.elements[i]!;
      if (el.summary) continue;
      keptAt.push(i);
      kept.push(el);
      keptKeys.push(el.keys.loose);
    }
    const overlap = longestOverlap(this.looseKeys, keptKeys);
    const step = typeof row.stepIndex === 'number' ? row.stepIndex : null;
    const base = this.entries.length - overlap;
    if (kept.length > 0) this.firstChanged = Math.min(this.firstChanged, base);
    for (let i = 0; i < kept.length; i++) {
      const el = kept[i]!;
      const range = parsed.ranges[keptAt[i]!]!;
      if (i < overlap) {
        // later copy kept: it carries what core stamped after the first save (e.g. instruction deltas)
        const old = this.entries[base + i]!;
        // the very element held (a reused parse): nothing to replace
        if (!this.keepJson && (old as Partial<RecordMessage>).message === el.message && old.keys === el.keys) continue;
        const json = this.keepJson ? keptText(parsed.text, range, (old as RecordMessage).json) : undefined;
        this.entries[base + i] = { message: el.message, keys: el.keys, firstSeq: old.firstSeq, firstStep: old.firstStep, json };
      } else {
        const json = this.keepJson ? keptText(parsed.text, range) : undefined;
        this.entries.push({ message: el.message, keys: el.keys, firstSeq: row.seq, firstStep: step, json });
        this.looseKeys.push(el.keys.loose);
      }
    }
  }

  /** The finished record; only valid when the replay started from nothing. */
  result(): RunReplay {
    const messages = this.entries as RecordMessage[];
    return {
      runId: this.runId,
      messages,
      snapshotsRead: this.snapshotsRead,
      skipped: this.skipped,
      unknownPartKinds: countUnknownParts(messages),
    };
  }

  private parse(value: unknown): ParsedSnapshot {
    if (typeof value !== 'string') {
      throw new Error(`messages column holds ${value === null ? 'NULL' : Buffer.isBuffer(value) ? 'a BLOB' : typeof value}, not JSON text`);
    }
    const prev = this.reuse ? this.previous : null;
    let reused = 0;
    if (prev && prev.ranges.length > 0) {
      // longest byte-identical prefix of whole elements, trying the likeliest (almost all) first
      for (let k = prev.ranges.length; k > 0; k--) {
        const end = prev.ranges[k - 1]![1];
        // slice equality is a memcmp in V8; startsWith compares character by character
        if (value.length > end && value.slice(0, end) === prev.text.slice(0, end)) {
          reused = k;
          break;
        }
        if (k < prev.ranges.length - 4) break; // a deeper change: parse the whole snapshot
      }
    }
    const ranges =
      reused > 0
        ? prev!.ranges.slice(0, reused).concat(splitTopLevelArray(value, prev!.ranges[reused - 1]![1]))
        : splitTopLevelArray(value);
    const elements: ParsedElement[] = reused > 0 ? prev!.elements.slice(0, reused) : objectArray();
    for (let i = reused; i < ranges.length; i++) {
      const [s, e] = ranges[i]!;
      const marked = mayHaveMarkers(value.slice(s, e));
      const restamped = prev && i < prev.ranges.length && !marked ? restampedElement(prev, i, value, s, e) : null;
      if (restamped) {
        elements.push(restamped);
        continue;
      }
      let json: JsonValue = parseJson(value, s, e);
      if (marked) json = restoreMedia(json, this.media);
      const message = toMessage(json, i);
      elements.push({ message, summary: isSummaryArtifact(message), keys: messageKeys(message) });
    }
    return { text: value, ranges, elements };
  }
}

/**
 * The element at `text[s, e)` when it equals `prev`'s element `i` except for values of the fields the
 * keys leave out (so keys, parts and summary status carry over), or null when that cannot be shown
 * from the text: then the element is parsed in full. Values that differ are parsed here; the rest is
 * byte-identical to text that parsed before, and `objectMembers` checked the punctuation around it.
 * The old copy is scanned only from its first member that differs: the members before it (each up to
 * the next key, byte-identical at the same distance from the start) scan the same in both copies.
 */
function restampedElement(prev: ParsedSnapshot, i: number, text: string, s: number, e: number): ParsedElement | null {
  const old = prev.elements[i]!;
  const [ps, pe] = prev.ranges[i]!;
  const b = objectMembers(text, s, e);
  const n = b === null ? -1 : b.length;
  if (b === null || n !== old.message.raw.size * 4) return null;
  const was = prev.text;
  const shift = ps - s;
  let m = 0; // members before b[m] are the same text in both copies
  if (n > 0 && b[0]! + shift < pe && text.slice(s, b[0]) === was.slice(ps, b[0]! + shift)) {
    while (m + 4 < n && b[m + 4]! + shift < pe && text.slice(b[m]!, b[m + 4]!) === was.slice(b[m]! + shift, b[m + 4]! + shift)) m += 4;
  }
  const a = m === 0 ? objectMembers(was, ps, pe) : membersFrom(was, b[m]! + shift, pe);
  if (!a || a.length !== n - m) return null;
  const keyless = KEYLESS_FIELDS[old.message.kind];
  let raw: Map<string, JsonValue> | null = null;
  for (let k = m; k < n; k += 4) {
    const j = k - m;
    const keyText = text.slice(b[k]!, b[k + 1]!);
    if (keyText !== was.slice(a[j]!, a[j + 1]!)) return null;
    if (text.slice(b[k + 2]!, b[k + 3]!) === was.slice(a[j + 2]!, a[j + 3]!)) continue;
    // an escaped spelling of a field name is not recognized here and takes the full parse
    const key = keyText.slice(1, -1);
    if (!keyless.has(key)) return null;
    try {
      (raw ??= new Map(old.message.raw)).set(key, parseJson(text, b[k + 2]!, b[k + 3]!));
    } catch {
      return null; // the full parse reports it
    }
  }
  if (!raw) return old; // only whitespace differs
  const message: Message = { kind: old.message.kind, raw, parts: old.message.parts };
  return { message, summary: old.summary, keys: old.keys };
}

/**
 * `text[s, e)` as a string of its own: a plain slice would keep the whole snapshot text alive for as
 * long as the message is held (V8 sliced strings), one snapshot per message. A later copy with the
 * same bytes as the one held (most snapshots repeat their history) keeps the held string: no copy.
 */
function keptText(text: string, [s, e]: readonly [number, number], held?: string): string {
  const slice = text.slice(s, e);
  if (held !== undefined && held === slice) return held;
  return Buffer.from(slice, 'utf16le').toString('utf16le');
}

export function countUnknownParts(messages: readonly RecordMessage[]): Map<string, number> {
  const unknown = new Map<string, number>();
  for (const m of messages) for (const pk of unknownPartKinds(m.message)) unknown.set(pk, (unknown.get(pk) ?? 0) + 1);
  return unknown;
}

/** Replays a run from nothing. */
export function replayRun(runId: string, rows: Iterable<StoreSnapshot>, media: MediaCache): RunReplay {
  const r = new RunReplayer(runId, media);
  for (const row of rows) r.add(row);
  return r.result();
}
