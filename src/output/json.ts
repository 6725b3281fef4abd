import type { IndexStanding } from '../sidecar/shared/standing.js';
import { withIndexJson } from './index-json.js';
import { DEFAULTS } from '../api/defaults.js';
import type { Warning } from '../history/source.js';
import type { StoreRun } from '../store/reader.js';
import type { Hit, SearchOutcome } from '../search/search.js';
import type { HitLocation } from '../search/collapse.js';
import type { Explain } from '../search/explain.js';
import { outcomeStats } from './stats.js';
import { toolText } from './tool-text.js';
import { scopeMissMessage } from '../search/scope.js';
import { isoMicros } from '../history/time.js';
import type { ConversationMeta } from '../store/conversation-meta.js';
import { runIdName, runIdNameJson } from './run-name.js';

/** Bumped only when a field changes meaning or disappears; new fields may appear within a version. */
export const SCHEMA_VERSION = 1;

export type Json = Record<string, unknown>;

export function warningJson(w: Warning): Json {
  switch (w.kind) {
    case 'unreadable-snapshot':
      return { kind: w.kind, run_id: w.runId, seq: w.seq, reason: w.reason };
    case 'unknown-part-kind':
      return { kind: w.kind, run_id: w.runId, part_kind: w.partKind, count: w.count };
    case 'store-notice':
      return { kind: w.kind, notice: w.notice, run_id: w.runId, seq: w.seq, detail: w.detail };
  }
}

/** One `--ndjson` line: `{"type", "schema_version", "data"}`. */
export function ndjsonEvent(type: string, data: Json): string {
  return JSON.stringify({ type, schema_version: SCHEMA_VERSION, data });
}

/** `store` (its label) for a run of a search over several stores; nothing for one store, whose output stays as it was. */
export function storeJson(run: StoreRun): Json {
  return run.store === undefined ? {} : { store: run.store };
}

/** A conversation catalog's `{"title", "tags", "outcome"}`, or null where the store has none. */
export function conversationMetaJson(m: ConversationMeta | null): Json | null {
  return m === null ? null : { title: m.title, tags: [...m.tags], outcome: m.outcome };
}

export function hitJson(h: Hit): Json {
  return {
    rank: h.rank,
    score: h.score,
    run_id: h.run.runId,
    ...storeJson(h.run),
    conversation_id: h.run.conversationId,
    agent_name: h.run.agentName,
    run_id_decoded: runIdNameJson(runIdName(h.run)),
    conversation_metadata: conversationMetaJson(h.conversation ?? null),
    message_index: h.position,
    roles: [...new Set(h.parts.map((p) => p.role))],
    timestamp: h.timestamp,
    // the step only: a snapshot's seq counts every conversation's snapshots, which a scoped search must not reveal
    first_step: h.firstStep,
    text: h.text,
    parts: h.parts.map((p) => ({ role: p.role, tool_name: p.toolName, text: p.text })),
    excerpt: h.excerpt.map((l) => ({ index: l.position, text: l.text, hit: l.hit })),
    // with --collapse: every matching message holding this text, the hit's own included
    locations: h.locations?.map(locationJson) ?? null,
    explain: h.explain ? explainJson(h.explain) : null,
  };
}

export function explainJson(e: Explain): Json {
  return {
    score: e.score,
    n: e.n,
    dl: e.dl,
    avgdl: e.avgdl,
    k1: e.k1,
    b: e.b,
    terms: e.terms.map((t) => ({ term: t.term, tf: t.tf, df: t.df, idf: t.idf, contribution: t.contribution })),
  };
}

export function locationJson(l: HitLocation): Json {
  return {
    run_id: l.run.runId,
    ...storeJson(l.run),
    conversation_id: l.run.conversationId,
    agent_name: l.run.agentName,
    run_id_decoded: runIdNameJson(runIdName(l.run)),
    message_index: l.position,
    timestamp: l.timestamp,
  };
}

export function searchParams(outcome: SearchOutcome): Json {
  const o = outcome.options;
  return {
    query: o.query,
    scope: o.scope,
    conversation_id: o.scope === 'conversation' ? o.conversationId : null,
    run_id: o.runId,
    max_matches: o.maxMatches,
    context_lines: o.contextLines,
    bm25_k1: o.bm25.k1,
    bm25_b: o.bm25.b,
    collapse: Boolean(o.collapse),
    explain: Boolean(o.explain),
    sort: o.sort ?? DEFAULTS.hitSort,
    reverse: Boolean(o.reverse),
    // `parity: false`: ranked by a tokenizer the reference does not have
    tokenizer: o.tokenizer ?? 'default',
    parity: (o.tokenizer ?? 'default') === 'default',
    filters: {
      roles: [...(o.filter?.roles ?? [])],
      tools: [...(o.filter?.tools ?? [])],
      min_score: o.filter?.minScore ?? null,
      agents: [...(o.filter?.agents ?? [])],
      parent_run_id: o.filter?.parent ?? null,
      // the instants the bounds resolved to (a duration counts back from when the search ran)
      since: o.filter?.since != null ? isoMicros(o.filter.since) : null,
      until: o.filter?.until != null ? isoMicros(o.filter.until) : null,
      phrases: (o.filter?.phrases ?? []).map((p) => p.join(' ')),
    },
  };
}

export function endData(outcome: SearchOutcome): Json {
  return {
    outcome: outcome.kind,
    // the reference's reply when nothing was found (`No matches for ...`); null with hits
    message: outcome.kind === 'found' ? null : toolText(outcome),
    total_messages: outcomeStats(outcome).messages,
    warnings: outcome.warnings.map(warningJson),
    error: errorJson(outcome),
  };
}

/** A scope naming what the store lacks: the search is an error (exit 2), and the document says why. */
function errorJson(outcome: SearchOutcome): Json | null {
  const m = outcome.missing;
  if (!m) return null;
  return {
    kind: 'scope-not-found',
    missing: m.kind,
    id: m.id,
    conversation_id: m.conversationId,
    suggestions: m.suggestions,
    message: scopeMissMessage(m),
  };
}

export function summaryData(outcome: SearchOutcome): Json {
  const s = outcomeStats(outcome);
  // hits: shown under -m and -C; total_matches: every matching message (what --count counts)
  return { hits: s.hits, total_matches: s.matches, messages: s.messages, runs: s.runs, skipped_snapshots: s.skippedSnapshots };
}

/** The `--json` document for a search: every printer consumes the same outcome. */
export function searchJson(outcome: SearchOutcome): Json {
  const params = searchParams(outcome);
  const end = endData(outcome);
  return {
    schema_version: SCHEMA_VERSION,
    ...params,
    outcome: end.outcome,
    message: end.message,
    total_messages: end.total_messages,
    hits: outcome.kind === 'found' ? outcome.hits.map(hitJson) : [],
    summary: summaryData(outcome),
    warnings: end.warnings,
    error: end.error,
  };
}

/** The `--ndjson` events for a search: begin, one hit per line, end (with `index` when a shared index answered), summary. */
export function searchNdjson(outcome: SearchOutcome, standings: readonly IndexStanding[] = []): string[] {
  return [
    ndjsonEvent('begin', searchParams(outcome)),
    ...(outcome.kind === 'found' ? outcome.hits.map((h) => ndjsonEvent('hit', hitJson(h))) : []),
    ndjsonEvent('end', withIndexJson(endData(outcome), standings)),
    ndjsonEvent('summary', summaryData(outcome)),
  ];
}
