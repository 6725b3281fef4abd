/**
 * The harness's conversation catalog (title, tags, outcome; docs/backends.md) joined to what a session
 * shows: read from the stores, with or without the index (which does not hold the catalog), and only for
 * the conversations shown, so that only their rows' problems are told.
 */
import type { Hit, SearchOutcome } from '../search/search.js';
import { withHits } from '../search/search.js';
import type { ConversationMeta } from '../store/conversation-meta.js';
import type { ConversationSummary } from './listings.js';
import type { NamedStore } from './search.js';

/** Each store's catalog rows for the conversations the items name; `at` gives an item's store (by label) and conversation. */
function catalogsFor<T>(
  items: readonly T[],
  stores: readonly NamedStore[],
  at: (item: T) => { readonly store?: string; readonly conversationId: string | null },
): (item: T) => ConversationMeta | null {
  // several stores: an item names its store by label, and a conversation id is its store's own
  const index = new Map(stores.map((s, i) => [s.label, i]));
  const storeOf = (item: T): number => {
    const label = at(item).store;
    return label === undefined ? 0 : (index.get(label) ?? -1);
  };
  const wanted = stores.map(() => new Set<string>());
  for (const item of items) {
    const id = at(item).conversationId;
    if (id !== null) wanted[storeOf(item)]?.add(id);
  }
  const catalogs = stores.map(
    (s, i): Map<string, ConversationMeta> => (wanted[i]!.size ? s.store.conversationMeta([...wanted[i]!]) : new Map()),
  );
  return (item) => {
    const id = at(item).conversationId;
    return (id !== null && catalogs[storeOf(item)]?.get(id)) || null;
  };
}

/** Each hit with its conversation's catalog metadata, where its store has it. */
export function withConversationMeta(outcome: SearchOutcome, stores: readonly NamedStore[]): SearchOutcome {
  if (outcome.kind !== 'found' || outcome.hits.length === 0) return outcome;
  const metaOf = catalogsFor(outcome.hits, stores, (h: Hit) => h.run);
  const hits = outcome.hits.map((h) => {
    const meta = metaOf(h);
    return meta ? { ...h, conversation: meta } : h;
  });
  return hits.some((h, i) => h !== outcome.hits[i]) ? withHits(outcome, hits) : outcome;
}

/** The conversations listed, each with its store's catalog metadata (null where it has none). */
export function withCatalog(rows: readonly ConversationSummary[], stores: readonly NamedStore[]): ConversationSummary[] {
  const metaOf = catalogsFor(rows, stores, (c) => c);
  return rows.map((c) => ({ ...c, metadata: metaOf(c) }));
}
