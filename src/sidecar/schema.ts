/** Bump when the layout or anything derived into it (replay, rendering, tokenizer) changes meaning (11: SQLite run ids that are not UTF-8 replay by their bytes; 12: tiered merges, a run's live segment read through meta `base` and `merged`; 13: an update's segment listed in a term directory of its own, meta `tier_segments`; 14: a run's content digest hashes a snapshot's text from where it leaves its predecessor's; 15: the corpus cache's numbers as float64 blobs, its run texts one JSON list a row; 16: a run's content digest chains its rows, and the page tree digests the leaf cells it decodes, so an appended run's digest goes on from the one recorded; 17: a run's live postings span its segments from `seg_from` to `seg`; 18: pages row 8, the filter of every run's message keys, which every update that writes a run's keys adds them to: an index an older convsearch updated would lack some; 19: `runs_seg`, so that a tier merge finds the runs written since the base without reading every run row; 20: a run list's digest chains blocks of its lines (store/run-list.ts), and the page map keeps the runs table's blocks and its walk's leaves, so an update reads the runs table from its last kept block on; `runs_conv`, so that attribution within a conversation finds its runs without the store's run list; 21: the content digest takes the runs' entries in 256 buckets by key, kept with them in row 5, so that an update hashes again only the buckets of the runs that changed). */
export const INDEX_FORMAT = 'convsearch-index-21';

/**
 * Every row carries `sum`, the CRC-32 of its other columns (checksum.ts), checked on every read; a
 * `runs` row also `marks_sum`, the CRC-32 of the columns the sync compares (tables.ts MARK_COLUMNS),
 * checked when those are read alone, and `keys_sum` of KEY_COLUMNS (what attribution scans of every run). `corpus_cache` holds one row per CACHE_CHUNK runs in corpus order (corpus-cache.ts).
 * `terms` lists, per term, the ids of its `postings` rows, in fixed hash buckets that always exist:
 * a term that is absent is absent from a checked bucket, never just a lookup that found nothing. The
 * rows of a segment an update wrote (meta `tier_segments`) are listed in that segment's own TIER_PARTS
 * rows of `terms`, keyed after the main buckets (tables.ts tierBucket), until a merge folds them.
 * A message's `fields` JSON longer than a piece (fields.ts) holds its first piece; the `pieces` that
 * follow are rows of `field_pieces`, k = 1, 2, …, each with a checksum of its own: a huge message is
 * written and read back piece by piece, never bound to one statement whole.
 * `pages` holds heads: 1, the SQLite store's page map (store/sqlite/pages.ts) with its key
 * and the content digest it was taken with (and `media`, the media table's fingerprint with the media
 * count and digest read with it: store/sqlite/content.ts; absent, the media are read); 2, the
 * snapshots b-tree decoded with it (its decoded pages, then its run ids), taken only with a row 1 of
 * the same content; 3, what that content was made of (known-runs.ts); 4, next to a live writer, the
 * pass over the store file the map was taken with (store/content.ts FilePass: raw page digests and first
 * words, with the file's stamp), taken instead of reading the file while its stamp stays; 8, the filter
 * of every run's message keys (key-filter.ts), which attribution asks before it reads every run's keys.
 * A head's bytes are in rows id·2^24 + k, k = 0, 1, … of 32 KiB (tables.ts); a head without parts (an older convsearch's) holds
 * its bytes in `digests`, its tree's run ids in `head`.
 */
export const INDEX_DDL = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL, sum INTEGER NOT NULL);
CREATE TABLE runs (
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
  content TEXT NOT NULL,
  complete_count INTEGER NOT NULL,
  complete_max_seq INTEGER NOT NULL,
  len INTEGER NOT NULL,
  start_all INTEGER NOT NULL,
  start_conv INTEGER NOT NULL,
  dl_full INTEGER NOT NULL,
  dl_all INTEGER NOT NULL,
  dl_conv INTEGER NOT NULL,
  seg INTEGER NOT NULL,
  seg_from INTEGER NOT NULL,
  skipped TEXT NOT NULL,
  unknown TEXT NOT NULL,
  complete_snaps INTEGER NOT NULL,
  interrupted_snaps INTEGER NOT NULL,
  last_step INTEGER,
  lengths BLOB NOT NULL,
  keys BLOB NOT NULL,
  sum INTEGER NOT NULL,
  marks_sum INTEGER NOT NULL,
  keys_sum INTEGER NOT NULL
);
CREATE INDEX runs_ord ON runs(ord);
CREATE INDEX runs_seg ON runs(seg);
CREATE INDEX runs_conv ON runs(conversation_id, ord);
CREATE TABLE messages (
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
  fields TEXT NOT NULL,
  pieces INTEGER NOT NULL,
  sum INTEGER NOT NULL
);
CREATE UNIQUE INDEX messages_pos ON messages(run_key, pos);
CREATE TABLE field_pieces (run_key INTEGER NOT NULL, pos INTEGER NOT NULL, k INTEGER NOT NULL, data TEXT NOT NULL, sum INTEGER NOT NULL);
CREATE UNIQUE INDEX field_pieces_key ON field_pieces(run_key, pos, k);
CREATE TABLE corpus_cache (id INTEGER PRIMARY KEY, numbers BLOB NOT NULL, lengths BLOB NOT NULL, runs BLOB NOT NULL, sum INTEGER NOT NULL);
CREATE TABLE postings (id INTEGER PRIMARY KEY, term TEXT NOT NULL, seg INTEGER NOT NULL, data BLOB NOT NULL, sum INTEGER NOT NULL);
CREATE TABLE terms (bucket INTEGER PRIMARY KEY, data BLOB NOT NULL, sum INTEGER NOT NULL);
CREATE TABLE pages (id INTEGER PRIMARY KEY, head TEXT NOT NULL, digests BLOB NOT NULL, sum INTEGER NOT NULL);
`;

/**
 * What the per-search run summary (`corpus_cache`, corpus-cache.ts) keeps of each run: its texts, and its
 * numbers, followed there by `warn` (the run has warnings to report), the offset and size of its document
 * lengths, and what `runs` lists of it (SNAPSHOT_STAT_COLUMNS). The run's live postings are its groups
 * in the segments from `seg_from` to `seg` (as meta.ts liveSegment places them): a run written whole has
 * one, a run whose messages were only appended to keeps its earlier groups and adds one for the new.
 */
export const CORPUS_RUN_TEXTS = ['run_id', 'conversation_id', 'parent_run_id', 'agent_name', 'started_at'] as const;
export const CORPUS_RUN_NUMBERS = [
  'run_key',
  'store_rowid',
  'len',
  'start_all',
  'start_conv',
  'dl_full',
  'dl_all',
  'dl_conv',
  'seg',
  'seg_from',
] as const;

/**
 * A run's snapshots by state and its last step, as the store's countsByRun and lastSteps give them
 * (complete_snaps -1: the backend could not read them for one run; `runs` then asks the store).
 */
export const SNAPSHOT_STAT_COLUMNS = ['complete_snaps', 'interrupted_snaps', 'last_step'] as const;
