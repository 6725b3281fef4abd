import type { ChalkInstance } from 'chalk';
import type { ConversationSummary, RunSummary } from '../api/listings.js';
import { compactTimestamp } from '../history/timestamps.js';
import { escapeInline } from './escape.js';
import { runIdName, runIdNameText } from './run-name.js';
import { displayWidth, fitColumns, isPrintableAscii, truncateToWidth } from './width.js';

/** Table layout: the stream's width (null: as wide as the content, never cut) and colours. */
export interface TableStyle {
  readonly chalk: ChalkInstance;
  readonly width: number | null;
}

/**
 * What a column holds decides how it may give way: ids and timestamps are shown whole or left out
 * (they are copied into other commands), free text may be shortened with `…`, numbers align right.
 */
export type ColumnKind = 'id' | 'time' | 'number' | 'text';

export interface Column {
  readonly header: string;
  readonly kind: ColumnKind;
  /** Optional columns are left out, highest number first, when the table does not fit; absent: always shown. */
  readonly drop?: number;
}

/** One cell: single-line text, already escaped; `dim` for placeholders such as `-`; `width` when known (else measured). */
export interface Cell {
  readonly text: string;
  readonly dim?: boolean;
  readonly width?: number;
}

export interface RenderedTable {
  /**
   * The grid's lines, top border first, each without its newline: made as they are read (a table of
   * 50,000 runs is written as it is drawn, never held whole), and made again if read again.
   */
  readonly lines: Iterable<string>;
  /** Headers of the columns left out to fit the width, in table order. */
  readonly omitted: readonly string[];
}

/** Narrowest a shortened text column gets (its header still shows whole when it is narrower). */
const MIN_TEXT = 6;

/** Runs of spaces by length, each made once: a table of thousands of rows pads every cell. */
const SPACES: string[] = [''];
const spaces = (n: number): string => (n <= 0 ? '' : (SPACES[n] ??= ' '.repeat(n)));

/** Columns a grid of `n` columns spends on borders and padding: `│ a │ b │`. */
const chrome = (n: number): number => 3 * n + 1;

/**
 * Which columns show, and how wide, within `available` columns (null: all, at their natural width).
 * While the narrowest the visible columns can get does not fit, the optional column with the highest
 * `drop` goes; then free text gives up width, widest first. When only required columns are left and
 * they still do not fit, those are shortened too, as the last resort (ids then end in `…`).
 */
export function layoutColumns(
  columns: readonly Column[],
  natural: readonly number[],
  available: number | null,
): { visible: number[]; widths: number[] } {
  const all = columns.map((_, i) => i);
  if (available === null) return { visible: all, widths: natural.slice() };
  const floor = (i: number): number => {
    const c = columns[i]!;
    return c.kind === 'text' ? Math.min(natural[i]!, Math.max(MIN_TEXT, displayWidth(c.header))) : natural[i]!;
  };
  const visible = all.slice();
  const dropOrder = all.filter((i) => columns[i]!.drop !== undefined).sort((a, b) => columns[b]!.drop! - columns[a]!.drop! || b - a);
  const sum = (f: (i: number) => number): number => visible.reduce((n, i) => n + f(i), 0);
  while (sum(floor) + chrome(visible.length) > available && dropOrder.length > 0) {
    visible.splice(visible.indexOf(dropOrder.shift()!), 1);
  }
  const room = available - chrome(visible.length);
  const fits = sum(floor) <= room;
  // last resort: every visible column may shrink to one character and its `…`
  const widths = fitColumns(
    visible.map((i) => natural[i]!),
    room,
    visible.map((i) => (fits ? floor(i) : Math.min(natural[i]!, 2))),
  );
  return { visible, widths };
}

/**
 * A bordered table, one line per row whatever the width: cells are measured without escape codes and
 * styled after they are cut, so no escape sequence is ever split. Linear in the number of rows; the
 * widths are measured now, the lines drawn as they are read.
 */
