import type { ClipRule } from '../render/message.js';

/**
 * A message's rendered parts as `messages.fields` keeps them, `[label, text, clip]` per part, written
 * and tokenized in pieces: a huge message (a 200 MB prompt) is never held again whole as its JSON
 * text or its search text, only as the parsed text it was rendered from.
 */
export type StoredField = readonly [label: string, text: string, clip: ClipRule];

/** About how many characters of JSON text a piece of `fields` holds (more only where escapes expand the text). */
export const PIECE_CHARS = 1 << 20;
/** Never cut a string into slices shorter than this (a surrogate pair's halves stay together). */
const MIN_SLICE = 64;

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/**
 * `JSON.stringify(fields)` when it is sure to be one piece of `size` (an escape is at most 6 characters,
 * a clip rule 9): made in one native call, not a string per slice (most messages); null otherwise.
 */
export function onePieceJson(fields: readonly StoredField[], size = PIECE_CHARS): string | null {
  let most = 2;
  for (const [label, text] of fields) most += 6 * (label.length + text.length) + 24;
  return most < size ? JSON.stringify(fields) : null;
}

/**
 * `JSON.stringify(fields)` in pieces of about `size` characters, in order; joined they are that text
 * exactly. A string is escaped slice by slice, never cutting between the halves of a surrogate pair
 * (each half alone would be escaped as `\udxxx`).
 */
export function* fieldsJson(fields: readonly StoredField[], size = PIECE_CHARS): Generator<string> {
  const whole = onePieceJson(fields, size);
  if (whole !== null) {
    yield whole;
    return;
  }
  let buf = '[';
  function* str(s: string): Generator<string> {
    buf += '"';
    for (let i = 0; i < s.length; ) {
      let j = Math.min(s.length, i + Math.max(MIN_SLICE, size - buf.length));
      if (j < s.length && isHigh(s.charCodeAt(j - 1)) && isLow(s.charCodeAt(j))) j--;
      buf += JSON.stringify(i === 0 && j === s.length ? s : s.slice(i, j)).slice(1, -1);
      i = j;
      if (buf.length >= size) {
        yield buf;
        buf = '';
      }
    }
    buf += '"';
  }
  for (let k = 0; k < fields.length; k++) {
    const [label, text, clip] = fields[k]!;
    buf += k === 0 ? '[' : ',[';
    yield* str(label);
    buf += ',';
    yield* str(text);
    buf += `,${JSON.stringify(clip)}]`;
  }
  yield `${buf}]`;
}

/** An ASCII character that is not a word character (`[\p{L}\p{N}_]`): no token runs across it. */
const breaksTokens = (ch: string): boolean => ch !== '' && ch < '\x80' && !/\w/.test(ch);

/**
 * The search text of stored fields (render/message.ts `searchText`: `label + text` per part, joined by
 * newlines) as pieces whose tokens, one piece after another, are the tokens of that text: a part's text
 * is a piece of its own (not copied behind its label) when the label ends in an ASCII non-word
 * character, as the renderer's labels do.
 */
export function searchPieces(fields: ReadonlyArray<readonly [label: string, text: string, ...unknown[]]>): string[] {
  const out: string[] = [];
  for (const [label, text] of fields) {
    if (label === '' || breaksTokens(label.charAt(label.length - 1))) out.push(label, text);
    else out.push(label + text);
  }
  return out;
}
