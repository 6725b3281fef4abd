/**
 * Scanning JSON text without parsing it: where a snapshot's top-level elements and an object's members
 * start and end, so that replay can compare and reuse unchanged text (history/replay.ts). Nothing here
 * validates values: a caller parses (or compares with text parsed before) each range it uses.
 */
import { JsonParseError } from './json-parse.js';

// Character codes.
const TAB = 9;
const LF = 10;
const CR = 13;
const SPACE = 32;
const QUOTE = 34; // "
const COMMA = 44; // ,
const COLON = 58; // :
const LBRACKET = 91; // [
const BACKSLASH = 92; // \
const RBRACKET = 93; // ]
const LBRACE = 123; // {
const RBRACE = 125; // }

/**
 * Given text holding a JSON array, return the `[start, end)` UTF-16 offsets of each top-level
 * element (trimmed of whitespace, without commas). Only scans (tracks strings and bracket nesting);
 * elements are not validated — `parseJson(text, start, end)` on each range parses that element.
 * Throws {@link JsonParseError} if the text is not a single array or brackets are unbalanced.
 * With `resumeAfter`, scanning starts just after an element ending there and only later elements are returned.
 */
export function splitTopLevelArray(text: string, resumeAfter?: number): Array<[number, number]> {
  const end = text.length;
  const out: Array<[number, number]> = [];
  let i = 0;
  let c = 0;
  let empty = false;
  if (resumeAfter !== undefined) {
    // Continue after a top-level element known to end at `resumeAfter` (a byte-identical prefix
    // of the previous snapshot): only its tail is scanned.
    i = resumeAfter;
    while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
    if (i < end && c === RBRACKET) {
      i++;
      empty = true;
    } else if (i < end && c === COMMA) {
      i++;
    } else {
      throw new JsonParseError("Expecting ',' delimiter", i);
    }
  } else {
    while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
    if (i >= end || text.charCodeAt(i) !== LBRACKET) throw new JsonParseError('Expecting array', i);
    i++;
    while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
    if (i < end && text.charCodeAt(i) === RBRACKET) {
      i++;
      empty = true;
    }
  }
  if (!empty) {
    // Stack of open bracket codes inside the current element (0 length = element level).
    const open: number[] = [];
    let elemStart = -1; // first non-whitespace char of the current element, -1 if none yet
    let elemEnd = -1; // one past the last non-whitespace char of the current element
    let closed = false;
    while (i < end) {
      c = text.charCodeAt(i);
      if (c === SPACE || c === LF || c === CR || c === TAB) {
        i++;
        continue;
      }
      if (open.length === 0 && (c === COMMA || c === RBRACKET)) {
        if (elemStart < 0) {
          throw new JsonParseError(c === COMMA ? 'Expecting value' : 'Expecting value before ]', i);
        }
        out.push([elemStart, elemEnd]);
        elemStart = -1;
        i++;
        if (c === RBRACKET) {
          closed = true;
          break;
        }
        continue;
      }
      if (elemStart < 0) elemStart = i;
      if (c === QUOTE) {
        const q = closingQuote(text, i, end);
        if (q < 0) throw new JsonParseError('Unterminated string starting at', i);
        i = q + 1;
      } else {
        if (c === LBRACKET || c === LBRACE) {
          open.push(c);
        } else if (c === RBRACKET || c === RBRACE) {
          const o = open.pop();
          if (o === undefined || (c === RBRACKET ? o !== LBRACKET : o !== LBRACE)) {
            throw new JsonParseError('Unbalanced bracket', i);
          }
        }
        i++;
      }
      elemEnd = i;
    }
    if (!closed) throw new JsonParseError('Unterminated array', i);
  }
  while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
  if (i !== end) throw new JsonParseError('Extra data', i);
  return out;
}

/**
 * The members of the JSON object at `text[start, end)` as flat offsets
 * `[keyStart, keyEnd, valueStart, valueEnd, ...]` (the key with its quotes, the value trimmed), or
 * null when the range is not an object of that shape. Like {@link splitTopLevelArray} it only scans:
 * values are not validated, so a caller must parse (or compare with validated text) each value it uses.
 */
export function objectMembers(text: string, start: number, end: number): number[] | null {
  let i = start;
  let c = 0;
  if (text.charCodeAt(i) !== LBRACE) return null;
  i++;
  while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
  if (c === RBRACE) return i + 1 === end ? [] : null;
  return membersFrom(text, i, end);
}

/**
 * {@link objectMembers} of the members from `from` on, where `from` is the start of a member (its key,
 * or whitespace before it) of the object that ends at `end`: what a caller that knows the text before
 * `from` to be byte-identical to an object it scanned before scans of the rest.
 */
export function membersFrom(text: string, from: number, end: number): number[] | null {
  let i = from;
  let c = 0;
  const out: number[] = [];
  for (;;) {
    while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
    if (i >= end || c !== QUOTE) return null;
    const keyStart = i;
    i = closingQuote(text, i, end);
    if (i < 0) return null;
    const keyEnd = ++i;
    while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
    if (i >= end || c !== COLON) return null;
    i++;
    while (i < end && ((c = text.charCodeAt(i)) === SPACE || c === LF || c === CR || c === TAB)) i++;
    const valueStart = i;
    let valueEnd = i;
    let depth = 0;
    while (i < end) {
      c = text.charCodeAt(i);
      if (c === QUOTE) {
        i = closingQuote(text, i, end);
        if (i < 0) return null;
        valueEnd = ++i;
        continue;
      }
      if (c === LBRACE || c === LBRACKET) depth++;
      else if (c === RBRACE || c === RBRACKET) {
        if (depth === 0) break;
        depth--;
      } else if (c === COMMA && depth === 0) break;
      i++;
      if (!(c === SPACE || c === LF || c === CR || c === TAB)) valueEnd = i;
    }
    if (i >= end || valueEnd === valueStart) return null;
    out.push(keyStart, keyEnd, valueStart, valueEnd);
    if (c === COMMA) {
      i++;
      continue;
    }
    return c === RBRACE && i + 1 === end ? out : null;
  }
}

/**
 * `String.prototype.indexOf`, called on the text rather than looked up on it: the scanned texts come in
 * many string representations (each its own map), which made the `text.indexOf` lookup megamorphic, a
 * generic IC call per string in optimized code.
 */
const indexOf = String.prototype.indexOf;

/** Offset of the quote closing the string that opens at `q` (one preceded by an even number of backslashes), or -1. */
function closingQuote(text: string, q: number, end: number): number {
  for (;;) {
    q = indexOf.call(text, '"', q + 1);
    if (q < 0 || q >= end) return -1;
    let b = q - 1;
    while (text.charCodeAt(b) === BACKSLASH) b--;
    if (((q - 1 - b) & 1) === 0) return q;
  }
}