export function renderTable(columns: readonly Column[], rows: readonly (readonly Cell[])[], style: TableStyle): RenderedTable {
  const c = style.chalk;
  const natural = columns.map((col) => displayWidth(col.header));
  // every cell's width, row after row (one array, not one per row)
  const stride = columns.length;
  const cellWidths = new Int32Array(rows.length * stride);
  for (let ri = 0; ri < rows.length; ri++) {
    const r = rows[ri]!;
    for (let i = 0; i < stride; i++) {
      const cell = r[i]!;
      const w = cell.width ?? displayWidth(cell.text);
      if (w > natural[i]!) natural[i] = w;
      cellWidths[ri * stride + i] = w;
    }
  }
  const { visible, widths } = layoutColumns(columns, natural, style.width);
  const fit = (text: string, w: number, width: number, right: boolean): string => {
    const shown = w > width ? truncateToWidth(text, width) : text;
    const pad = spaces(width - (w > width ? displayWidth(shown) : w));
    return right ? pad + shown : shown + pad;
  };
  const line = (cells: string[]): string => `│ ${cells.join(' │ ')} │`;
  const rule = (l: string, m: string, r: string): string => l + widths.map((w) => '─'.repeat(w + 2)).join(m) + r;
  const header = line(
    visible.map((i, k) => {
      const h = columns[i]!.header;
      const hw = displayWidth(h);
      const shown = hw > widths[k]! ? truncateToWidth(h, widths[k]!) : h;
      return c.bold(shown) + spaces(widths[k]! - displayWidth(shown));
    }),
  );
  const right = visible.map((i) => columns[i]!.kind === 'number');
  const dims = c.level > 0; // without colour a dimmed cell is the cell
  function* draw(): Generator<string> {
    yield rule('┌', '┬', '┐');
    yield header;
    yield rule('├', '┼', '┤');
    for (let ri = 0; ri < rows.length; ri++) {
      const r = rows[ri]!;
      let row = '│ ';
      for (let k = 0; k < visible.length; k++) {
        const cell = r[visible[k]!]!;
        const text = fit(cell.text, cellWidths[ri * stride + visible[k]!]!, widths[k]!, right[k]!);
        row += (k === 0 ? '' : ' │ ') + (cell.dim && dims ? dimText(text, c) : text);
      }
      yield `${row} │`;
    }
    yield rule('└', '┴', '┘');
  }
  return {
    lines: { [Symbol.iterator]: draw },
    omitted: columns.filter((_, i) => !visible.includes(i)).map((col) => col.header),
  };
}

/** Dims the text of a padded cell, not its padding. */
function dimText(padded: string, c: ChalkInstance): string {
  const m = /^( *)(.*?)( *)$/.exec(padded)!;
  return m[1]! + c.dim(m[2]!) + m[3]!;
}

// printable ASCII (most ids, names and times) is its own escape, one column per character
const text = (v: string): Cell => (isPrintableAscii(v) ? { text: v, width: v.length } : { text: escapeInline(v) });
const count = (n: number): Cell => {
  const t = String(n);
  return { text: t, width: t.length };
};
/** The placeholder of an empty cell. */
const dash: Cell = { text: '-', dim: true };
const orDash = (v: string | null): Cell => (v === null ? dash : text(v));

const RUN_COLUMNS: readonly Column[] = [
  { header: 'run', kind: 'id' },
  { header: 'conversation', kind: 'id', drop: 4 },
  { header: 'agent', kind: 'text', drop: 6 },
  { header: 'parent', kind: 'id', drop: 7 },
  { header: 'started', kind: 'time', drop: 2 },
  { header: 'snapshots', kind: 'text', drop: 5 },
  { header: 'messages', kind: 'number', drop: 3 },
  { header: 'last step', kind: 'number', drop: 8 },
];

/** Shown only when some run's id is a derived one (docs/backends.md): what it says, agent and inner id. */
const DECODED_COLUMN: Column = { header: 'decoded run id', kind: 'text', drop: 6.5 };

