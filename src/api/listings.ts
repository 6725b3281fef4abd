import { replayCounts, type RecordCounts } from '../history/counts.js';
import type { HistorySource, Warning } from '../history/source.js';
import { parseInstant } from '../history/timestamps.js';
import { scopeMiss, type ScopeMiss } from '../search/scope.js';
import { withIndex, type IndexChoice } from '../sidecar/with-index.js';
import type { StoreRun } from '../store/reader.js';
import type { WorkHooks } from './search.js';

export { parseInstant };

export interface RunSummary {
  readonly run: StoreRun;
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
  readonly agent?: string;
  /** Microseconds since the epoch (see parseInstant); runs whose started_at does not parse are left out. */
  readonly since?: number;
  readonly until?: number;
  /** Only this run and the runs it delegated to, transitively (parent_run_id chains). */
  readonly parent?: string;
}

export type RunSort = 'started' | 'messages';

/** The run and every run whose parent chain leads to it (cycles in damaged stores are cut). */
export function delegateTree(runs: readonly StoreRun[], rootId: string): Set<string> {
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
export function selectRuns(runs: readonly StoreRun[], f: RunFilter): StoreRun[] {
  const tree = f.parent === undefined ? null : delegateTree(runs, f.parent);
  return runs.filter((r) => {
    if (tree && !tree.has(r.runId)) return false;
    if (f.conversationId !== undefined && r.conversationId !== f.conversationId) return false;
    if (f.agent !== undefined && r.agentName !== f.agent) return false;
    if (f.since !== undefined || f.until !== undefined) {
      const t = parseInstant(r.startedAt);
      if (t === null) return false;
      if (f.since !== undefined && t < f.since) return false;
      if (f.until !== undefined && t > f.until) return false;
    }
    return true;
  });
}

export function summarizeRuns(source: HistorySource, runs: readonly StoreRun[], counts: RecordCounts): RunSummary[] {
  const snapshotCounts = source.store.countsByRun();
  const steps = source.store.lastSteps();
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

export function summarizeConversations(source: HistorySource, counts: RecordCounts): ConversationSummary[] {
  const groups = new Map<string | null, StoreRun[]>();
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

/** Listing counts through the sidecar index unless `index` is false; a replay otherwise (same numbers). */
export function withRecordCounts<T>(source: HistorySource, index: IndexChoice, hooks: WorkHooks, fn: (counts: RecordCounts) => T): T {
  const replay = (): T => fn(replayCounts(source));
  if (index === false) return replay();
  return withIndex(
    source.store,
    { path: index.path, onProgress: source.onProgress, ...hooks },
    (indexed) => fn(indexed.recordCounts()),
    replay,
  );
}

/** Which runs `runs` lists (every filter must hold), in which order, and how many at most. */
export interface RunQuery extends RunFilter {
  readonly sort?: RunSort;
  readonly limit?: number | null;
}

export interface RunListing {
  readonly runs: RunSummary[];
  readonly warnings: Warning[];
  /**
   * Set when `conversationId` or `parent` names what the store does not hold (with the closest ids):
   * then nothing is listed, and a caller must treat it as an error (a typo is never an empty list).
   */
  readonly missing: ScopeMiss | null;
}

export interface ConversationListing {
  readonly conversations: ConversationSummary[];
  readonly warnings: Warning[];
}

/** The runs a query picks, with their counts. */
export function listRuns(source: HistorySource, query: RunQuery, index: IndexChoice, hooks: WorkHooks): RunListing {
  const all = source.runs();
  const missing =
    (query.conversationId !== undefined
      ? scopeMiss(all, { scope: 'conversation', conversationId: query.conversationId, runId: null })
      : null) ?? (query.parent !== undefined ? scopeMiss(all, { scope: 'all', conversationId: null, runId: query.parent }) : null);
  if (missing) return { runs: [], warnings: [], missing };
  const sort = query.sort ?? 'started';
  const limit = query.limit ?? null;
  let runs = selectRuns(source.runs(), query);
  // corpus order needs no replay to cut: replay only what is shown
  if (sort === 'started' && limit !== null) runs = runs.slice(0, limit);
  return withRecordCounts(source, index, hooks, (counts) => {
    let summaries = sortRuns(summarizeRuns(source, runs, counts), sort);
    if (limit !== null) summaries = summaries.slice(0, limit);
    return { runs: summaries, warnings: counts.warnings(summaries.map((s) => s.run.runId)), missing: null };
  });
}

/** Every conversation (runs without one grouped under null) with its counts. */
export function listConversations(source: HistorySource, index: IndexChoice, hooks: WorkHooks): ConversationListing {
  return withRecordCounts(source, index, hooks, (counts) => ({
    conversations: summarizeConversations(source, counts),
    warnings: counts.warnings(source.runs().map((r) => r.runId)),
  }));
}
