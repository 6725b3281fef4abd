import type { ChalkInstance } from 'chalk';
import type { PartRole } from '../render/roles.js';
import { compactTimestamp } from '../history/timestamps.js';
import { isoMicros } from '../history/time.js';
import type { ClippedField } from '../render/clip.js';
import { codePointSlice, formatScore1f } from '../py/repr.js';
import type { ExcerptLine, Hit, HitFilter, SearchOutcome } from '../search/search.js';
import { queryTokensWith, tokenizerNamed, type Tokenizer } from '../text/tokenizer.js';
import { escapeForTerminal, escapeInline } from './escape.js';
import { toolText } from './tool-text.js';
import { explainLines } from './explain.js';
import { runLabel } from './run-name.js';
import { displayWidth, wrapLine } from './width.js';

export interface HumanStyle {
  readonly chalk: ChalkInstance;
  /** Columns to wrap to; null leaves lines as they are (not a terminal). */
  readonly width: number | null;
}

/** UTF-16 spans of the tokens of `text` that are query terms (the tokenizer's view of the whole text). */
function termSpans(text: string, terms: ReadonlySet<string>, tok: Tokenizer): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  if (terms.size === 0) return spans;
  tok.forEachSpan(text, (t, s, e) => {
    if (!terms.has(t)) return;
    // overlapping bigrams of one run paint as one span
    const last = spans[spans.length - 1];
    if (last && s < last[1]) last[1] = Math.max(last[1], e);
    else spans.push([s, e]);
  });
  return spans;
}

/** `text[from, to)` escaped, with the parts inside `spans` highlighted. */
function paint(text: string, from: number, to: number, spans: ReadonlyArray<[number, number]>, c: ChalkInstance): string {
  let out = '';
  let at = from;
  for (const [s0, e0] of spans) {
    const s = Math.max(s0, from);
    const e = Math.min(e0, to);
    if (e <= s) continue;
    out += escapeForTerminal(text.slice(at, s)) + c.bold.red(escapeForTerminal(text.slice(s, e)));
    at = e;
  }
  return out + escapeForTerminal(text.slice(at, to));
}

/**
 * Escapes store text and highlights every token that is a query term, as the tokenizer sees it
 * (whole tokens, case-insensitive).
 */
export function highlight(text: string, terms: ReadonlySet<string>, c: ChalkInstance, tok = tokenizerNamed(undefined)): string {
  if (c.level === 0) return escapeForTerminal(text);
  return paint(text, 0, text.length, termSpans(text, terms, tok), c);
}

/**
 * One clipped field: highlighting is decided on the whole field (a token cut by the window edge is
 * still the token it was), and the clipped sides show `…`.
 */
export function clippedField(f: ClippedField, terms: ReadonlySet<string>, c: ChalkInstance, tok = tokenizerNamed(undefined)): string {
  const full = f.label + f.text;
  const spans = c.level === 0 ? [] : termSpans(full, terms, tok);
  const from = f.label.length + codePointSlice(f.text, 0, f.start).length;
  const to = from + f.body.length;
  return (
    paint(full, 0, f.label.length, spans, c) +
    (f.cutStart ? c.dim('…') : '') +
    paint(full, from, to, spans, c) +
    (f.cutEnd ? c.dim('…') : '')
  );
}

/** `assistant, tool-call refund_payment`: the distinct roles (with tool names) of a hit's parts. */
export function partsLabel(parts: readonly PartRole[]): string {
  const seen = new Set<string>();
  for (const p of parts) seen.add(p.toolName !== null ? `${p.role} ${escapeInline(p.toolName)}` : p.role);
  return [...seen].join(', ') || 'no text';
}

/** Joins segments with ` · `, starting a new row (indented) where the next one would pass `width`. */
function joinSegments(segments: readonly string[], sep: string, width: number | null, indent: string): string {
  if (width === null) return segments.join(sep);
  const rows: string[] = [];
  let row = '';
  let w = 0;
  const widthOf = displayWidth;
  const sepW = widthOf(sep);
  for (const s of segments) {
    const sw = widthOf(s);
    if (row !== '' && w + sepW + sw > width) {
      rows.push(row);
      row = indent + s;
      w = widthOf(indent) + sw;
    } else {
      row = row === '' ? s : row + sep + s;
      w += (w === 0 ? 0 : sepW) + sw;
    }
  }
  rows.push(row);
  return rows.map((r) => wrapLine(r, width, indent).join('\n')).join('\n');
}

