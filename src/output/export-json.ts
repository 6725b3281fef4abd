/**
 * Export's JSON records: one per run, its fields then `messages`, each message the exact stored text
 * (not re-serialized; pydantic-ai's ModelMessagesTypeAdapter reads the list). Written in pieces so a
 * large run streams out message by message.
 */
import type { StoreRun } from '../store/reader.js';

/** The record's opening, up to and including `"messages":[`. */
export function exportRecordOpen(run: StoreRun, messages: number): string {
  const head = {
    run_id: run.runId,
    conversation_id: run.conversationId,
    agent: run.agentName,
    parent_run_id: run.parentRunId,
    started_at: run.startedAt,
    ...(run.store === undefined ? {} : { store: run.store }),
    message_count: messages,
  };
  return `${JSON.stringify(head).slice(0, -1)},"messages":[`;
}

export const EXPORT_RECORD_CLOSE = ']}';

/**
 * A stored message for a JSON Lines record: a raw line break can only be whitespace between tokens in
 * valid JSON (inside strings it is escaped), so it becomes a space and the record stays one line.
 */
export function oneLine(json: string): string {
  return /[\r\n]/.test(json) ? json.replace(/[\r\n]/g, ' ') : json;
}
