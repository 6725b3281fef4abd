import type { RunRecord } from '../store/runs.js';
import { attributeSections, sectionLength } from './attribution.js';
import type { HistorySource } from './source.js';

export interface RunSummary {
  readonly run: RunRecord;
  readonly snapshots: number;
  readonly interruptedSnapshots: number;
  /** Length of the run's replayed full record. */
  readonly messages: number;
}

export interface ConversationSummary {
  /** null groups the runs that have no conversation id. */
  readonly conversationId: string | null;
  readonly runs: number;
  readonly firstStartedAt: string;
  readonly lastStartedAt: string;
  /** Messages a search of this conversation covers (after cross-run attribution). */
  readonly messages: number;
  readonly agents: string[];
}

export function summarizeRuns(source: HistorySource, runs: readonly RunRecord[] = source.runs()): RunSummary[] {
  const counts = source.snapshots.countsByRun();
  return runs.map((run) => {
    const c = counts.get(run.runId);
    return {
      run,
      snapshots: c?.complete ?? 0,
      interruptedSnapshots: c?.interrupted ?? 0,
      messages: source.replay(run.runId).messages.length,
    };
  });
}

export function summarizeConversations(source: HistorySource): ConversationSummary[] {
  const groups = new Map<string | null, RunRecord[]>();
  for (const run of source.runs()) {
    const g = groups.get(run.conversationId);
    if (g) g.push(run);
    else groups.set(run.conversationId, [run]);
  }
  const out: ConversationSummary[] = [];
  for (const [conversationId, runs] of groups) {
    const sections = attributeSections(
      runs.map((run) => ({ run, record: source.replay(run.runId).messages })),
      false,
    );
    out.push({
      conversationId,
      runs: runs.length,
      firstStartedAt: runs[0]!.startedAt,
      lastStartedAt: runs[runs.length - 1]!.startedAt,
      messages: sections.reduce((n, s) => n + sectionLength(s), 0),
      agents: [...new Set(runs.map((r) => r.agentName).filter((a): a is string => a !== null))],
    });
  }
  return out;
}
