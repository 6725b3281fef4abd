import type { ChalkInstance } from 'chalk';
import type { InterruptedLeftover, ShownMessage, ShowView } from '../api/show.js';
import { compactTimestamp } from '../history/timestamps.js';
import { escapeForTerminal, escapeInline } from './escape.js';
import { partsLabel } from './human.js';
import { ndjsonEvent, SCHEMA_VERSION, warningJson } from './json.js';
import { runJson } from './listing-json.js';
import { parentLabel, runLabel } from './run-name.js';
import { wrapLine } from './width.js';

export interface ShowStyle {
  readonly chalk: ChalkInstance;
  readonly width: number | null;
}

type Json = Record<string, unknown>;

function messageJson(m: ShownMessage): Json {
  return {
    kind: m.kind,
    roles: [...new Set(m.parts.map((p) => p.role))],
    timestamp: m.timestamp,
    text: m.text,
    parts: m.parts.map((p) => ({ role: p.role, tool_name: p.toolName, text: p.text })),
  };
}

function recordMessageJson(m: ShownMessage): Json {
  return { index: m.position, ...messageJson(m), first_seq: m.firstSeq, first_step: m.firstStep };
}

function interruptedJson(x: InterruptedLeftover): Json {
  return {
    seq: x.seq,
    step: x.step,
    reason: x.reason,
    messages: x.messages.map((m) => ({ position: m.position, ...messageJson(m) })),
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
    messages: v.messages.map(recordMessageJson),
    interrupted: v.interrupted ? v.interrupted.map(interruptedJson) : null,
    warnings: v.warnings.map(warningJson),
  };
}

export function showNdjson(v: ShowView): string[] {
  return [
    ndjsonEvent('begin', { run: runJson(v.summary), window: windowJson(v) }),
    ...v.messages.map((m) => ndjsonEvent('message', recordMessageJson(m))),
    ...(v.interrupted ?? []).map((x) => ndjsonEvent('interrupted', interruptedJson(x))),
    ndjsonEvent('end', { messages: v.messages.length, warnings: v.warnings.map(warningJson) }),
  ];
}

function header(v: ShowView, c: ChalkInstance): string {
  const s = v.summary;
  const r = s.run;
  return [
    c.bold(runLabel(r)),
    r.store !== undefined ? `store ${escapeInline(r.store)}` : null,
    r.conversationId === null ? c.dim('no conversation') : `conversation ${escapeInline(r.conversationId)}`,
    r.agentName !== null ? `agent ${escapeInline(r.agentName)}` : null,
    parentLabel(r),
    `started ${escapeInline(compactTimestamp(r.startedAt))}`,
    `${s.snapshots} snapshot${s.snapshots === 1 ? '' : 's'}${s.interruptedSnapshots ? ` (+${s.interruptedSnapshots} interrupted)` : ''}`,
    `${v.length} message${v.length === 1 ? '' : 's'}`,
    s.lastStep !== null ? `last step ${s.lastStep}` : null,
  ]
    .filter((x): x is string => x !== null)
    .join(c.dim(' · '));
}

/** One message: a meta line (number, roles, time, origin) and its full text, indented. */
function messageBlock(number: string, marked: boolean | null, d: ShownMessage, origin: string, style: ShowStyle, dim: boolean): string[] {
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
  if (v.window) out.push(c.dim(`showing [${v.window.first}]..[${v.window.last}] of ${v.length} messages around [${v.window.at}]`));
  for (const m of v.messages) {
    const origin = `snapshot seq ${m.firstSeq}${m.firstStep !== null ? ` step ${m.firstStep}` : ''}`;
    out.push('', ...messageBlock(`[${m.position}]`, v.window ? m.position === v.window.at : null, m, origin, style, false));
  }
  for (const x of v.interrupted ?? []) {
    const what = `interrupted snapshot seq ${x.seq}${x.step !== null ? ` step ${x.step}` : ''}`;
    out.push('', c.yellow(`── ${what}: not part of the searchable record ──`));
    if (x.reason !== null) out.push(c.dim(`   unreadable: ${escapeInline(x.reason)}`));
    else if (x.messages.length === 0) out.push(c.dim('   nothing beyond the record'));
    for (const m of x.messages) {
      out.push('', ...messageBlock(`(${m.position})`, null, m, 'position in that snapshot', style, true));
    }
  }
  return out.join('\n');
}
