import type { ChalkInstance } from 'chalk';
import type { ShowView } from '../api/show.js';
import type { InterruptedExtra } from '../history/interrupted.js';
import type { RecordMessage } from '../history/replay.js';
import { compactTimestamp } from '../history/timestamps.js';
import { renderRecordMessage, type RenderedMessage } from '../render/record.js';
import { escapeForTerminal, escapeInline } from './escape.js';
import { partsLabel } from './human.js';
import { ndjsonEvent, SCHEMA_VERSION, warningJson } from './json.js';
import { runJson } from './listing-json.js';
import { wrapLine } from './width.js';

export interface ShowStyle {
  readonly chalk: ChalkInstance;
  readonly width: number | null;
}

type Json = Record<string, unknown>;

function messageJson(m: RecordMessage, d: RenderedMessage): Json {
  return {
    kind: m.message.kind,
    roles: [...new Set(d.parts.map((p) => p.role))],
    timestamp: d.timestamp,
    text: d.text,
    parts: d.parts.map((p) => ({ role: p.role, tool_name: p.toolName, text: p.text })),
  };
}

function shownPositions(v: ShowView): number[] {
  const first = v.window ? v.window.first : 0;
  const last = v.window ? v.window.last : v.record.length - 1;
  const out: number[] = [];
  for (let i = first; i <= last; i++) out.push(i);
  return out;
}

function recordMessageJson(v: ShowView, i: number): Json {
  const m = v.record[i]!;
  return { index: i, ...messageJson(m, renderRecordMessage(m)), first_seq: m.firstSeq, first_step: m.firstStep };
}

function interruptedJson(x: InterruptedExtra): Json {
  return {
    seq: x.seq,
    step: x.step,
    reason: x.reason,
    messages: x.messages.map(({ position, message }) => ({ position, ...messageJson(message, renderRecordMessage(message)) })),
  };
}

function windowJson(v: ShowView): Json | null {
  return v.window ? { at: v.window.at, context: v.window.context, first: v.window.first, last: v.window.last } : null;
}

export function showJson(v: ShowView): Json {
  return {
    schema_version: SCHEMA_VERSION,
    run: runJson(v.summary),
    window: windowJson(v),
    messages: shownPositions(v).map((i) => recordMessageJson(v, i)),
    interrupted: v.interrupted ? v.interrupted.map(interruptedJson) : null,
    warnings: v.warnings.map(warningJson),
  };
}

export function showNdjson(v: ShowView): string[] {
  const positions = shownPositions(v);
  return [
    ndjsonEvent('begin', { run: runJson(v.summary), window: windowJson(v) }),
    ...positions.map((i) => ndjsonEvent('message', recordMessageJson(v, i))),
    ...(v.interrupted ?? []).map((x) => ndjsonEvent('interrupted', interruptedJson(x))),
    ndjsonEvent('end', { messages: positions.length, warnings: v.warnings.map(warningJson) }),
  ];
}

function header(v: ShowView, c: ChalkInstance): string {
  const s = v.summary;
  const r = s.run;
  return [
    c.bold(`run ${escapeInline(r.runId)}`),
    r.store !== undefined ? `store ${escapeInline(r.store)}` : null,
    r.conversationId === null ? c.dim('no conversation') : `conversation ${escapeInline(r.conversationId)}`,
    r.agentName !== null ? `agent ${escapeInline(r.agentName)}` : null,
    r.parentRunId !== null ? `parent ${escapeInline(r.parentRunId)}` : null,
    `started ${escapeInline(compactTimestamp(r.startedAt))}`,
    `${s.snapshots} snapshot${s.snapshots === 1 ? '' : 's'}${s.interruptedSnapshots ? ` (+${s.interruptedSnapshots} interrupted)` : ''}`,
    `${v.record.length} message${v.record.length === 1 ? '' : 's'}`,
    s.lastStep !== null ? `last step ${s.lastStep}` : null,
  ]
    .filter((x): x is string => x !== null)
    .join(c.dim(' · '));
}

/** One message: a meta line (number, roles, time, origin) and its full text, indented. */
function messageBlock(
  number: string,
  marked: boolean | null,
  d: RenderedMessage,
  origin: string,
  style: ShowStyle,
  dim: boolean,
): string[] {
  const c = style.chalk;
  const meta = [partsLabel(d.parts), d.timestamp !== null ? escapeInline(compactTimestamp(d.timestamp)) : null, origin]
    .filter((x): x is string => x !== null)
    .join(' · ');
  const marker = marked === null ? '' : marked ? c.green('> ') : '  ';
  const indent = ' '.repeat((marked === null ? 0 : 2) + 4);
  const body = d.text === '' ? [c.dim('[no text content]')] : escapeForTerminal(d.text).split('\n');
  const lines = [`${marker}${c.bold(number)} ${c.dim(meta)}`, ...body.map((l) => (l === '' ? '' : indent + (dim ? c.dim(l) : l)))];
  return style.width === null ? lines : lines.flatMap((l) => wrapLine(l, style.width!, indent));
}

export function showText(v: ShowView, style: ShowStyle): string {
  const c = style.chalk;
  const out = [header(v, c)];
  if (v.window) out.push(c.dim(`showing [${v.window.first}]..[${v.window.last}] of ${v.record.length} messages around [${v.window.at}]`));
  for (const i of shownPositions(v)) {
    const m = v.record[i]!;
    const origin = `snapshot seq ${m.firstSeq}${m.firstStep !== null ? ` step ${m.firstStep}` : ''}`;
    out.push('', ...messageBlock(`[${i}]`, v.window ? i === v.window.at : null, renderRecordMessage(m), origin, style, false));
  }
  for (const x of v.interrupted ?? []) {
    const what = `interrupted snapshot seq ${x.seq}${x.step !== null ? ` step ${x.step}` : ''}`;
    out.push('', c.yellow(`── ${what}: not part of the searchable record ──`));
    if (x.reason !== null) out.push(c.dim(`   unreadable: ${escapeInline(x.reason)}`));
    else if (x.messages.length === 0) out.push(c.dim('   nothing beyond the record'));
    for (const { position, message } of x.messages) {
      out.push('', ...messageBlock(`(${position})`, null, renderRecordMessage(message), 'position in that snapshot', style, true));
    }
  }
  return out.join('\n');
}
