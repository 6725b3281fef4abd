import type { StoreRun } from '../store/reader.js';
import { closestIds, didYouMean } from '../text/suggest.js';

/** The part of the search options that picks runs. */
export interface ScopeFilter {
  readonly scope: 'all' | 'conversation';
  readonly conversationId: string | null;
  readonly runId: string | null;
}

export function inScope(run: StoreRun, s: ScopeFilter): boolean {
  return (s.scope !== 'conversation' || run.conversationId === s.conversationId) && (s.runId === null || run.runId === s.runId);
}

/**
 * A scope naming what the store does not hold: a conversation with no run, a run that is not there,
 * or a run outside the given conversation (the last two read alike, as in the reference's reply).
 */
export interface ScopeMiss {
  readonly kind: 'conversation' | 'run';
  readonly id: string;
  /** The conversation the run was looked for in; null for the whole store. */
  readonly conversationId: string | null;
  /** The closest ids the store does hold. */
  readonly suggestions: readonly string[];
}

/** What a scope that matched no run was missing, or null when it named nothing (`--scope all` of an empty store). */
export function scopeMiss(runs: readonly StoreRun[], s: ScopeFilter): ScopeMiss | null {
  const conversation = s.scope === 'conversation' ? s.conversationId : null;
  if (conversation !== null) {
    const members = runs.filter((r) => r.conversationId === conversation);
    if (members.length === 0) {
      const ids = runs.flatMap((r) => (r.conversationId === null ? [] : [r.conversationId]));
      return { kind: 'conversation', id: conversation, conversationId: null, suggestions: closestIds(conversation, ids) };
    }
    if (s.runId !== null && !members.some((r) => r.runId === s.runId)) {
      return {
        kind: 'run',
        id: s.runId,
        conversationId: conversation,
        suggestions: closestIds(
          s.runId,
          members.map((r) => r.runId),
        ),
      };
    }
    return null;
  }
  if (s.runId !== null && !runs.some((r) => r.runId === s.runId)) {
    return {
      kind: 'run',
      id: s.runId,
      conversationId: null,
      suggestions: closestIds(
        s.runId,
        runs.map((r) => r.runId),
      ),
    };
  }
  return null;
}

/** One line naming what was not found, and what is close. */
export function scopeMissMessage(m: ScopeMiss): string {
  const where = m.conversationId === null ? 'in the store' : `in conversation '${m.conversationId}'`;
  const what =
    m.kind === 'conversation' ? `no conversation '${m.id}' in the store (no run has that conversation id)` : `no run '${m.id}' ${where}`;
  return what + didYouMean(m.suggestions);
}