export function runsTable(runs: readonly RunSummary[], style: TableStyle): RenderedTable {
  const names = runs.map((s) => runIdName(s.run));
  const decoded = names.some((n) => n !== null);
  const rows = runs.map((s, i): Cell[] => [
    text(s.run.runId),
    ...(decoded ? [names[i] ? { text: runIdNameText(names[i]) } : dash] : []),
    orDash(s.run.conversationId),
    orDash(s.run.agentName),
    orDash(s.run.parentRunId),
    text(compactTimestamp(s.run.startedAt)),
    s.interruptedSnapshots ? { text: `${s.snapshots} (+${s.interruptedSnapshots} interrupted)` } : count(s.snapshots),
    count(s.messages),
    s.lastStep === null ? { text: '-', dim: true } : count(s.lastStep),
  ]);
  return renderWithStores(
    decoded ? [RUN_COLUMNS[0]!, DECODED_COLUMN, ...RUN_COLUMNS.slice(1)] : RUN_COLUMNS,
    rows,
    runs.map((s) => s.run.store),
    style,
  );
}

/** Several stores (some row has one): a first column names each row's store; otherwise the table as it is. */
function renderWithStores(
  columns: readonly Column[],
  rows: Cell[][],
  stores: ReadonlyArray<string | undefined>,
  style: TableStyle,
): RenderedTable {
  if (stores.every((s) => s === undefined)) return renderTable(columns, rows, style);
  return renderTable(
    [{ header: 'store', kind: 'id', drop: 1 }, ...columns],
    rows.map((r, i) => [text(stores[i] ?? ''), ...r]),
    style,
  );
}

const CONVERSATION_COLUMNS: readonly Column[] = [
  { header: 'conversation', kind: 'id' },
  { header: 'runs', kind: 'number', drop: 3 },
  { header: 'first started', kind: 'time', drop: 5 },
  { header: 'last started', kind: 'time', drop: 4 },
  { header: 'messages', kind: 'number', drop: 2 },
  { header: 'agents', kind: 'text', drop: 6 },
];

/** Shown only when some conversation has catalog metadata (docs/backends.md): the names people gave it. */
const CATALOG_COLUMNS: readonly Column[] = [
  { header: 'title', kind: 'text', drop: 1.5 },
  { header: 'outcome', kind: 'text', drop: 5.5 },
  { header: 'tags', kind: 'text', drop: 7 },
];

function catalogCells(v: ConversationSummary): Cell[] {
  const m = v.metadata;
  if (m === null) return [dash, dash, dash];
  return [text(m.title), text(m.outcome), m.tags.length ? text(m.tags.join(', ')) : dash];
}

export function conversationsTable(convs: readonly ConversationSummary[], style: TableStyle): RenderedTable {
  const catalog = convs.some((v) => v.metadata !== null);
  const rows = convs.map((v): Cell[] => [
    v.conversationId === null ? { text: '(none)', dim: true } : text(v.conversationId),
    ...(catalog ? catalogCells(v) : []),
    count(v.runs),
    text(compactTimestamp(v.firstStartedAt)),
    text(compactTimestamp(v.lastStartedAt)),
    count(v.messages),
    v.agents.length ? text(v.agents.join(', ')) : { text: '-', dim: true },
  ]);
  return renderWithStores(
    catalog ? [CONVERSATION_COLUMNS[0]!, ...CATALOG_COLUMNS, ...CONVERSATION_COLUMNS.slice(1)] : CONVERSATION_COLUMNS,
    rows,
    convs.map((c) => c.store),
    style,
  );
}

/** The note for columns a table left out: what they were and how to see them. */
export function omittedNote(omitted: readonly string[], width: number): string | null {
  if (omitted.length === 0) return null;
  return `left out to fit ${width} columns: ${omitted.join(', ')} (--wide or --json shows them)`;
}
