import Table from 'cli-table3';
import type { ChalkInstance } from 'chalk';
import type { ConversationSummary, RunSummary } from '../api/listings.js';
import { compactTimestamp } from '../history/timestamps.js';
import { escapeInline } from './escape.js';
import { displayWidth, fitColumns } from './width.js';

/** Table layout: the stream's width (null: as wide as the content) and colours. */
export interface TableStyle {
  readonly chalk: ChalkInstance;
  readonly width: number | null;
}

/** Narrowest a column gets (padding included); headers wrap too before the grid would. */
const MIN_COLUMN = 6;

/**
 * A bordered table (cli-table3, compact rows) that fits the terminal: the widest columns shrink first
 * and their cells wrap inside the column, so the grid itself never breaks.
 */
function render(head: readonly string[], rows: readonly string[][], style: TableStyle): string {
  const c = style.chalk;
  const natural = head.map((h, i) => Math.max(displayWidth(h), ...rows.map((r) => displayWidth(r[i]!))) + 2);
  let colWidths: number[] | undefined;
  const borders = head.length + 1;
  if (style.width !== null && natural.reduce((a, b) => a + b, 0) + borders > style.width) {
    const minimum = natural.map((n) => Math.min(n, MIN_COLUMN));
    colWidths = fitColumns(natural, style.width - borders, minimum);
  }
  const t = new Table({
    head: head.map((h) => c.bold(h)),
    style: { head: [], border: [], compact: true },
    ...(colWidths ? { colWidths, wordWrap: true, wrapOnWordBoundary: false } : {}),
  });
  for (const r of rows) t.push(r);
  return t.toString();
}

const cell = (v: string | null, c: ChalkInstance): string => (v === null ? c.dim('-') : escapeInline(v));

export function runsTable(runs: readonly RunSummary[], style: TableStyle): string {
  const c = style.chalk;
  const rows = runs.map((s) => [
    cell(s.run.runId, c),
    cell(s.run.conversationId, c),
    cell(s.run.agentName, c),
    cell(s.run.parentRunId, c),
    escapeInline(compactTimestamp(s.run.startedAt)),
    s.interruptedSnapshots ? `${s.snapshots} (+${s.interruptedSnapshots} interrupted)` : String(s.snapshots),
    String(s.messages),
    s.lastStep === null ? c.dim('-') : String(s.lastStep),
  ]);
  return render(['run', 'conversation', 'agent', 'parent', 'started', 'snapshots', 'messages', 'last step'], rows, style);
}

export function conversationsTable(convs: readonly ConversationSummary[], style: TableStyle): string {
  const c = style.chalk;
  const rows = convs.map((v) => [
    v.conversationId === null ? c.dim('(none)') : escapeInline(v.conversationId),
    String(v.runs),
    escapeInline(compactTimestamp(v.firstStartedAt)),
    escapeInline(compactTimestamp(v.lastStartedAt)),
    String(v.messages),
    v.agents.map(escapeInline).join(', ') || c.dim('-'),
  ]);
  return render(['conversation', 'runs', 'first started', 'last started', 'messages', 'agents'], rows, style);
}
