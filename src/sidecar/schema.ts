/** Bump when the layout or anything derived into it (replay, rendering, tokenizer) changes meaning. */
export const INDEX_FORMAT = 'convsearch-index-7';

export const INDEX_DDL = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  run_key INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL UNIQUE,
  store_rowid INTEGER NOT NULL,
  conversation_id TEXT,
  parent_run_id TEXT,
  agent_name TEXT,
  started_at TEXT NOT NULL,
  ord INTEGER NOT NULL,
  snap_count INTEGER NOT NULL,
  snap_max_seq INTEGER NOT NULL,
  complete_count INTEGER NOT NULL,
  complete_max_seq INTEGER NOT NULL,
  len INTEGER NOT NULL,
  start_all INTEGER NOT NULL,
  start_conv INTEGER NOT NULL,
  dl_full INTEGER NOT NULL,
  dl_all INTEGER NOT NULL,
  dl_conv INTEGER NOT NULL,
  seg INTEGER NOT NULL,
  skipped TEXT NOT NULL,
  unknown TEXT NOT NULL,
  lengths BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
  run_key INTEGER NOT NULL,
  pos INTEGER NOT NULL,
  loose_key TEXT NOT NULL,
  strict_key TEXT NOT NULL,
  kind TEXT NOT NULL,
  timestamp TEXT,
  first_seq INTEGER NOT NULL,
  first_step INTEGER,
  dl INTEGER NOT NULL,
  unknown_parts TEXT,
  roles TEXT NOT NULL,
  fields TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS messages_pos ON messages(run_key, pos);
CREATE INDEX IF NOT EXISTS messages_strict ON messages(strict_key);
CREATE TABLE IF NOT EXISTS corpus_cache (id INTEGER PRIMARY KEY, runs TEXT NOT NULL, lengths BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS postings (term TEXT NOT NULL, seg INTEGER NOT NULL, data BLOB NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS postings_term ON postings(term, seg);
`;

/** The `runs` columns that mirror the store's run record. */
export interface IndexRunIdentity {
  run_key: number;
  run_id: string;
  store_rowid: number;
  conversation_id: string | null;
  parent_run_id: string | null;
  agent_name: string | null;
  started_at: string;
  seg: number;
  skipped: string;
}

/**
 * Columns of the per-search run summary (`corpus_cache.runs`), in this order, followed by `warn`
 * (the run has warnings to report) and the offset and size of its document lengths in `corpus_cache.lengths`.
 */
export const CORPUS_RUN_COLUMNS = [
  'run_key',
  'run_id',
  'store_rowid',
  'conversation_id',
  'parent_run_id',
  'agent_name',
  'started_at',
  'len',
  'start_all',
  'start_conv',
  'dl_full',
  'dl_all',
  'dl_conv',
  'seg',
] as const;
