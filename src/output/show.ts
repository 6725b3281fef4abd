import type { ChalkInstance } from 'chalk';
import type { RunSummary } from '../history/listing.js';
import type { RecordMessage } from '../history/replay.js';
import { renderRecordMessage } from '../search/corpus.js';
import { escapeForTerminal, escapeInline } from './escape.js';
import { SCHEMA_VERSION } from './json.js';
import { runJson } from './listing.js';

function timestampOf(m: RecordMessage): string | null {
  const t = m.message.raw.get('timestamp');
  return typeof t === 'string' ? t : null;
}

export function showJson(summary: RunSummary, record: readonly RecordMessage[]): Record<string, unknown> {
  return {
    schema_version: SCHEMA_VERSION,
    run: runJson(summary),
    messages: record.map((m, index) => ({
      index,
      kind: m.message.kind,
      text: renderRecordMessage(m).text,
      timestamp: timestampOf(m),
      first_seq: m.firstSeq,
      first_step: m.firstStep,
    })),
  };
}

export function showText(summary: RunSummary, record: readonly RecordMessage[], c: ChalkInstance): string {
  const r = summary.run;
  const head = [
    c.bold(`run ${escapeInline(r.runId)}`),
    r.conversationId === null ? c.dim('no conversation') : `conversation ${escapeInline(r.conversationId)}`,
    r.agentName ? `agent ${escapeInline(r.agentName)}` : null,
    r.parentRunId ? `parent ${escapeInline(r.parentRunId)}` : null,
    `started ${escapeInline(r.startedAt)}`,
    `${summary.snapshots} snapshots${summary.interruptedSnapshots ? ` (+${summary.interruptedSnapshots} interrupted)` : ''}`,
    `${record.length} messages`,
  ].filter((x): x is string => x !== null);
  const lines = [head.join(c.dim(' · '))];
  record.forEach((m, i) => {
    const ts = timestampOf(m);
    const meta = c.dim(`${m.message.kind}${ts ? ` ${escapeInline(ts)}` : ''} · first in snapshot seq ${m.firstSeq}${m.firstStep !== null ? ` step ${m.firstStep}` : ''}`);
    const text = renderRecordMessage(m).text;
    const number = `[${i}]`;
    const body = text === '' ? c.dim('[no text content]') : escapeForTerminal(text);
    lines.push('', `${c.bold(number)} ${meta}`, ...body.split('\n').map((l) => '    ' + l));
  });
  return lines.join('\n');
}
