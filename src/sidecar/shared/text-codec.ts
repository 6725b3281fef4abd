import { IndexDamagedError } from '../errors.js';

/**
 * Text as a Postgres `TEXT` column holds it. Postgres refuses NUL (U+0000) in text and stores a lone
 * surrogate as U+FFFD, while a store's ids and messages may hold either: both are written escaped, so
 * that every string reads back exactly as it was written (the rows' checksums are of the exact text).
 * The escape is a private-use character, itself escaped where it occurs:
 *   U+0000 → ESC '0'    ESC → ESC '1'    a lone surrogate → ESC '2' and its code unit in 4 hex digits
 * Text with none of these (nearly all) is left as it is, and equal text stays equal (lookups by id work).
 */
const ESC = '\uE000';
/** Whatever may need escaping: NUL, the escape, any surrogate (a pair is copied as it is). */
const SPECIAL = /[\0\uE000\uD800-\uDFFF]/;

export function encodeText(s: string): string {
  if (!SPECIAL.test(s)) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) out += `${ESC}0`;
    else if (c === 0xe000) out += `${ESC}1`;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) out += s[i]! + s[++i]!;
    else if (c >= 0xd800 && c <= 0xdfff) out += `${ESC}2${c.toString(16).padStart(4, '0')}`;
    else out += s[i]!;
  }
  return out;
}

export function decodeText(s: string): string {
  if (!s.includes(ESC)) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== ESC) {
      out += s[i]!;
      continue;
    }
    const kind = s[++i];
    if (kind === '0') out += '\0';
    else if (kind === '1') out += ESC;
    else if (kind === '2' && /^[0-9a-f]{4}$/.test(s.slice(i + 1, i + 5))) {
      out += String.fromCharCode(Number.parseInt(s.slice(i + 1, i + 5), 16));
      i += 4;
    } else throw new IndexDamagedError('a text in the index holds a malformed escape');
  }
  return out;
}
