/**
 * A snapshot payload (File and Redis stores keep one JSON object per snapshot, `messages` embedded):
 * its top-level members, with the `messages` value cut out as raw text so that it reaches the replay
 * exactly as a SQLite `messages` column would (byte-identical where the writer was `json.dumps`).
 *
 * Everything but `messages` is validated here with Python `json.loads` grammar (NaN/Infinity allowed,
 * raw control characters in strings refused); `messages` is only skipped structurally, because the
 * replay parses it anyway (and only the part that changed since the previous snapshot). A payload is
 * valid JSON exactly when this scan succeeds and its `messages` text parses.
 */

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const LBRACKET = 91;
const RBRACKET = 93;
const LBRACE = 123;
const RBRACE = 125;

export class PayloadError extends Error {}

export interface PayloadMembers {
  /** Raw text of each top-level member value except `messages`, by decoded key (a repeated key keeps its last value). */
  readonly members: Map<string, string>;
  /** Raw text of the `messages` value, or undefined when the payload has none (or the scan stopped before it). */
  readonly messages: string | undefined;
  /** The scan stopped at the `messages` key (`headOnly`): later members are not in `members`. */
  readonly stopped?: boolean;
}

function isWs(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

function skipWs(text: string, i: number): number {
  while (i < text.length && isWs(text.charCodeAt(i))) i++;
  return i;
}

/** Offset just past the string that opens at `q`, validating its escapes and characters. */
function skipString(text: string, q: number): number {
  for (let i = q + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c < 0x20) throw new PayloadError(`invalid control character at ${i}`);
    if (c === BACKSLASH) {
      const e = text[i + 1];
      if (e === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) throw new PayloadError(`invalid \\u escape at ${i}`);
        i += 5;
      } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
      else throw new PayloadError(`invalid escape at ${i}`);
    }
  }
  throw new PayloadError(`unterminated string at ${q}`);
}

/** Offset of the quote closing the string that opens at `q` (structure only: fast on long strings). */
function closingQuote(text: string, q: number): number {
  for (;;) {
    q = text.indexOf('"', q + 1);
    if (q < 0) throw new PayloadError('unterminated string');
    let b = q - 1;
    while (text.charCodeAt(b) === BACKSLASH) b--;
    if (((q - 1 - b) & 1) === 0) return q;
  }
}

/** How deep containers may nest: Python's `json.loads` raises RecursionError past about this many. */
export const MAX_NESTING = 1000;

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERAL = /true|false|null|NaN|Infinity|-Infinity/y;

/** Offset just past the JSON value at `i` (after whitespace), validated in full. */
function skipValue(text: string, i: number): number {
  // open containers: true for an object (expecting a key after '{' or ','), false for an array
  const stack: boolean[] = [];
  for (;;) {
    i = skipWs(text, i);
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = skipString(text, i);
    else if (c === LBRACE || c === LBRACKET) {
      const obj = c === LBRACE;
      i = skipWs(text, i + 1);
      if (text.charCodeAt(i) === (obj ? RBRACE : RBRACKET)) i++;
      else {
        if (stack.length >= MAX_NESTING) throw new PayloadError('nesting too deep');
        stack.push(obj);
        if (obj) i = memberColon(text, i);
        continue;
      }
    } else {
      LITERAL.lastIndex = i;
      NUMBER.lastIndex = i;
      const m = LITERAL.exec(text) ?? NUMBER.exec(text);
      if (!m || m[0].length === 0) throw new PayloadError(`expecting value at ${i}`);
      i += m[0].length;
    }
    // close what ends here; stop after a value at top level
    for (;;) {
      if (stack.length === 0) return i;
      i = skipWs(text, i);
      const d = text.charCodeAt(i);
      const obj = stack[stack.length - 1]!;
      if (d === COMMA) {
        i++;
        if (obj) i = memberColon(text, skipWs(text, i));
        break;
      }
      if (d !== (obj ? RBRACE : RBRACKET)) throw new PayloadError(`expecting ',' at ${i}`);
      stack.pop();
      i++;
    }
  }
}

/** At a member key: skips `"key" :` and returns the offset of its value. */
function memberColon(text: string, i: number): number {
  if (text.charCodeAt(i) !== QUOTE) throw new PayloadError(`expecting property name at ${i}`);
  i = skipWs(text, skipString(text, i));
  if (text.charCodeAt(i) !== COLON) throw new PayloadError(`expecting ':' at ${i}`);
  return i + 1;
}

/**
 * Offset just past the value at `i`, following only strings and brackets (containers); scalars are
 * validated. With `depth` > 0, `i` is inside that many open containers (between their elements). With
 * `ends`, the offset of every `,` or `]` that ends an element of the outermost array is recorded.
 */
function skipStructural(text: string, i: number, depth = 0, ends?: number[]): number {
  const c = text.charCodeAt(i);
  if (depth === 0 && c !== LBRACKET && c !== LBRACE) return skipValue(text, i);
  for (; i < text.length; i++) {
    const d = text.charCodeAt(i);
    if (d === QUOTE) i = closingQuote(text, i);
    else if (d === LBRACKET || d === LBRACE) depth++;
    else if (d === RBRACKET || d === RBRACE) {
      if (depth === 1) ends?.push(i);
      if (--depth === 0) return i + 1;
    } else if (d === COMMA && depth === 1) ends?.push(i);
  }
  throw new PayloadError('unterminated container');
}

