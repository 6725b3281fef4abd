import type { IndexStanding } from '../sidecar/shared/standing.js';
import { withIndexJson } from './index-json.js';
import { formatScore1f } from '../py/repr.js';
import type { RunMatches, SearchOutcome } from '../search/search.js';
import { escapeInline } from './escape.js';
import { endData, ndjsonEvent, SCHEMA_VERSION, searchParams, storeJson, summaryData } from './json.js';
import { runIdName, runIdNameJson } from './run-name.js';

type Json = Record<string, unknown>;

/**
 * `-l/--runs-with-matches`: the runs holding a matching message, best score first (ties in corpus
 * order), turned around by `--reverse`.
 */
export function runsWithMatches(outcome: SearchOutcome): RunMatches[] {
  const runs = outcome.matches.byRun
    .map((m, i) => ({ m, i }))
    .sort((a, b) => b.m.best - a.m.best || a.i - b.i)
    .map((x) => x.m);
  return outcome.options.reverse ? runs.reverse() : runs;
}

/** One line per run, tab-separated: run id, conversation, agent (`-` for none), matching messages, best score (one decimal). */
export function runMatchLines(outcome: SearchOutcome): string[] {
  const field = (v: string | null): string => (v === null ? '-' : escapeInline(v));
  return runsWithMatches(outcome).map((m) =>
    [field(m.run.runId), field(m.run.conversationId), field(m.run.agentName), String(m.count), formatScore1f(m.best)].join('\t'),
  );
}

function runMatchJson(m: RunMatches): Json {
  return {
    run_id: m.run.runId,
    ...storeJson(m.run),
    conversation_id: m.run.conversationId,
    agent_name: m.run.agentName,
    run_id_decoded: runIdNameJson(runIdName(m.run)),
    matches: m.count,
    best_score: m.best,
  };
}

/** `-l --json`: the search document with `runs` in place of `hits`. */
export function runMatchesJson(outcome: SearchOutcome): Json {
  const end = endData(outcome);
  return {
    schema_version: SCHEMA_VERSION,
    ...searchParams(outcome),
    outcome: end.outcome,
    message: end.message,
    total_messages: end.total_messages,
    runs: runsWithMatches(outcome).map(runMatchJson),
    summary: summaryData(outcome),
    warnings: end.warnings,
    error: end.error,
  };
}

/** `-l --ndjson`: begin, one `run` per run, end, summary. */
export function runMatchesNdjson(outcome: SearchOutcome, standings: readonly IndexStanding[] = []): string[] {
  return [
    ndjsonEvent('begin', searchParams(outcome)),
    ...runsWithMatches(outcome).map((m) => ndjsonEvent('run', runMatchJson(m))),
    ndjsonEvent('end', withIndexJson(endData(outcome), standings)),
    ndjsonEvent('summary', summaryData(outcome)),
  ];
}
