import { replayCounts } from '../history/counts.js';
import { beyondRecord, type InterruptedExtra } from '../history/interrupted.js';
import type { RecordMessage } from '../history/replay.js';
import type { HistorySource, Warning } from '../history/source.js';
import { scopeMiss, type ScopeMiss } from '../search/scope.js';
import { DEFAULTS } from './defaults.js';
import { summarizeRuns, type RunSummary } from './listings.js';

/** What `show` prints: the run, its record (or a window of it) and, on request, interrupted leftovers. */
export interface ShowView {
  readonly summary: RunSummary;
  readonly record: readonly RecordMessage[];
  /** `at` with `context` positions on each side: `first .. last` (inclusive); null shows the whole record. */
  readonly window: { readonly at: number; readonly context: number; readonly first: number; readonly last: number } | null;
  /** Present with `includeInterrupted`. */
  readonly interrupted: readonly InterruptedExtra[] | null;
  readonly warnings: readonly Warning[];
}

export interface ShowRequest {
  /** Show only this record position and its context. */
  readonly at?: number | null;
  /** Positions on each side of `at` (default {@link DEFAULTS}.showContext). */
  readonly context?: number;
  /** Also list what the run's interrupted snapshots held beyond the record (never searchable). */
  readonly includeInterrupted?: boolean;
}

export type ShowResult =
  | { readonly kind: 'shown'; readonly view: ShowView }
  /** The store holds no such run: `missing` names the closest ids. */
  | { readonly kind: 'no-run'; readonly missing: ScopeMiss }
  /** `at` lies past the end of the record, which holds `length` messages. */
  | { readonly kind: 'past-end'; readonly length: number };

/** A run's replayed full record, numbered as search excerpts number it. */
export function showRun(source: HistorySource, runId: string, request: ShowRequest = {}): ShowResult {
  const run = source.runs().find((r) => r.runId === runId);
  if (!run) return { kind: 'no-run', missing: scopeMiss(source.runs(), { scope: 'all', conversationId: null, runId })! };
  const [summary] = summarizeRuns(source, [run], replayCounts(source));
  const record = source.replay(runId).messages;
  const at = request.at ?? null;
  if (at !== null && at >= record.length) return { kind: 'past-end', length: record.length };
  const context = request.context ?? DEFAULTS.showContext;
  const view: ShowView = {
    summary: summary!,
    record,
    window: at === null ? null : { at, context, first: Math.max(0, at - context), last: Math.min(record.length - 1, at + context) },
    interrupted: request.includeInterrupted ? beyondRecord(record, source.interruptedSnapshots(runId)) : null,
    warnings: source.warnings([runId]),
  };
  return { kind: 'shown', view };
}