function decodeKey(raw: string): string {
  return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
}

/**
 * What a reader carries from one payload to the next: the previous `messages` text and where each of
 * its elements ends. A run's snapshots repeat the history (core restamps the newest message once) and
 * append to it, so the next `messages` usually starts with the same bytes up to one of those ends,
 * where the structure is known (inside the array, between elements): only the rest needs scanning.
 */
export class MessagesHint {
  text = '';
  /** Offsets in `text` of the `,` or `]` after each element. */
  ends: number[] = [];
}

/** How many element ends, from the last, are tried as the repeated prefix (the replay tries as many). */
const HINT_TRIES = 4;

/** Offset just past the `messages` value at `start`, using and updating `hint`. */
function skipMessages(text: string, start: number, hint: MessagesHint | undefined): number {
  if (hint === undefined || text.charCodeAt(start) !== LBRACKET) return skipStructural(text, start);
  const ends: number[] = [];
  let i = -1;
  const prev = hint.ends;
  for (let k = prev.length - 1; k >= 0 && k >= prev.length - HINT_TRIES; k--) {
    const e = prev[k]!;
    if (text.length > start + e && text.slice(start, start + e) === hint.text.slice(0, e)) {
      for (let j = 0; j < k; j++) ends.push(prev[j]!);
      const rel: number[] = [];
      i = skipStructural(text, start + e, 1, rel);
      for (const r of rel) ends.push(r - start);
      break;
    }
  }
  if (i < 0) {
    const abs: number[] = [];
    i = skipStructural(text, start, 0, abs);
    for (const a of abs) ends.push(a - start);
  }
  hint.text = text.slice(start, i);
  hint.ends = ends;
  return i;
}

/**
 * The top-level members of a payload object; throws {@link PayloadError} when it is not one. With
 * `headOnly`, stops at the `messages` key (for a prefix of a file: the members written before it).
 */
export function scanPayload(text: string, headOnly = false, hint?: MessagesHint): PayloadMembers {
  const members = new Map<string, string>();
  let messages: string | undefined;
  let i = skipWs(text, 0);
  if (text.charCodeAt(i) !== LBRACE) throw new PayloadError('not a JSON object');
  i = skipWs(text, i + 1);
  if (text.charCodeAt(i) === RBRACE) i++;
  else {
    for (;;) {
      if (text.charCodeAt(i) !== QUOTE) throw new PayloadError(`expecting property name at ${i}`);
      const keyEnd = skipString(text, i);
      const key = decodeKey(text.slice(i, keyEnd));
      i = skipWs(text, keyEnd);
      if (text.charCodeAt(i) !== COLON) throw new PayloadError(`expecting ':' at ${i}`);
      const start = skipWs(text, i + 1);
      if (key === 'messages') {
        if (headOnly) return { members, messages: undefined, stopped: true };
        i = skipMessages(text, start, hint);
        messages = text.slice(start, i);
      } else {
        i = skipValue(text, start);
        members.set(key, text.slice(start, i));
      }
      i = skipWs(text, i);
      const c = text.charCodeAt(i);
      if (c === COMMA) {
        i = skipWs(text, i + 1);
        continue;
      }
      if (c !== RBRACE) throw new PayloadError(`expecting ',' at ${i}`);
      i++;
      break;
    }
  }
  if (skipWs(text, i) !== text.length) throw new PayloadError(`extra data at ${i}`);
  return { members, messages };
}

// ---------------------------------------------------------------------------------------------
// Reading member values

const INTEGER = /^-?(?:0|[1-9]\d*)$/;

/** A JSON string member, decoded; undefined when absent or not a string. */
export function stringMember(p: PayloadMembers, key: string): string | undefined {
  const raw = p.members.get(key);
  return raw !== undefined && raw.charCodeAt(0) === QUOTE ? (JSON.parse(raw) as string) : undefined;
}

/** An integer member: a JSON integer lexeme (Python `int`); undefined for anything else. */
export function integerMember(p: PayloadMembers, key: string): number | undefined {
  const raw = p.members.get(key);
  return raw !== undefined && INTEGER.test(raw) ? Number(raw) : undefined;
}

/** Whether the member is absent, `null` or a string (Python `str | None`). */
export function isOptionalString(p: PayloadMembers, key: string): boolean {
  const raw = p.members.get(key);
  return raw === undefined || raw === 'null' || raw.charCodeAt(0) === QUOTE;
}

/**
 * `step_index` from a payload's first bytes: a number, null when the head shows it is not an integer,
 * undefined when the head does not tell (read the whole payload).
 */
export function headStep(head: string): number | null | undefined {
  const cut = head.lastIndexOf(',');
  if (cut < 0) return undefined;
  try {
    const p = scanPayload(head.slice(0, cut + 1) + '"messages": 0}', true);
    if (!p.stopped || !p.members.has('step_index')) return undefined;
    return integerMember(p, 'step_index') ?? null;
  } catch {
    return undefined;
  }
}
