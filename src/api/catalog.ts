import type { Hit, SearchOutcome } from '../search/search.js';
import { withHits } from '../search/search.js';
import type { ConversationMeta } from '../store/conversation-meta.js';
import type { NamedStore } from './search.js';

/**
 * Each hit with its conversation's catalog metadata (title, tags, outcome) where its store has it: read
 * from the store for the conversations of the hits shown, with or without the index (which does not hold
 * the catalog), so a catalog row's problem is told only when a hit would show it.
 */
export function withConversationMeta(outcome: SearchOutcome, stores: readonly NamedStore[]): SearchOutcome {
  if (outcome.kind !== 'found' || outcome.hits.length === 0) return outcome;
  // several stores: a hit names its store by label, and a conversation id is its store's own
  const storeOf = (h: Hit): number => (h.run.store === undefined ? 0 : stores.findIndex((s) => s.label === h.run.store));
  const wanted = stores.map(() => new Set<string>());
  for (const h of outcome.hits) if (h.run.conversationId !== null) wanted[storeOf(h)]?.add(h.run.conversationId);
  const catalogs = stores.map(
    (s, i): Map<string, ConversationMeta> => (wanted[i]!.size ? s.store.conversationMeta([...wanted[i]!]) : new Map()),
  );
  if (catalogs.every((c) => c.size === 0)) return outcome;
  return withHits(
    outcome,
    outcome.hits.map((h) => {
      const meta = h.run.conversationId === null ? undefined : catalogs[storeOf(h)]?.get(h.run.conversationId);
      return meta ? { ...h, conversation: meta } : h;
    }),
  );
}
