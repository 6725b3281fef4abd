import { NotFoundError } from './errors.js';
import { HistorySource, type Warning } from '../history/source.js';
import type { CorpusSource } from '../search/corpus.js';
import { ReplayCorpusSource } from '../search/replay-source.js';
import { scopeMiss, type ScopeFilter } from '../search/scope.js';
import { toolInventory, type InventoryFilter, type ToolUse } from '../search/tool-inventory.js';
import type { IndexChoice } from '../sidecar/with-index.js';
import { withUnion, type NamedStore, type WorkHooks } from './search.js';

export type { InventoryFilter, ToolUse } from '../search/tool-inventory.js';

/** Which messages `tools` counts: a search's scope (no scope: every run), then the inventory's own filters. */
export interface ToolQuery extends InventoryFilter {
  readonly conversationId?: string | null;
  /** That run's full record, as `search --run` sees it. */
  readonly runId?: string | null;
}

export interface ToolListing {
  readonly tools: ToolUse[];
  readonly warnings: readonly Warning[];
}

/**
 * The tools the scope's messages name, each message once under the run that first persisted it (the
 * sections a search of the scope ranks), over the union of the stores' corpora (each store's own
 * attribution; run counts count runs of every store, a shared id once per store): from each store's
 * index when it is current, else a replay; same numbers.
 */
export function listTools(stores: readonly NamedStore[], query: ToolQuery, index: IndexChoice, hooks: WorkHooks): ToolListing {
  const conversationId = query.conversationId ?? null;
  const scope: ScopeFilter = { scope: conversationId !== null ? 'conversation' : 'all', conversationId, runId: query.runId ?? null };
  const replayed = (s: NamedStore): CorpusSource => new ReplayCorpusSource(new HistorySource(s.store, { onProgress: hooks.onProgress }));
  return withUnion(stores, index, hooks, replayed, (union, ctx) => {
    const missing = scopeMiss(union.runs(), scope);
    if (missing) throw new NotFoundError(missing);
    const corpus = union.corpus(scope);
    return { tools: toolInventory(corpus, query, ctx), warnings: corpus.warnings };
  });
}
