import type BetterSqlite3 from 'better-sqlite3';
import { HistorySource } from '../history/source.js';
import { replayCounts, type RecordCounts } from '../history/listing.js';
import { parallelOptionsFromEnv } from '../history/threads.js';
import { ParallelCorpusSource } from '../search/parallel-corpus.js';
import { queryTokens } from '../search/tokenize.js';
import { search, type SearchOptions, type SearchOutcome } from '../search/search.js';
import type { Store } from '../store/open.js';
import { snapshotTimes } from '../store/snapshot-times.js';
import { IndexCorpusSource } from './corpus.js';
import { IndexDamagedError, IndexUnavailableError, indexIsSound, isCorruption, openIndexDatabase, removeIndexFiles } from './index-file.js';
import { defaultIndexPath } from './location.js';
import { IndexSync, type SyncProgress, type SyncReport } from './sync.js';

export interface IndexOptions {
  /** Index file to use; default: one per store in the user cache directory. */
  readonly path?: string;
  readonly onProgress?: SyncProgress;
  /** Told when the index cannot be used and the search replays the store instead. */
  readonly onFallback?: (reason: string) => void;
}

export interface IndexedSource {
  readonly source: IndexCorpusSource;
  readonly report: SyncReport;
  readonly path: string;
}

/** Opens the store's index, folds in what changed in the store, and hands back a corpus source over it. */
export function openIndexedSource(store: Store, opts: IndexOptions = {}): IndexedSource & { db: BetterSqlite3.Database } {
  const path = opts.path ?? defaultIndexPath(store.realPath);
  const db = openIndexDatabase(path, store.realPath);
  try {
    const report = new IndexSync(db, store, parallelOptionsFromEnv()).sync(opts.onProgress);
    return { db, source: new IndexCorpusSource(db), report, path };
  } catch (e) {
    db.close();
    throw e;
  }
}

/**
 * Runs `fn` over the index; a corrupt index is discarded and rebuilt once, and an index that cannot be
 * used at all (unwritable cache, repeated corruption) falls back to `fallback` (a fresh replay) after
 * telling `onFallback`. Results are identical either way.
 */
export function withIndex<T>(store: Store, opts: IndexOptions, fn: (source: IndexCorpusSource) => T, fallback: () => T): T {
  const path = opts.path ?? defaultIndexPath(store.realPath);
  for (let attempt = 0; attempt < 2; attempt++) {
    let opened: ReturnType<typeof openIndexedSource> | null = null;
    try {
      opened = openIndexedSource(store, { ...opts, path });
      return fn(opened.source);
    } catch (e) {
      opened?.db.close();
      opened = null;
      // the store changed under a read in place: its error is not the index's (the caller reads again)
      if (!store.unchanged()) throw e;
      // a damaged store page reads as corruption too: that is the store's error, and the index stays
      if (isCorruption(e) && indexIsSound(path)) throw e;
      const damaged = isCorruption(e) || e instanceof IndexDamagedError;
      if (damaged && attempt === 0) {
        removeIndexFiles(path);
        continue;
      }
      if (e instanceof IndexUnavailableError || damaged || isIoError(e)) {
        opts.onFallback?.((e as Error).message);
        return fallback();
      }
      throw e;
    } finally {
      opened?.db.close();
    }
  }
  return fallback();
}

function isIoError(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY' || code === 'SQLITE_FULL' || code === 'EACCES' || code === 'EROFS' || code === 'ENOSPC');
}

/** `false`: replay the store for this search (the reference's way); otherwise the index, at `path` or the default place. */
export type IndexChoice = false | { readonly path?: string };

export interface SearchStoreHooks {
  readonly onProgress?: SyncProgress;
  readonly onFallback?: (reason: string) => void;
}

/** One search over a store, through the persistent index unless told not to. Same outcome either way. */
export function searchStore(store: Store, options: SearchOptions, index: IndexChoice, hooks: SearchStoreHooks = {}): SearchOutcome {
  // messages without a timestamp are dated by their snapshot, read from the store either way
  const ctx = { snapshotTime: snapshotTimes(store) };
  const replay = (): SearchOutcome => {
    const source = new HistorySource(store, { onProgress: hooks.onProgress });
    return search(new ParallelCorpusSource(source, queryTokens(options.query), parallelOptionsFromEnv()), options, ctx);
  };
  if (index === false) return replay();
  return withIndex(store, { path: index.path, ...hooks }, (source) => search(source, options, ctx), replay);
}

/** Listing counts through the persistent index unless told not to; a replay otherwise (same numbers). */
export function withRecordCounts<T>(source: HistorySource, index: IndexChoice, hooks: SearchStoreHooks, fn: (counts: RecordCounts) => T): T {
  const replay = (): T => fn(replayCounts(source));
  if (index === false) return replay();
  return withIndex(source.store, { path: index.path, onProgress: source.onProgress, ...hooks }, (indexed) => fn(indexed.recordCounts()), replay);
}
