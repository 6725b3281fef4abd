import { isPrintableAscii } from './width.js';

/**
 * Store text is attacker-controlled: a terminal must never receive its control characters raw
 * (ESC starts CSI/OSC sequences that can retitle windows, clear screens or fake output).
 * Controls become visible escapes; newline and tab are kept because messages are multi-line.
 */
// C0 except \t and \n, DEL, C1, and the bidi overrides/isolates that can reorder what is shown.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

function visible(ch: string): string {
  const c = ch.charCodeAt(0);
  if (c === 0x0d) return '\\r';
  if (c === 0x1b) return '\\e';
  return c <= 0xff ? `\\x${c.toString(16).padStart(2, '0')}` : `\\u${c.toString(16).padStart(4, '0')}`;
}

export function escapeForTerminal(text: string): string {
  return text.replace(UNSAFE, visible);
}

/**
 * For JSON on a terminal: the same characters as `\uXXXX` escapes. Valid JSON holds them raw only
 * inside strings, where the escape means the same character, so the JSON still parses to the same values.
 */
export function escapeJsonForTerminal(json: string): string {
  return json.replace(UNSAFE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * In single-line fields, characters that show nothing or move what follows: format characters (zero
 * width space and joiners, U+FEFF, bidi marks), other default-ignorable ones (variation selectors,
 * fillers) and line/paragraph separators. `conv-\u200b\u200bzw` must not pass for `conv-zw`.
 */
let invisible: RegExp | undefined; // made on first use (a `\p{…}` class: see text/tokenize.ts tokenPattern)

function codePoint(ch: string): string {
  const c = ch.codePointAt(0)!;
  return c <= 0xffff ? `\\u${c.toString(16).padStart(4, '0')}` : `\\u{${c.toString(16)}}`;
}

/** For single-line fields (ids, headers): newlines and tabs are escaped too, and invisible characters. */
export function escapeInline(text: string): string {
  if (isPrintableAscii(text)) return text; // nothing to escape: most ids, names and times
  return escapeForTerminal(text)
    .replace(/\n/g, '\\n')
    .replace(/\t/g, '\\t')
    .replace((invisible ??= /[\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029]/gu), codePoint);
}
