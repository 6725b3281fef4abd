/**
 * Python's `int(text)` for the sequence numbers that File snapshot names and Redis index members carry:
 * surrounding whitespace, a sign, `_` between digits and any Unicode decimal digits are accepted, as
 * upstream accepts them. Null when Python would raise (or beyond 2^53, which no writer reaches).
 */
// What int() strips: C isspace() below 0x80 (so not U+001C–001F, though str.isspace() has them),
// str.isspace() above (JS `\s` differs: it has U+FEFF, lacks U+0085)
const SPACE_CLASS = '[\\t\\n\\v\\f\\r\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const PY_SPACE = new RegExp(`^${SPACE_CLASS}+|${SPACE_CLASS}+$`, 'gu');
// made on first use (a `\p{…}` class: see text/tokenize.ts tokenPattern)
let digits: { readonly shape: RegExp; readonly nd: RegExp } | undefined;
const patterns = (): NonNullable<typeof digits> => (digits ??= { shape: /^[+-]?\p{Nd}+(?:_\p{Nd}+)*$/u, nd: /\p{Nd}/u });

/** The value of a decimal digit: Unicode keeps each script's digits as runs of ten, zero first. */
function digitValue(cp: number): number {
  if (cp >= 0x30 && cp <= 0x39) return cp - 0x30;
  let zero = cp;
  const { nd } = patterns();
  while (nd.test(String.fromCodePoint(zero - 1))) zero--;
  return (cp - zero) % 10;
}

export function pyInt(text: string): number | null {
  const s = text.replace(PY_SPACE, '');
  if (!patterns().shape.test(s)) return null;
  let n = 0;
  for (const ch of s) {
    if (ch === '+' || ch === '-' || ch === '_') continue;
    n = n * 10 + digitValue(ch.codePointAt(0)!);
  }
  if (!Number.isSafeInteger(n)) return null;
  return s.startsWith('-') && n !== 0 ? -n : n;
}
