/**
 * Export's output, written in pieces so that a large export streams out run by run and message by
 * message. JSON and JSON Lines hold one record per run: its fields, then `messages`, each element the
 * exact stored text of the message (not re-serialized: pydantic-ai's ModelMessagesTypeAdapter reads the
 * list as the harness wrote it). Markdown is transcript-md.ts.
 */
import type { ExportedRun } from '../api/export.js';
import { escapeJsonForTerminal } from './escape.js';
import { asciiJson, type Redactor } from './redact.js';
import { transcriptMarkdown } from './transcript-md.js';

export type ExportFormat = 'json' | 'jsonl' | 'md';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['json', 'jsonl', 'md'];

export interface ExportTextOptions {
  readonly format: ExportFormat;
  /** Redacts store text (in JSON: string values only) and counts what it replaced. */
  readonly redactor?: Redactor;
  /**
   * The output is a terminal: JSON's control and bidi characters (which valid JSON holds raw only
   * inside strings) are written as `\uXXXX` escapes, so the JSON still parses and nothing acts on the
   * terminal. Markdown is always escaped (transcript-md.ts).
   */
  readonly terminal?: boolean;
}

/** The record's opening, up to and including `"messages": [`. */
function recordOpen(r: ExportedRun): string {
  const stamps = r.messages.flatMap((m) => (m.timestamp === null ? [] : [m.timestamp]));
  const head = {
    schema_version: 1,
    run_id: r.run.runId,
    conversation_id: r.run.conversationId,
    agent_name: r.run.agentName,
    parent_run_id: r.run.parentRunId,
    started_at: r.run.startedAt,
    first_message_at: stamps[0] ?? null,
    last_message_at: stamps.at(-1) ?? null,
    ...(r.run.store === undefined ? {} : { store: r.run.store }),
    message_count: r.messages.length,
  };
  // ASCII only, as Python's json.dumps writes: nothing from the store reaches the output raw
  return `${asciiJson(head).slice(0, -1)},"messages":[`;
}

/**
 * A stored message for a JSON Lines record: a raw line break can only be whitespace between tokens in
 * valid JSON (inside strings it is escaped), so it becomes a space and the record stays one line. The
 * harness's own JSON has none: its bytes are kept.
 */
function oneLine(json: string): string {
  return /[\r\n]/.test(json) ? json.replace(/[\r\n]/g, ' ') : json;
}

function* jsonRecord(r: ExportedRun, lines: boolean, redactor: Redactor | undefined): Generator<string> {
  const open = recordOpen(r);
  yield redactor ? redactor.json(open) : open;
  for (const [i, m] of r.messages.entries()) {
    const json = redactor ? redactor.json(m.json) : m.json;
    yield (i === 0 ? '' : lines ? ',' : ',\n') + (lines ? oneLine(json) : json);
  }
  yield lines ? ']}\n' : ']}';
}

/**
 * The export of `records` in `format`, piece by piece: `json` is one array of run records (each message
 * on a line of its own), `jsonl` one record per line, `md` the transcripts one after another.
 */
export function* exportText(records: Iterable<ExportedRun>, options: ExportTextOptions): Generator<string> {
  const { format, redactor } = options;
  const safe = options.terminal && format !== 'md' ? escapeJsonForTerminal : (s: string) => s;
  let first = true;
  if (format === 'json') yield '[';
  for (const r of records) {
    if (format === 'md') {
      if (!first) yield '\n---\n\n';
      yield* transcriptMarkdown(r, redactor);
    } else {
      if (format === 'json') yield first ? '\n' : ',\n';
      for (const piece of jsonRecord(r, format === 'jsonl', redactor)) yield safe(piece);
    }
    first = false;
  }
  if (format === 'json') yield first ? ']\n' : '\n]\n';
}
