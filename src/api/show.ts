import { replayCounts } from '../history/counts.js';
import { beyondRecord } from '../history/interrupted.js';
import type { RecordMessage } from '../history/replay.js';
import type { HistorySource, Warning } from '../history/source.js';
import type { RenderedPart } from '../render/message.js';
import { renderRecordMessage } from '../render/record.js';
import { scopeMiss } from '../search/scope.js';
import { NotFoundError, PastEndError } from './errors.js';
import { DEFAULTS } from './defaults.js';
import { summarizeRuns, type RunSummary } from './listings.js';

/** A message as `show` presents it: plain data, rendered as search renders it. */
export interface ShownMessage {
  /** Its position in the record (for an interrupted leftover: in that snapshot). */
  readonly position: number;
  readonly kind: 'request' | 'response';
  /** The rendered parts: role, tool name, label, text (and how search excerpts clip it). */
  readonly parts: readonly RenderedPart[];
  /** What BM25 tokenizes: the parts' lines. */
  readonly text: string;
  /** The message's stored timestamp, raw (null when it has none). */
  readonly timestamp: string | null;
  /** The snapshot (seq, step_index) that first carried the message. */
  readonly firstSeq: number;
  readonly firstStep: number | null;
}

/** What one interrupted snapshot held beyond the record (never searchable). */
export interface InterruptedLeftover {
  readonly seq: number;
  readonly step: number | null;
  /** Why the snapshot could not be read (then `messages` is empty). */
  readonly reason: string | null;
  readonly messages: readonly ShownMessage[];
}

/** What `show` prints: the run, its record (or a window of it) and, on request, interrupted leftovers. Plain data. */
export interface ShowView {
  readonly summary: RunSummary;
  /** Messages in the record. */
  readonly length: number;
  /** The record's messages shown: the window's, or all of them. */
  readonly messages: readonly ShownMessage[];
  /** `at` with `context` positions on each side: `first .. last` (inclusive); null shows the whole record. */
  readonly window: { readonly at: number; readonly context: number; readonly first: number; readonly last: number } | null;
  /** Present with `includeInterrupted`. */
  readonly interrupted: readonly InterruptedLeftover[] | null;
  readonly warnings: readonly Warning[];
}

function shown(m: RecordMessage, position: number): ShownMessage {
  const d = renderRecordMessage(m);
  return {
    position,
    kind: m.message.kind,
    parts: d.parts,
    text: d.text,
    timestamp: d.timestamp,
    firstSeq: d.firstSeq,
    firstStep: d.firstStep,
  };
}

export interface ShowRequest {
  /** Show only this record position and its context. */
  readonly at?: number | null;
  /** Positions on each side of `at` (default {@link DEFAULTS}.showContext). */
  readonly context?: number;
  /** Also list what the run's interrupted snapshots held beyond the record (never searchable). */
  readonly includeInterrupted?: boolean;
}

/**
 * A run's replayed full record, numbered as search excerpts number it. A run the store lacks is a
 * NotFoundError; an `at` past the record's end a PastEndError.
 */
export function showRun(source: HistorySource, runId: string, request: ShowRequest = {}): ShowView {
  const run = source.runs().find((r) => r.runId === runId);
  if (!run) throw new NotFoundError(scopeMiss(source.runs(), { scope: 'all', conversationId: null, runId })!);
  const [summary] = summarizeRuns(source, [run], replayCounts(source));
  const record = source.replay(runId).messages;
  const at = request.at ?? null;
  if (at !== null && at >= record.length) throw new PastEndError(at, runId, record.length);
  const context = request.context ?? DEFAULTS.showContext;
  const window = at === null ? null : { at, context, first: Math.max(0, at - context), last: Math.min(record.length - 1, at + context) };
  const first = window ? window.first : 0;
  const last = window ? window.last : record.length - 1;
  const view: ShowView = {
    summary: summary!,
    length: record.length,
    messages: record.slice(first, last + 1).map((m, i) => shown(m, first + i)),
    window,
    interrupted: request.includeInterrupted
      ? beyondRecord(record, source.interruptedSnapshots(runId)).map((x) => ({
          seq: x.seq,
          step: x.step,
          reason: x.reason,
          messages: x.messages.map(({ position, message }) => shown(message, position)),
        }))
      : null,
    warnings: source.warnings([runId]),
  };
  return view;
}
