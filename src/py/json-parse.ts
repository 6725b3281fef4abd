/**
 * A JSON parser with Python `json.loads` semantics, producing the {@link JsonValue} model:
 * integers stay exact (`PyInt`, bigint), numbers with a fraction or an exponent become `PyFloat`,
 * `NaN` / `Infinity` / `-Infinity` are accepted, objects become insertion-ordered `Map`s
 * (a duplicate key keeps its first position and its last value, like a Python dict), strings may
 * hold lone surrogates from `\uXXXX` escapes, and raw control characters inside strings are
 * rejected (Python's `strict=True`).
 *
 * The parser is iterative (explicit container stack), so deep nesting cannot overflow the JS stack;
 * nesting beyond {@link MAX_JSON_DEPTH} is rejected with a {@link JsonParseError}. Any invalid input
 * throws a {@link JsonParseError} and nothing else.
 */
import { PyFloat, PyInt, type JsonArray, type JsonObject, type JsonValue } from './json-value.js';

/**
 * Maximum container nesting depth accepted by {@link parseJson}. Python's `json.loads` runs into its
 * recursion limit near 1,000 levels and the reference then skips the snapshot; a bound here also keeps
 * every later recursive walk (keys, repr) far from the JS stack limit, so results never depend on it.
 */
export const MAX_JSON_DEPTH = 1_000;

export class JsonParseError extends Error {
  /** UTF-16 offset into the parsed text (absolute, not relative to `start`). */
  readonly position: number;

  constructor(message: string, position: number) {
    super(`${message} at position ${position}`);
    this.name = 'JsonParseError';
    this.position = position;
  }
}

// Character codes.
const TAB = 9;
const LF = 10;
const CR = 13;
const SPACE = 32;
const QUOTE = 34; // "
const PLUS = 43; // +
const COMMA = 44; // ,
const MINUS = 45; // -
const DOT = 46; // .
const SLASH = 47; // /
const ZERO = 48; // 0
const NINE = 57; // 9
const COLON = 58; // :
const UPPER_E = 69; // E
const UPPER_I = 73; // I
const UPPER_N = 78; // N
const LBRACKET = 91; // [
const BACKSLASH = 92; // \
const RBRACKET = 93; // ]
const LOWER_B = 98; // b
const LOWER_E = 101; // e
const LOWER_F = 102; // f
const LOWER_N = 110; // n
const LOWER_R = 114; // r
const LOWER_T = 116; // t
const LOWER_U = 117; // u
const LBRACE = 123; // {
const RBRACE = 125; // }

/** Shared instances for small non-negative integers (PyInt is immutable). */
const SMALL_INTS: readonly PyInt[] = Array.from({ length: 256 }, (_, k) => new PyInt(BigInt(k)));

