import Table from 'cli-table3';
import type { ChalkInstance } from 'chalk';
import type { ConversationSummary, RunSummary } from '../history/listing.js';
import { SCHEMA_VERSION } from './json.js';
import { escapeInline } from './escape.js';

export function runJson(s: RunSummary): Record<string, unknown> {
  return {
    run_id: s.run.runId,
    conversation_id: s.run.conversationId,
    parent_run_id: s.run.parentRunId,
    agent_name: s.run.agentName,
    started_at: s.run.startedAt,
    snapshots: s.snapshots,
    interrupted_snapshots: s.interruptedSnapshots,
    messages: s.messages,
  };
}

export function runsJson(runs: readonly RunSummary[]): Record<string, unknown> {
  return { schema_version: SCHEMA_VERSION, runs: runs.map(runJson) };
}

export function conversationsJson(convs: readonly ConversationSummary[]): Record<string, unknown> {
  return {
    schema_version: SCHEMA_VERSION,
    conversations: convs.map((c) => ({
      conversation_id: c.conversationId,
      runs: c.runs,
      first_started_at: c.firstStartedAt,
      last_started_at: c.lastStartedAt,
      messages: c.messages,
      agents: c.agents,
    })),
  };
}

const cell = (v: string | null, c: ChalkInstance): string => (v === null ? c.dim('-') : escapeInline(v));

function table(head: string[], c: ChalkInstance): Table.Table {
  return new Table({ head: head.map((h) => c.bold(h)), style: { head: [], border: [] } });
}

export function runsTable(runs: readonly RunSummary[], c: ChalkInstance): string {
  const t = table(['run', 'conversation', 'agent', 'parent', 'started', 'snapshots', 'messages'], c);
  for (const s of runs) {
    const snaps = s.interruptedSnapshots ? `${s.snapshots} (+${s.interruptedSnapshots} interrupted)` : String(s.snapshots);
    t.push([cell(s.run.runId, c), cell(s.run.conversationId, c), cell(s.run.agentName, c), cell(s.run.parentRunId, c), escapeInline(s.run.startedAt), snaps, String(s.messages)]);
  }
  return t.toString();
}

export function conversationsTable(convs: readonly ConversationSummary[], c: ChalkInstance): string {
  const t = table(['conversation', 'runs', 'first started', 'last started', 'messages', 'agents'], c);
  for (const v of convs) {
    t.push([
      v.conversationId === null ? c.dim('(none)') : escapeInline(v.conversationId),
      String(v.runs),
      escapeInline(v.firstStartedAt),
      escapeInline(v.lastStartedAt),
      String(v.messages),
      v.agents.map(escapeInline).join(', ') || c.dim('-'),
    ]);
  }
  return t.toString();
}
