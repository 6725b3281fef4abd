import type { SearchOutcome } from '../search/search.js';
import type { Warning } from '../history/source.js';

export const SCHEMA_VERSION = 1;

export function warningJson(w: Warning): Record<string, unknown> {
  return w.kind === 'unreadable-snapshot'
    ? { kind: w.kind, run_id: w.runId, seq: w.seq, reason: w.reason }
    : { kind: w.kind, run_id: w.runId, part_kind: w.partKind, count: w.count };
}

/** The `--json` document for a search: every printer consumes the same outcome. */
export function searchJson(outcome: SearchOutcome): Record<string, unknown> {
  const o = outcome.options;
  const total = outcome.kind === 'found' || outcome.kind === 'no-matches' ? outcome.total : 0;
  const hits =
    outcome.kind === 'found'
      ? outcome.hits.map((h) => ({
          rank: h.rank,
          score: h.score,
          run_id: h.run.runId,
          conversation_id: h.run.conversationId,
          message_index: h.messageIndex,
          text: h.text,
          excerpt: h.excerpt.map((l) => ({ index: l.index, text: l.text, hit: l.hit })),
        }))
      : [];
  return {
    schema_version: SCHEMA_VERSION,
    query: o.query,
    scope: o.scope,
    conversation_id: o.scope === 'conversation' ? o.conversationId : null,
    run_id: o.runId,
    total_messages: total,
    hits,
    warnings: outcome.warnings.map(warningJson),
  };
}
