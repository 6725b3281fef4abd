import type { IndexStanding } from '../sidecar/shared/standing.js';
import { withIndexJson } from './index-json.js';
import type { ConversationSummary, RunSummary } from '../api/listings.js';
import type { Warning } from '../history/source.js';
import { conversationMetaJson, ndjsonEvent, SCHEMA_VERSION, storeJson, warningJson } from './json.js';
import { parentIdName, runIdName, runIdNameJson } from './run-name.js';

type Json = Record<string, unknown>;

export function runJson(s: RunSummary): Json {
  return {
    run_id: s.run.runId,
    ...storeJson(s.run),
    conversation_id: s.run.conversationId,
    parent_run_id: s.run.parentRunId,
    agent_name: s.run.agentName,
    run_id_decoded: runIdNameJson(runIdName(s.run)),
    parent_run_id_decoded: runIdNameJson(parentIdName(s.run)),
    started_at: s.run.startedAt,
    snapshots: s.snapshots,
    interrupted_snapshots: s.interruptedSnapshots,
    messages: s.messages,
    last_step: s.lastStep,
  };
}

export function conversationJson(c: ConversationSummary): Json {
  return {
    conversation_id: c.conversationId,
    ...(c.store === undefined ? {} : { store: c.store }),
    runs: c.runs,
    first_started_at: c.firstStartedAt,
    last_started_at: c.lastStartedAt,
    messages: c.messages,
    agents: c.agents,
    metadata: conversationMetaJson(c.metadata),
  };
}

export function runsJson(runs: readonly RunSummary[], warnings: readonly Warning[]): Json {
  return { schema_version: SCHEMA_VERSION, runs: runs.map(runJson), warnings: warnings.map(warningJson) };
}

export function runsNdjson(
  runs: readonly RunSummary[],
  warnings: readonly Warning[],
  params: Json,
  standings: readonly IndexStanding[] = [],
): string[] {
  return [
    ndjsonEvent('begin', params),
    ...runs.map((r) => ndjsonEvent('run', runJson(r))),
    ndjsonEvent('end', withIndexJson({ runs: runs.length, warnings: warnings.map(warningJson) }, standings)),
  ];
}

export function conversationsJson(convs: readonly ConversationSummary[], warnings: readonly Warning[]): Json {
  return { schema_version: SCHEMA_VERSION, conversations: convs.map(conversationJson), warnings: warnings.map(warningJson) };
}

export function conversationsNdjson(
  convs: readonly ConversationSummary[],
  warnings: readonly Warning[],
  params: Json,
  standings: readonly IndexStanding[] = [],
): string[] {
  return [
    ndjsonEvent('begin', params),
    ...convs.map((c) => ndjsonEvent('conversation', conversationJson(c))),
    ndjsonEvent('end', withIndexJson({ conversations: convs.length, warnings: warnings.map(warningJson) }, standings)),
  ];
}