function hitHeader(h: Hit, style: HumanStyle): string {
  const c = style.chalk;
  const segments = [
    c.bold(`#${h.rank}`),
    c.yellow(`score ${formatScore1f(h.score)}`),
    c.cyan(runLabel(h.run)),
    // several stores: each hit names its own
    ...(h.run.store !== undefined ? [c.dim(`store ${escapeInline(h.run.store)}`)] : []),
    h.run.conversationId === null ? c.dim('no conversation') : c.magenta(`conversation ${escapeInline(h.run.conversationId)}`),
  ];
  const meta = h.conversation;
  if (meta) {
    // the conversation catalog's names for it (docs/backends.md)
    segments.push(c.magenta(`title ${escapeInline(meta.title)}`));
    if (meta.tags.length) segments.push(c.magenta(`tags ${meta.tags.map(escapeInline).join(', ')}`));
    segments.push(c.dim(`outcome ${escapeInline(meta.outcome)}`));
  }
  if (h.run.agentName !== null) segments.push(c.blue(`agent ${escapeInline(h.run.agentName)}`));
  segments.push(c.bold(`[${h.position}] ${partsLabel(h.parts)}`));
  if (h.timestamp !== null) segments.push(c.dim(escapeInline(compactTimestamp(h.timestamp))));
  const also = alsoAt(h);
  if (also !== null) segments.push(c.green(also));
  return joinSegments(segments, c.dim(' · '), style.width, '   ');
}

/** `also at run lx-1 [14], [21]; run lx-2 [3]`: where else a collapsed hit's text occurs, by run in corpus order. */
export function alsoAt(h: Hit): string | null {
  const others = (h.locations ?? []).filter((l) => l.run.runId !== h.run.runId || l.position !== h.position);
  if (others.length === 0) return null;
  const runs: Array<{ runId: string; at: number[] }> = [];
  for (const l of others) {
    const last = runs[runs.length - 1];
    if (last && last.runId === l.run.runId) last.at.push(l.position);
    else runs.push({ runId: l.run.runId, at: [l.position] });
  }
  return 'also at ' + runs.map((r) => `run ${escapeInline(r.runId)} ${r.at.map((i) => `[${i}]`).join(', ')}`).join('; ');
}

function lineBody(line: ExcerptLine, terms: ReadonlySet<string>, tok: Tokenizer, c: ChalkInstance): string {
  if (line.fields.length === 0) return c.dim('[no text content]');
  return line.fields.map((f) => clippedField(f, terms, c, tok)).join('\n');
}

function excerptLines(h: Hit, terms: ReadonlySet<string>, tok: Tokenizer, style: HumanStyle): string[] {
  const c = style.chalk;
  const out: string[] = [];
  for (const line of h.excerpt) {
    const number = `[${line.position}]`;
    const prefix = `${line.hit ? c.green('>') : ' '} ${line.hit ? c.bold(number) : c.dim(number)} `;
    const indent = ' '.repeat(number.length + 3);
    const rows = lineBody(line, terms, tok, c).split('\n');
    rows.forEach((r, k) => {
      const text = r === '' ? (k === 0 ? prefix.trimEnd() : '') : (k === 0 ? prefix : indent) + (line.hit ? r : c.dim(r));
      out.push(...(style.width === null ? [text] : wrapLine(text, style.width, indent)));
    });
  }
  return out;
}

/** The hits of a search for a terminal: a header per hit, the hit line marked, context dimmed. Empty without hits. */
export function humanHits(outcome: SearchOutcome, style: HumanStyle): string {
  if (outcome.kind !== 'found') return '';
  const tok = tokenizerNamed(outcome.options.tokenizer);
  const terms = new Set(queryTokensWith(tok, outcome.options.query));
  return outcome.hits
    .map((h) =>
      [hitHeader(h, style), ...(h.explain ? explainLines(h.explain, style.chalk) : []), ...excerptLines(h, terms, tok, style)].join('\n'),
    )
    .join('\n\n');
}

/** The filter flags of a search as typed: `--role assistant --tool delete_*`. */
export function filterFlags(filter: HitFilter | undefined): string[] {
  if (!filter) return [];
  const flags: string[] = [];
  if (filter.roles?.size) flags.push(`--role ${[...filter.roles].join(',')}`);
  if (filter.tools?.size) flags.push(`--tool ${filter.tools.patterns.join(',')}`);
  if (filter.minScore != null) flags.push(`--min-score ${filter.minScore}`);
  if (filter.agents?.size) flags.push(`--agent ${filter.agents.patterns.join(',')}`);
  if (filter.parent != null) flags.push(`--parent ${filter.parent}`);
  if (filter.since != null) flags.push(`--since ${isoMicros(filter.since)}`);
  if (filter.until != null) flags.push(`--until ${isoMicros(filter.until)}`);
  for (const p of filter.phrases ?? []) flags.push(`--phrase '${p.join(' ')}'`);
  return flags;
}

/**
 * For an outcome without hits (the notice goes to stderr): the reference's reply when nothing matched
 * the query, or what the filters removed when they removed everything.
 */
export function humanNotice(outcome: SearchOutcome): string | null {
  if (outcome.kind !== 'found') return escapeForTerminal(toolText(outcome));
  if (outcome.hits.length > 0 || outcome.matches.total > 0) return null;
  const n = outcome.matches.unfiltered;
  return escapeInline(
    `no hits: ${n} matching message${n === 1 ? '' : 's'}, ${n === 1 ? 'removed' : 'all removed'} by ${filterFlags(outcome.options.filter).join(' ')}`,
  );
}
