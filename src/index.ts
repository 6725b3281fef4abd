/** The convsearch library: open a store read-only, list and replay runs, search. */
export { openStore, type Store, type OpenMode } from './store/open.js';
export { StoreError } from './store/errors.js';
export { listRuns, type RunRecord } from './store/runs.js';
export { HistorySource, type Warning } from './history/source.js';
export { replayRun, type RecordMessage, type RunReplay } from './history/replay.js';
export { summarizeRuns, summarizeConversations, type RunSummary, type ConversationSummary } from './history/listing.js';
export { search, DEFAULT_SEARCH, type SearchOptions, type SearchOutcome, type Hit, type ExcerptLine, type HitFilter, type MatchCounts, type RunMatches, type SearchContext } from './search/search.js';
export type { Explain, TermExplain } from './search/explain.js';
export type { HitSort } from './search/order.js';
export { toolInventory, type ToolUse, type InventoryFilter } from './search/tool-inventory.js';
export { GlobSet } from './text/glob.js';
export type { HitLocation } from './search/collapse.js';
export { ReplayCorpusSource } from './search/memory-corpus.js';
export { searchStore, withIndex, openIndexedSource, type IndexChoice } from './index/indexed-search.js';
export { defaultIndexPath } from './index/location.js';
export { IndexRefusedError } from './index/errors.js';
export { toolText } from './output/tool-text.js';
export { searchJson } from './output/json.js';
