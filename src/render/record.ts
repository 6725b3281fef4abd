import type { RecordMessage } from '../history/replay.js';
import { messageTimestamp } from '../history/timestamps.js';
import { renderMessage, searchText, type RenderedPart } from './message.js';

/** A message of a run's record as search and display see it. */
export interface RenderedMessage {
  readonly parts: readonly RenderedPart[];
  /** What BM25 tokenizes and what `--json` reports as `text` (see {@link searchText}). */
  readonly text: string;
  /** The message's stored timestamp, raw (null when it has none). */
  readonly timestamp: string | null;
  /** The snapshot (seq, step_index) that first carried the message. */
  readonly firstSeq: number;
  readonly firstStep: number | null;
}

const rendered = new WeakMap<RecordMessage, RenderedMessage>();

/** Rendering is a pure function of the message; a record shared by several scopes renders once. */
export function renderRecordMessage(m: RecordMessage): RenderedMessage {
  let r = rendered.get(m);
  if (!r) {
    const parts = renderMessage(m.message);
    r = { parts, text: searchText(parts), timestamp: messageTimestamp(m.message), firstSeq: m.firstSeq, firstStep: m.firstStep };
    rendered.set(m, r);
  }
  return r;
}
