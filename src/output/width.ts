/**
 * Terminal columns: how wide text shows (SGR colour codes take none, East Asian wide characters and
 * emoji take two, combining marks none) and wrapping to a width with a hanging indent.
 * Input is already escaped (no raw controls besides SGR codes we added, tab and newline).
 */

const SGR = /\x1b\[[0-9;]*m/y;
let zeroWidth: RegExp | undefined; // made on first use (a `\p{…}` class: see text/tokenize.ts tokenPattern)

function isWide(cp: number): boolean {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf && cp !== 0x303f) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  );
}

/** Columns one code point takes (tab excluded: it depends on the column). */
export function charWidth(ch: string): number {
  const cp = ch.codePointAt(0)!;
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (cp < 0x300) return 1;
  if ((zeroWidth ??= /^[\p{Mn}\p{Me}\p{Cf}]$/u).test(ch)) return 0;
  if (isWide(cp)) return 2;
  return 1;
}

interface Cell {
  readonly s: string;
  /** -1 for a tab (width depends on the column). */
  readonly w: number;
  readonly space: boolean;
}

function cells(line: string): Cell[] {
  const out: Cell[] = [];
  let i = 0;
  while (i < line.length) {
    if (line.charCodeAt(i) === 0x1b) {
      SGR.lastIndex = i;
      const m = SGR.exec(line);
      if (m) {
        out.push({ s: m[0], w: 0, space: false });
        i += m[0].length;
        continue;
      }
    }
    const cp = line.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    i += ch.length;
    if (ch === '\t') out.push({ s: ch, w: -1, space: true });
    else out.push({ s: ch, w: charWidth(ch), space: ch === ' ' });
  }
  return out;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Printable ASCII only: one column per character, and nothing a terminal would act on. */
export const isPrintableAscii = (text: string): boolean => PRINTABLE_ASCII.test(text);

/** Columns a single-line string takes, ignoring SGR codes. */
export function displayWidth(text: string): number {
  if (PRINTABLE_ASCII.test(text)) return text.length; // the common case, without a cell per character
  let col = 0;
  for (const c of cells(text)) col += c.w === -1 ? 8 - (col % 8) : c.w;
  return col;
}

/**
 * Wraps one line (no newline inside) to `width` columns: breaks after a space when the row has one,
 * else inside a word; continuation rows start with `indent`. Style codes stay where they were, so a
 * style open across a break simply continues on the next row.
 */
export function wrapLine(line: string, width: number, indent = ''): string[] {
  const indentWidth = displayWidth(indent);
  if (width - indentWidth < 10) return [line];
  const rows: string[] = [];
  const queue = cells(line);
  let row: Cell[] = [];
  let col = 0;
  const widthOf = (c: Cell, at: number): number => (c.w === -1 ? 8 - (at % 8) : c.w);
  const flush = (): void => {
    rows.push((rows.length ? indent : '') + row.map((c) => c.s).join(''));
    row = [];
    col = indentWidth;
  };
  for (let i = 0; i < queue.length; i++) {
    const c = queue[i]!;
    const w = widthOf(c, col);
    if (w === 0 || col + w <= width) {
      row.push(c);
      col += w;
      continue;
    }
    if (c.space) {
      flush(); // the space at the break is dropped
      continue;
    }
    let cut = -1;
    for (let k = row.length - 1; k > 0; k--) {
      if (row[k]!.space) {
        cut = k;
        break;
      }
    }
    if (cut > 0) {
      // move the word after the last space to the next row, then retry this cell
      const rest = row.slice(cut + 1);
      row = row.slice(0, cut);
      flush();
      queue.splice(i, 0, ...rest);
      i--;
      continue;
    }
    if (row.length === 0) {
      // a cell wider than the whole row: place it anyway
      row.push(c);
      col += w;
      continue;
    }
    flush();
    i--;
  }
  if (row.length || rows.length === 0) flush();
  return rows;
}

/**
 * Plain single-line text (no SGR codes, no tab) cut to at most `width` columns, ending in `…` when cut;
 * a wide character that would straddle the edge goes whole.
 */
export function truncateToWidth(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  // one column a character: no need to measure each (a table of thousands of runs truncates most cells)
  if (PRINTABLE_ASCII.test(text)) return `${text.slice(0, width - 1)}…`;
  let out = '';
  let col = 0;
  for (const ch of text) {
    const w = charWidth(ch);
    if (col + w > width - 1) break;
    out += ch;
    col += w;
  }
  return out + '…';
}

/** Wraps multi-line text row by row (see wrapLine); null width leaves it as is. */
export function wrapText(text: string, width: number | null, indent = ''): string {
  if (width === null) return text;
  return text
    .split('\n')
    .map((l) => wrapLine(l, width, indent).join('\n'))
    .join('\n');
}

/** The width to lay out for, or null (no wrapping) when the stream is not a terminal. */
export function terminalWidth(stream: { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv = process.env): number | null {
  if (!stream.isTTY) return null;
  if (stream.columns && stream.columns > 0) return stream.columns;
  const n = Number(env.COLUMNS);
  return Number.isInteger(n) && n > 0 ? n : 80;
}

/**
 * Column widths that fit `available` columns: the widest columns give up space first, none below its
 * minimum. Returns the natural widths when they already fit.
 */
export function fitColumns(natural: readonly number[], available: number, minimum: readonly number[]): number[] {
  const widths = natural.slice();
  let total = widths.reduce((a, b) => a + b, 0);
  while (total > available) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++) {
      if (widths[i]! > minimum[i]! && (widest === -1 || widths[i]! > widths[widest]!)) widest = i;
    }
    if (widest === -1) break;
    widths[widest]!--;
    total--;
  }
  return widths;
}
