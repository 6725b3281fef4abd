import { formatScore1f } from '../py/repr.js';
import type { StoreRun } from '../store/reader.js';
import type { ExcerptLine, SearchOutcome } from '../search/search.js';

// Reply texts of `search_conversation_history`, verbatim (spec §6.1).
const NO_CONVERSATION_ID =
  "Conversation-scoped search needs a conversation id, and this run has none. Pass `conversation_id=` to `Agent.run(...)` so the search can tell this conversation's history from other conversations in the same store.";
const NO_HISTORY_CONVERSATION =
  "No persisted history in this conversation yet. Search covers only runs sharing this run's conversation id, which comes from an explicit `conversation_id=` argument or is inherited from `message_history`; runs started with neither belong to other conversations.";
const NO_HISTORY_ALL =
  'No persisted conversation history to search yet. History accumulates as runs persist their steps (pair this capability with `StepPersistence` on a shared store).';

/** `run: R | conversation: C`, the conversation part only when the run has one. */
export function sectionLabel(run: StoreRun): string {
  const label = run.conversationId === null ? `run: ${run.runId}` : `run: ${run.runId} | conversation: ${run.conversationId}`;
  // several stores (not the reference's): each section names its store
  return run.store === undefined ? label : `${label} | store: ${run.store}`;
}

export function displayLine(line: ExcerptLine): string {
  return `[${line.position}] ${line.text || '[no text content]'}`;
}

/** The exact text the reference tool returns for this outcome (no trailing newline). */
export function toolText(outcome: SearchOutcome): string {
  const query = outcome.options.query;
  switch (outcome.kind) {
    case 'no-conversation-id':
      return NO_CONVERSATION_ID;
    case 'no-run-history':
      return `No persisted history for run '${outcome.runId}'.`;
    case 'no-history':
      return outcome.options.scope === 'conversation' ? NO_HISTORY_CONVERSATION : NO_HISTORY_ALL;
    case 'no-matches':
      return `No matches for '${query}' in ${outcome.searched} persisted messages.`;
    case 'found': {
      const results = outcome.hits.map(
        (h) => `[score: ${formatScore1f(h.score)} | ${sectionLabel(h.run)}]\n` + h.excerpt.map(displayLine).join('\n'),
      );
      return (
        `Found ${outcome.hits.length} match(es) for '${query}' in ${outcome.searched} persisted messages:\n\n` + results.join('\n\n---\n\n')
      );
    }
  }
}
