import { DEFAULTS } from './defaults.js';
import { replayCounts, type RecordCounts } from '../history/counts.js';
import type { HistorySource, Warning } from '../history/source.js';
import { delegateTree } from '../history/delegates.js';
import { parseInstant } from '../history/timestamps.js';
import { isoMicros, parseTimeBound } from '../history/time.js';
import { withIndex, type IndexChoice } from '../sidecar/with-index.js';
import type { ConversationMeta } from '../store/conversation-meta.js';
import type { StoreRun } from '../store/reader.js';
import type { GlobSet } from '../text/glob.js';
import type { WorkHooks } from './search.js';

export { delegateTree, isoMicros, parseInstant, parseTimeBound };

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
  /** Title, tags and outcome from the store's conversation catalog; null when it has none for this conversation. */
  readonly metadata: ConversationMeta | null;
  /** The store's label, when several stores are listed (a conversation id two stores share is two rows). */
  readonly store?: string;
}

/** Which runs a listing shows; every field is optional and they all must hold. */
export interface RunFilter {
  readonly conversationId?: string;
  /** The run's agent name matches one of these patterns. */
  readonly agents?: GlobSet;
  /** Microseconds since the epoch (see parseInstant); runs whose started_at does not parse are left out. */
  readonly since?: number;
  readonly until?: number;
  /** Only this run and the runs it delegated to, transitively (parent_run_id chains). */
  readonly parent?: string;
}

export type RunSort = 'started' | 'messages';
export type ConversationSort = 'started' | 'messages' | 'runs';

/** The runs a filter keeps, in corpus order. */
export function selectRuns(runs: readonly StoreRun[], f: RunFilter): StoreRun[] {
  const tree = f.parent === undefined ? null : delegateTree(runs, f.parent);
  return runs.filter((r) => {
    if (tree && !tree.has(r.runId)) return false;
    if (f.conversationId !== undefined && r.conversationId !== f.conversationId) return false;
    if (f.agents !== undefined && f.agents.size > 0 && (r.agentName === null || !f.agents.has(r.agentName))) return false;
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
  const known = counts.snapshotStats?.() ?? null;
  // without the index's: the store counts every run's snapshots at once
  const stored = known === null ? { counts: source.store.countsByRun(), steps: source.store.lastSteps() } : null;
  return runs.map((run) => {
    const s = known?.get(run.runId);
    const c = s ?? stored?.counts.get(run.runId);
    return {
      run,
      snapshots: c?.complete ?? 0,
      interruptedSnapshots: c?.interrupted ?? 0,
      messages: counts.recordLength(run.runId),
      lastStep: (stored === null ? s?.lastStep : stored.steps.get(run.runId)) ?? null,
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

export function summarizeConversations(counts: RecordCounts): ConversationSummary[] {
  const groups = new Map<string | null, StoreRun[]>();
  for (const run of counts.runs()) {
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
      metadata: null,
    });
  }
  return out;
}

/** Listing counts through the sidecar index unless `index` is false; a replay otherwise (same numbers). */
export function withRecordCounts<T>(source: HistorySource, index: IndexChoice, hooks: WorkHooks, fn: (counts: RecordCounts) => T): T {
  const replay = (): T => fn(replayCounts(source));
  if (index === false) return replay();
  return withIndex(source.store, { ...index, onProgress: source.onProgress, ...hooks }, (indexed) => fn(indexed.recordCounts()), replay);
}

/** Which runs `runs` lists (every filter must hold), in which order, and how many at most. */
export interface RunQuery extends RunFilter {
  readonly sort?: RunSort;
  /** The opposite order (latest first, or fewest messages first), before `limit`. */
  readonly reverse?: boolean;
  readonly limit?: number | null;
}

/** How `conversations` orders and cuts its list. */
export interface ConversationQuery {
  readonly sort?: ConversationSort;
  readonly reverse?: boolean;
  readonly limit?: number | null;
}

export interface RunListing {
  readonly runs: RunSummary[];
  readonly warnings: Warning[];
}

export interface ConversationListing {
  readonly conversations: ConversationSummary[];
  readonly warnings: Warning[];
}

/** Sorted, maybe turned around, then cut: `limit` keeps the first n of what would be listed. */
function arrange<T>(items: T[], reverse: boolean | undefined, limit: number | null): T[] {
  const ordered = reverse ? items.slice().reverse() : items;
  return limit === null ? ordered : ordered.slice(0, limit);
}

/**
 * The runs of one store a query picks, with their counts (Session.listRuns merges the stores'); null
 * when the store holds no run of the conversation or `parent` asked for (the session tells which no
 * store holds). The runs are the counts' own: through the index, the store's runs table is not read.
 */
export function runsOfStore(source: HistorySource, query: RunQuery, index: IndexChoice, hooks: WorkHooks): RunListing | null {
  const sort = query.sort ?? DEFAULTS.runSort;
  const limit = query.limit ?? null;
  return withRecordCounts(source, index, hooks, (counts) => {
    const all = counts.runs();
    if (query.conversationId !== undefined && !all.some((r) => r.conversationId === query.conversationId)) return null;
    if (query.parent !== undefined && !all.some((r) => r.runId === query.parent)) return null;
    let runs = selectRuns(all, query);
    // corpus order needs no replay to cut: replay only what is shown
    if (sort === 'started') runs = arrange(runs, query.reverse, limit);
    let summaries = summarizeRuns(source, runs, counts);
    if (sort !== 'started') summaries = arrange(sortRuns(summaries, sort), query.reverse, limit);
    return { runs: summaries, warnings: counts.warnings(summaries.map((s) => s.run.runId)) };
  });
}

/**
 * One store's conversations (runs without one grouped under null) with their counts, ordered and cut as
 * asked (metadata: see withCatalog); `conversationOf` names the conversation of each run a warning is
 * about, from the runs listed (the session keeps the warnings of the rows it shows).
 */
export function conversationsOfStore(
  source: HistorySource,
  query: ConversationQuery,
  index: IndexChoice,
  hooks: WorkHooks,
): ConversationListing & { readonly conversationOf: ReadonlyMap<string, string | null> } {
  return withRecordCounts(source, index, hooks, (counts) => {
    const conversations = arrange(
      sortConversations(summarizeConversations(counts), query.sort ?? DEFAULTS.conversationSort),
      query.reverse,
      query.limit ?? null,
    );
    const shown = new Set(conversations.map((c) => c.conversationId));
    const runs = counts.runs().filter((r) => shown.has(r.conversationId));
    const warnings = counts.warnings(runs.map((r) => r.runId));
    const told = new Set(warnings.map((w) => w.runId));
    return {
      conversations,
      warnings,
      conversationOf: new Map(runs.filter((r) => told.has(r.runId)).map((r) => [r.runId, r.conversationId])),
    };
  });
}
