/**
 * The convsearch library: open a step store read-only, search it, list its runs, conversations and tools,
 * show a run's replayed record. Printers for the reference's text and the JSON document are included.
 */
export { DEFAULTS } from './api/defaults.js';
export { IndexRefusedError, RequestError, StoreError } from './api/errors.js';
export type {
  ConversationListing,
  ConversationQuery,
  ConversationSort,
  ConversationSummary,
  RunFilter,
  RunListing,
  RunQuery,
  RunSort,
  RunSummary,
} from './api/listings.js';
export { GlobSet } from './api/search.js';
export type {
  ExcerptLine,
  Explain,
  Hit,
  HitFilter,
  HitLocation,
  HitSort,
  MatchCounts,
  RunMatches,
  TermExplain,
  Role,
  Scope,
  SearchOptions,
  SearchOutcome,
  SearchRequest,
  WorkHooks,
} from './api/search.js';
export { openSession, Session, withSession, type SessionOptions } from './api/session.js';
export type { ShowRequest, ShowResult, ShowView } from './api/show.js';
export type { InventoryFilter, ToolListing, ToolQuery, ToolUse } from './api/tools.js';
export { warningNotices, type Warning, type WarningNotice } from './api/warnings.js';
export type { StoreReader, StoreRun } from './store/reader.js';
export { searchJson } from './output/json.js';
export { toolText } from './output/tool-text.js';
