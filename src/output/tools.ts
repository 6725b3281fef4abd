import type { IndexStanding } from '../sidecar/shared/standing.js';
import { withIndexJson } from './index-json.js';
import { compactTimestamp } from '../history/timestamps.js';
import { isoMicros } from '../history/time.js';
import type { Warning } from '../history/source.js';
import type { ToolUse } from '../search/tool-inventory.js';
import { escapeInline } from './escape.js';
import { ndjsonEvent, SCHEMA_VERSION, warningJson } from './json.js';
import { renderTable, type Cell, type Column, type RenderedTable, type TableStyle } from './tables.js';

type Json = Record<string, unknown>;

const TOOL_COLUMNS: readonly Column[] = [
  { header: 'tool', kind: 'id' },
  { header: 'calls', kind: 'number' },
  { header: 'returns', kind: 'number', drop: 3 },
  { header: 'retries', kind: 'number', drop: 4 },
  { header: 'runs', kind: 'number', drop: 2 },
  { header: 'first seen', kind: 'time', drop: 5 },
  { header: 'last seen', kind: 'time', drop: 1 },
];

const when = (t: number | null): Cell => (t === null ? { text: '-', dim: true } : { text: compactTimestamp(isoMicros(t)) });

export function toolsTable(tools: readonly ToolUse[], style: TableStyle): RenderedTable {
  const rows = tools.map((t): Cell[] => [
    { text: escapeInline(t.name) },
    { text: String(t.calls) },
    { text: String(t.returns) },
    { text: String(t.retries) },
    { text: String(t.runs) },
    when(t.firstSeen),
    when(t.lastSeen),
  ]);
  return renderTable(TOOL_COLUMNS, rows, style);
}

export function toolJson(t: ToolUse): Json {
  return {
    tool_name: t.name,
    calls: t.calls,
    returns: t.returns,
    retries: t.retries,
    runs: t.runs,
    first_seen: t.firstSeen === null ? null : isoMicros(t.firstSeen),
    last_seen: t.lastSeen === null ? null : isoMicros(t.lastSeen),
  };
}

export function toolsJson(tools: readonly ToolUse[], warnings: readonly Warning[]): Json {
  return { schema_version: SCHEMA_VERSION, tools: tools.map(toolJson), warnings: warnings.map(warningJson) };
}

export function toolsNdjson(
  tools: readonly ToolUse[],
  warnings: readonly Warning[],
  params: Json,
  standings: readonly IndexStanding[] = [],
): string[] {
  return [
    ndjsonEvent('begin', params),
    ...tools.map((t) => ndjsonEvent('tool', toolJson(t))),
    ndjsonEvent('end', withIndexJson({ tools: tools.length, warnings: warnings.map(warningJson) }, standings)),
  ];
}