/** Value of a hex digit, or -1. */
function hexVal(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** End offset of the last string parsed by {@link parseString} (module state avoids closures). */
let scanEnd = 0;

/**
 * Parse a JSON string whose opening quote is at `q` (text ends at `end`); sets {@link scanEnd} just
 * past the closing quote.
 */
function parseString(text: string, q: number, end: number): string {
  let j = q + 1;
  // Fast path: no escapes.
  for (;;) {
    if (j >= end) throw new JsonParseError('Unterminated string starting at', q);
    const ch = text.charCodeAt(j);
    if (ch === QUOTE) {
      scanEnd = j + 1;
      // V8 makes slices of 13+ characters views that keep the whole source text alive; a parsed
      // message outlives its snapshot text, so copy (slicing a fresh concatenation flattens it).
      return j - q > 13 ? (' ' + text.slice(q + 1, j)).slice(1) : text.slice(q + 1, j);
    }
    if (ch === BACKSLASH) break;
    if (ch < 0x20) throw new JsonParseError('Invalid control character at', j);
    j++;
  }
  // Escapes present: find the closing quote, then let the native JSON.parse decode the literal
  // (its string grammar is the same as Python's strict one). On failure, decode by hand to report
  // the precise error.
  for (;;) {
    if (j >= end) break;
    const ch = text.charCodeAt(j);
    if (ch === QUOTE) {
      try {
        const decoded = JSON.parse(text.slice(q, j + 1)) as string;
        scanEnd = j + 1;
        return decoded;
      } catch {
        break;
      }
    }
    if (ch === BACKSLASH) j += 2;
    else if (ch < 0x20) break;
    else j++;
  }
  return decodeString(text, q, end);
}

/** Decode a JSON string literal at `q` char by char; sets {@link scanEnd}; throws precise errors. */
function decodeString(text: string, q: number, end: number): string {
  let j = q + 1;
  let out = '';
  let chunk = j;
  for (;;) {
    if (j >= end) throw new JsonParseError('Unterminated string starting at', q);
    const ch = text.charCodeAt(j);
    if (ch === QUOTE) {
      scanEnd = j + 1;
      return chunk < j ? out + text.slice(chunk, j) : out;
    }
    if (ch === BACKSLASH) {
      if (chunk < j) out += text.slice(chunk, j);
      if (j + 1 >= end) throw new JsonParseError('Unterminated string starting at', q);
      const e = text.charCodeAt(j + 1);
      switch (e) {
        case QUOTE:
          out += '"';
          break;
        case BACKSLASH:
          out += '\\';
          break;
        case SLASH:
          out += '/';
          break;
        case LOWER_B:
          out += '\b';
          break;
        case LOWER_F:
          out += '\f';
          break;
        case LOWER_N:
          out += '\n';
          break;
        case LOWER_R:
          out += '\r';
          break;
        case LOWER_T:
          out += '\t';
          break;
        case LOWER_U: {
          if (j + 6 > end) throw new JsonParseError('Invalid \\uXXXX escape', j + 1);
          const h0 = hexVal(text.charCodeAt(j + 2));
          const h1 = hexVal(text.charCodeAt(j + 3));
          const h2 = hexVal(text.charCodeAt(j + 4));
          const h3 = hexVal(text.charCodeAt(j + 5));
          if ((h0 | h1 | h2 | h3) < 0) throw new JsonParseError('Invalid \\uXXXX escape', j + 1);
          // Surrogate pairs written as two escapes combine on their own: JS strings are UTF-16.
          out += String.fromCharCode((h0 << 12) | (h1 << 8) | (h2 << 4) | h3);
          j += 4;
          break;
        }
        default:
          throw new JsonParseError('Invalid \\escape', j);
      }
      j += 2;
      chunk = j;
      continue;
    }
    if (ch < 0x20) throw new JsonParseError('Invalid control character at', j);
    j++;
  }
}

/**
 * Skip whitespace from `i`, then require an object key and ':'; sets {@link scanEnd} just after
 * the ':'.
 */
function parseKey(text: string, i: number, end: number): string {
  let c = 0;
  while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
  if (i >= end || text.charCodeAt(i) !== QUOTE) {
    throw new JsonParseError('Expecting property name enclosed in double quotes', i);
  }
  const key = parseString(text, i, end);
  i = scanEnd;
  while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
  if (i >= end || text.charCodeAt(i) !== COLON) throw new JsonParseError("Expecting ':' delimiter", i);
  scanEnd = i + 1;
  return key;
}

function tooDeep(position: number): never {
  throw new JsonParseError(`Maximum nesting depth of ${MAX_JSON_DEPTH} exceeded`, position);
}

function matchWord(text: string, word: string, at: number, end: number): boolean {
  return at + word.length <= end && text.startsWith(word, at);
}

/**
 * Parse exactly one JSON value from `text[start, end)`; surrounding JSON whitespace (space, tab,
 * CR, LF) is allowed, anything else is an error.
 *
 * The native JSON.parse does the work where its result provably carries everything Python's view
 * needs (see {@link parseNatively}); anything else, errors included, goes through {@link parseJsonByHand}.
 */
export function parseJson(text: string, start = 0, end: number = text.length): JsonValue {
  if (end > text.length) end = text.length;
  if (start < 0) start = 0;
  return parseNatively(text, start, end) ?? parseJsonByHand(text, start, end);
}

/** A digit followed by what only a fraction or an exponent puts after one, in a number. */
const DIGIT_THEN_FRACTION = /\d[.eE]/g;

function isWhitespace(c: number): boolean {
  return c === SPACE || c === LF || c === CR || c === TAB;
}

/**
 * Whether `text[start, end)` may hold a number JSON.parse would lose the spelling of: one with a
 * fraction or an exponent (`1.0` is a Python float, JSON.parse gives the integer 1; integers beyond
 * exact doubles are caught after parsing). Such a number has a digit followed by `.`, `e` or `E`, and
 * outside a string its digits follow `"key":`, `[` or `,` (JSON whitespace between) or start the text.
 * Inside a string a `"` is escaped, so these checks can only ever say yes too often, never too rarely.
 */
function mayHaveLossyNumber(text: string, start: number, end: number): boolean {
  const re = DIGIT_THEN_FRACTION;
  re.lastIndex = start;
  for (let m = re.exec(text); m !== null && m.index + 1 < end; m = re.exec(text)) {
    let i = m.index;
    while (i > start && text.charCodeAt(i - 1) >= ZERO && text.charCodeAt(i - 1) <= NINE) i--;
    if (i > start && text.charCodeAt(i - 1) === MINUS) i--;
    while (i > start && isWhitespace(text.charCodeAt(i - 1))) i--;
    if (i === start) return true;
    const c = text.charCodeAt(i - 1);
    if (c === LBRACKET || c === COMMA) return true;
    if (c === COLON) {
      i--;
      while (i > start && isWhitespace(text.charCodeAt(i - 1))) i--;
      if (i > start && text.charCodeAt(i - 1) === QUOTE) return true;
    }
    re.lastIndex = m.index + 1;
  }
  return false;
}

/** Containers nested deeper than this go by hand, which applies {@link MAX_JSON_DEPTH} exactly. */
const NATIVE_DEPTH = MAX_JSON_DEPTH - 10;

/** Marks a native result that must go by hand (module state: no allocation per value). */
let byHand = false;

/**
 * `text[start, end)` parsed by JSON.parse and converted to the {@link JsonValue} model, or undefined
 * when the result could differ from {@link parseJsonByHand}'s: any syntax JSON.parse refuses (Python's
 * NaN and Infinity, errors, whose message the hand parser words), a lossy number spelling, an object
 * with an integer-like key (JavaScript enumerates those first, a Python dict keeps insertion order),
 * or deep nesting. Strings, escapes (lone surrogates too), duplicate keys (first position, last value)
 * and JSON whitespace mean the same to both.
 */
export function parseNatively(text: string, start: number, end: number): JsonValue | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(start === 0 && end === text.length ? text : text.slice(start, end));
  } catch {
    return undefined;
  }
  byHand = false;
  numbers = 0;
  const value = fromNative(raw, 0);
  // without a number in the result there is no spelling to check (most messages have none)
  return byHand || (numbers > 0 && mayHaveLossyNumber(text, start, end)) ? undefined : value;
}

