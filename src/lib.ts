/**
 * The convsearch library: open a step store read-only, search it, list its runs, conversations and tools,
 * show a run's replayed record, and print any of it the way the command line does. The command line
 * (src/cli/) imports nothing else, so whatever it can do, a library user can do.
 */

// Sessions on one store or several, and what they answer
export { DEFAULTS } from './api/defaults.js';
export { IndexRefusedError, IndexUnavailableError, NotFoundError, PastEndError, RequestError, StoreError } from './api/errors.js';
export type { SyncReport } from './sidecar/sync.js';
export { isoMicros, parseTimeBound } from './api/listings.js';
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
export {
  GlobSet,
  isEmptyFilter,
  isRole,
  isTokenizer,
  ROLES,
  scopeMissMessage,
  tokenize,
  tokenizeWith,
  tokenizerNamed,
  TOKENIZERS,
  type Tokenizer,
  type TokenizerName,
} from './api/search.js';
export type {
  ExcerptLine,
  Explain,
  Hit,
  HitFilter,
  HitLocation,
  HitSort,
  MatchCounts,
  ProgressFn,
  RunMatches,
  TermExplain,
  Role,
  Scope,
  ScopeMiss,
  SearchOptions,
  SearchOutcome,
  SearchRequest,
  WorkHooks,
} from './api/search.js';
export { openSession, prestartDrivers, Session, withSession, type SessionOptions } from './api/session.js';
export { hitTranscripts } from './api/report.js';
export type { ExportedMessage, ExportedRun, ExportRuns, ExportSelection } from './api/export.js';
export { OutputFile, refuseStoreOutput } from './api/output-file.js';
export { storeTargets } from './api/stores.js';
export {
  defaultPlaces,
  noStoreMessage,
  placeState,
  resolveStores,
  type PlaceKind,
  type PlaceLook,
  type PlaceSource,
  type StorePlace,
  type StoreResolution,
} from './api/discover.js';
export type { InterruptedLeftover, ShownMessage, ShowRequest, ShowView } from './api/show.js';
export type { InventoryFilter, ToolListing, ToolQuery, ToolUse } from './api/tools.js';
export { checkB, checkK1, checkNonNegative } from './api/validate.js';
export { warningNotices, type Warning, type WarningNotice } from './api/warnings.js';
export type { StoreReader, StoreRun } from './store/reader.js';
export { decodeRunId, type RunIdName } from './store/run-name.js';
export type { ConversationMeta } from './store/conversation-meta.js';

// Printers: every format the command line prints, from the same results
export { colorEnabled, makeChalk, type ColorChoice } from './output/color.js';
export { escapeForTerminal, escapeInline } from './output/escape.js';
export { placeJson, whereFound, whereJson, whereLines } from './output/where.js';
export { humanHits, humanNotice } from './output/human.js';
export { searchJson, searchNdjson } from './output/json.js';
export { conversationsJson, conversationsNdjson, runsJson, runsNdjson } from './output/listing-json.js';
export { withIndexJson } from './output/index-json.js';
export type { IndexStanding } from './sidecar/shared/standing.js';
export { prestartIndexDriver } from './sidecar/shared/prestart.js';
export { prestart } from './prestart.js';
export { countLines, plainLines } from './output/plain.js';
export { escapeHtml } from './output/html.js';
export { markTerms, REPORT_CSP, reportHtml, type ReportInput } from './output/report-html.js';
export {
  runDay,
  sparkline,
  timeline,
  timelineJson,
  timelineLine,
  timelineNdjson,
  type Timeline,
  type TimelineBucket,
  type TimelineKey,
} from './output/timeline.js';
export { transcriptAnchor, transcriptHtml } from './output/transcript-html.js';
export { runMatchesJson, runMatchesNdjson, runMatchLines } from './output/run-matches.js';
export { showJson, showNdjson, showText } from './output/show.js';
export { EXPORT_FORMATS, exportText, type ExportFormat, type ExportTextOptions } from './output/export-json.js';
export { REDACT_PRESETS, REDACTED, RedactPatternError, Redactor } from './output/redact.js';
export { transcriptMarkdown } from './output/transcript-md.js';
export { matchNoun, outcomeStats, plural, summaryLine } from './output/stats.js';
export { conversationsTable, omittedNote, runsTable, type RenderedTable, type TableStyle } from './output/tables.js';
export { toolText } from './output/tool-text.js';
export { toolsJson, toolsNdjson, toolsTable } from './output/tools.js';
export { warningLine } from './output/warnings.js';
export { terminalWidth, wrapText } from './output/width.js';
