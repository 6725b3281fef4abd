/** The convsearch library: open a store read-only, list and replay runs, search. */
export { openStore, type Store, type OpenMode } from './store/sqlite/open.js';
export { StoreError } from './store/errors.js';
export { listRuns, type RunRecord } from './store/sqlite/runs.js';
export { HistorySource, type Warning } from './history/source.js';
export { replayRun, type RecordMessage, type RunReplay } from './history/replay.js';
export { summarizeRuns, summarizeConversations, type RunSummary, type ConversationSummary } from './api/listings.js';
export { search, DEFAULT_SEARCH, type SearchOptions, type SearchOutcome, type Hit, type ExcerptLine } from './search/search.js';
export { ReplayCorpusSource } from './search/replay-source.js';
export { searchStore, withIndex, openIndexedSource, type IndexChoice } from './sidecar/with-index.js';
export { defaultIndexPath } from './sidecar/location.js';
export { toolText } from './output/tool-text.js';
export { searchJson } from './output/json.js';