/** Numbers met by {@link fromNative} (module state, like {@link byHand}). */
let numbers = 0;

function fromNative(v: unknown, depth: number): JsonValue {
  if (typeof v === 'string' || typeof v === 'boolean' || v === null) return v;
  if (typeof v === 'number') {
    numbers++;
    // spelled as an integer (mayHaveLossyNumber saw no fraction or exponent); past 2^53 it was rounded
    if (!Number.isSafeInteger(v)) {
      byHand = true;
      return null;
    }
    return v >= 0 && v < SMALL_INTS.length ? SMALL_INTS[v]! : new PyInt(BigInt(v));
  }
  if (depth >= NATIVE_DEPTH) {
    byHand = true;
    return null;
  }
  if (Array.isArray(v)) {
    const out: JsonValue[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = fromNative(v[i], depth + 1);
    return out;
  }
  const out: JsonObject = new Map();
  let first = true;
  for (const k in v as Record<string, unknown>) {
    // integer-like keys enumerate first: if there is one, the first key is one
    if (first) {
      const c = k.charCodeAt(0);
      if (c >= ZERO && c <= NINE) byHand = true;
      first = false;
    }
    out.set(k, fromNative((v as Record<string, unknown>)[k], depth + 1));
  }
  return out;
}

/** {@link parseJson} without the native fast path: the reference for it, and what reports errors. */
export function parseJsonByHand(text: string, start = 0, end: number = text.length): JsonValue {
  if (end > text.length) end = text.length;
  if (start < 0) start = 0;
  let i = start;
  let c = 0;

  // Container stack. `cur` is the innermost open container (null at top level), `curKey` the key
  // being filled when `cur` is an object.
  const containers: Array<JsonArray | JsonObject> = [];
  const keys: string[] = [];
  let cur: JsonArray | JsonObject | null = null;
  let curIsArray = false;
  let curKey = '';
  let depth = 0;
  let value: JsonValue = null;

  for (;;) {
    // ---- Parse one value starting at (whitespace before) i. ----
    while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
    if (i >= end) throw new JsonParseError('Expecting value', i);
    c = text.charCodeAt(i);

    if (c === QUOTE) {
      value = parseString(text, i, end);
      i = scanEnd;
    } else if ((c >= ZERO && c <= NINE) || c === MINUS) {
      const s = i;
      if (c === MINUS) {
        i++;
        if (i < end && text.charCodeAt(i) === UPPER_I && matchWord(text, 'Infinity', i, end)) {
          i += 8;
          value = new PyFloat(-Infinity);
          c = -1; // value done; skip the digit scanning below
        } else {
          c = i < end ? text.charCodeAt(i) : -1;
          if (c < ZERO || c > NINE) throw new JsonParseError('Expecting value', s);
        }
      }
      if (c !== -1) {
        // Integer part: '0' or [1-9][0-9]*; accumulate its value (exact while it has <= 15 digits).
        let n = c - ZERO;
        i++;
        if (n !== 0) {
          while (i < end && (c = text.charCodeAt(i)) >= ZERO && c <= NINE) {
            n = n * 10 + (c - ZERO);
            i++;
          }
        }
        let isFloat = false;
        // Fraction: only if '.' is followed by a digit (Python's regex), else the number ends here.
        if (i + 1 < end && text.charCodeAt(i) === DOT && (c = text.charCodeAt(i + 1)) >= ZERO && c <= NINE) {
          isFloat = true;
          i += 2;
          while (i < end && (c = text.charCodeAt(i)) >= ZERO && c <= NINE) i++;
        }
        // Exponent: only if complete.
        if (i < end && ((c = text.charCodeAt(i)) === LOWER_E || c === UPPER_E)) {
          let j = i + 1;
          if (j < end && ((c = text.charCodeAt(j)) === PLUS || c === MINUS)) j++;
          if (j < end && (c = text.charCodeAt(j)) >= ZERO && c <= NINE) {
            isFloat = true;
            i = j + 1;
            while (i < end && (c = text.charCodeAt(i)) >= ZERO && c <= NINE) i++;
          }
        }
        if (isFloat) {
          value = new PyFloat(Number(text.slice(s, i)));
        } else if (i - s < 16) {
          if (text.charCodeAt(s) === MINUS) n = -n;
          value = n >= 0 && n < SMALL_INTS.length ? SMALL_INTS[n] : new PyInt(BigInt(n));
        } else {
          value = new PyInt(BigInt(text.slice(s, i)));
        }
      }
    } else if (c === LBRACE) {
      i++;
      while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
      if (i < end && text.charCodeAt(i) === RBRACE) {
        if (depth >= MAX_JSON_DEPTH) tooDeep(i);
        i++;
        value = new Map();
      } else {
        if (++depth > MAX_JSON_DEPTH) tooDeep(i);
        if (cur !== null) {
          containers.push(cur);
          keys.push(curKey);
        }
        cur = new Map();
        curIsArray = false;
        curKey = parseKey(text, i, end);
        i = scanEnd;
        continue;
      }
    } else if (c === LBRACKET) {
      i++;
      while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
      if (i < end && text.charCodeAt(i) === RBRACKET) {
        if (depth >= MAX_JSON_DEPTH) tooDeep(i);
        i++;
        value = [];
      } else {
        if (++depth > MAX_JSON_DEPTH) tooDeep(i);
        if (cur !== null) {
          containers.push(cur);
          keys.push(curKey);
        }
        cur = [];
        curIsArray = true;
        continue;
      }
    } else if (c === LOWER_T && matchWord(text, 'true', i, end)) {
      i += 4;
      value = true;
    } else if (c === LOWER_F && matchWord(text, 'false', i, end)) {
      i += 5;
      value = false;
    } else if (c === LOWER_N && matchWord(text, 'null', i, end)) {
      i += 4;
      value = null;
    } else if (c === UPPER_N && matchWord(text, 'NaN', i, end)) {
      i += 3;
      value = new PyFloat(NaN);
    } else if (c === UPPER_I && matchWord(text, 'Infinity', i, end)) {
      i += 8;
      value = new PyFloat(Infinity);
    } else if (c === 0xfeff && i === start) {
      throw new JsonParseError('Unexpected UTF-8 BOM (decode using utf-8-sig)', i);
    } else {
      throw new JsonParseError('Expecting value', i);
    }

    // ---- Attach the value to the enclosing containers, closing those that end here. ----
    for (;;) {
      if (cur === null) {
        while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
        if (i !== end) throw new JsonParseError('Extra data', i);
        return value;
      }
      while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
      c = i < end ? text.charCodeAt(i) : -1;
      if (curIsArray) {
        (cur as JsonArray).push(value);
        if (c === COMMA) {
          i++;
          break;
        }
        if (c !== RBRACKET) throw new JsonParseError("Expecting ',' delimiter", i);
      } else {
        (cur as JsonObject).set(curKey, value);
        if (c === COMMA) {
          i++;
          curKey = parseKey(text, i, end);
          i = scanEnd;
          break;
        }
        if (c !== RBRACE) throw new JsonParseError("Expecting ',' delimiter", i);
      }
      // Close the current container; it becomes the value for its parent.
      i++;
      value = cur;
      depth--;
      if (containers.length === 0) {
        cur = null;
      } else {
        cur = containers.pop()!;
        curKey = keys.pop()!;
        curIsArray = Array.isArray(cur);
      }
    }
  }
}
