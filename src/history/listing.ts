import type { RunRecord } from '../store/runs.js';
import { lastSteps } from '../store/steps.js';
import { attributeSections, sectionLength } from './attribution.js';
import type { HistorySource, Warning } from './source.js';
import { parseInstant } from './timestamps.js';
import type { GlobSet } from '../text/glob.js';

export interface RunSummary {
  readonly run: RunRecord;
  readonly snapshots: number;
  readonly interruptedSnapshots: number;
  /** Length of the run's replayed full record. */
  readonly messages: number;
  /** Highest step_index among the run's snapshots of any state; null when it has none. */
  readonly lastStep: number | null;
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

/** Which runs a listing shows; every field is optional and they all must hold. */
export interface RunFilter {
  readonly conversationId?: string;
  /** The run's agent name matches one of these patterns. */
  readonly agent?: GlobSet;
  /** Microseconds since the epoch (see parseInstant); runs whose started_at does not parse are left out. */
  readonly since?: number;
  readonly until?: number;
  /** Only this run and the runs it delegated to, transitively (parent_run_id chains). */
  readonly parent?: string;
}

export type RunSort = 'started' | 'messages';
export type ConversationSort = 'started' | 'messages' | 'runs';

/** The run and every run whose parent chain leads to it (cycles in damaged stores are cut). */
export function delegateTree(runs: readonly RunRecord[], rootId: string): Set<string> {
  const children = new Map<string, string[]>();
  for (const r of runs) {
    if (r.parentRunId === null) continue;
    const c = children.get(r.parentRunId);
    if (c) c.push(r.runId);
    else children.set(r.parentRunId, [r.runId]);
  }
  const tree = new Set<string>([rootId]);
  const todo = [rootId];
  while (todo.length) {
    for (const child of children.get(todo.pop()!) ?? []) {
      if (!tree.has(child)) {
        tree.add(child);
        todo.push(child);
      }
    }
  }
  return tree;
}

/** The runs a filter keeps, in corpus order. */
export function selectRuns(runs: readonly RunRecord[], f: RunFilter): RunRecord[] {
  const tree = f.parent === undefined ? null : delegateTree(runs, f.parent);
  return runs.filter((r) => {
    if (tree && !tree.has(r.runId)) return false;
    if (f.conversationId !== undefined && r.conversationId !== f.conversationId) return false;
    if (f.agent !== undefined && f.agent.size > 0 && (r.agentName === null || !f.agent.has(r.agentName))) return false;
    if (f.since !== undefined || f.until !== undefined) {
      const t = parseInstant(r.startedAt);
      if (t === null) return false;
      if (f.since !== undefined && t < f.since) return false;
      if (f.until !== undefined && t > f.until) return false;
    }
    return true;
  });
}

/**
 * The message counts a listing shows: from a fresh replay, or read from the persistent index
 * (src/index), which holds the same numbers without replaying.
 */
export interface RecordCounts {
  /** Length of the run's replayed full record. */
  recordLength(runId: string): number;
  /**
   * Messages a search of the conversation covers: its runs' sections after cross-run attribution.
   * For runs without a conversation (no conversation search reaches them) it is their full records.
   */
  conversationMessages(conversationId: string | null, runs: readonly RunRecord[]): number;
  warnings(runIds: readonly string[]): Warning[];
}

/** Counts from replaying the runs (with the source's progress reporting). */
export function replayCounts(source: HistorySource): RecordCounts {
  return {
    recordLength: (runId) => source.replay(runId).messages.length,
    conversationMessages(conversationId, runs) {
      const replays = source.replayAll(runs.map((r) => r.runId));
      if (conversationId === null) return replays.reduce((n, r) => n + r.messages.length, 0);
      const sections = attributeSections(
        runs.map((run, i) => ({ run, record: replays[i]!.messages })),
        false,
      );
      return sections.reduce((n, s) => n + sectionLength(s), 0);
    },
    warnings: (runIds) => {
      source.replayAll(runIds);
      return source.warnings(runIds);
    },
  };
}

export function summarizeRuns(source: HistorySource, runs: readonly RunRecord[], counts: RecordCounts): RunSummary[] {
  const snapshotCounts = source.snapshots.countsByRun();
  const steps = lastSteps(source.store);
  return runs.map((run) => {
    const c = snapshotCounts.get(run.runId);
    return {
      run,
      snapshots: c?.complete ?? 0,
      interruptedSnapshots: c?.interrupted ?? 0,
      messages: counts.recordLength(run.runId),
      lastStep: steps.get(run.runId) ?? null,
    };
  });
}

/** `started`: corpus order as given. `messages`: most messages first, ties in corpus order. */
export function sortRuns(summaries: readonly RunSummary[], sort: RunSort): RunSummary[] {
  if (sort === 'started') return summaries.slice();
  return summaries
    .map((s, i) => ({ s, i }))
    .sort((a, b) => b.s.messages - a.s.messages || a.i - b.i)
    .map((x) => x.s);
}

/** `started`: by first start (as listed); `messages`, `runs`: most first, ties by first start. */
export function sortConversations(convs: readonly ConversationSummary[], sort: ConversationSort): ConversationSummary[] {
  if (sort === 'started') return convs.slice();
  const key = (c: ConversationSummary): number => (sort === 'messages' ? c.messages : c.runs);
  return convs
    .map((c, i) => ({ c, i }))
    .sort((a, b) => key(b.c) - key(a.c) || a.i - b.i)
    .map((x) => x.c);
}

export function summarizeConversations(source: HistorySource, counts: RecordCounts): ConversationSummary[] {
  const groups = new Map<string | null, RunRecord[]>();
  for (const run of source.runs()) {
    const g = groups.get(run.conversationId);
    if (g) g.push(run);
    else groups.set(run.conversationId, [run]);
  }
  const out: ConversationSummary[] = [];
  for (const [conversationId, group] of groups) {
    out.push({
      conversationId,
      runs: group.length,
      firstStartedAt: group[0]!.startedAt,
      lastStartedAt: group[group.length - 1]!.startedAt,
      messages: counts.conversationMessages(conversationId, group),
      agents: [...new Set(group.map((r) => r.agentName).filter((a): a is string => a !== null))],
    });
  }
  return out;
}
