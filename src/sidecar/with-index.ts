import type BetterSqlite3 from 'better-sqlite3';
import { parallelOptionsFromEnv } from '../parallel/threads.js';
import type { StoreReader } from '../store/reader.js';
import { IndexCorpusSource } from './indexed-source.js';
import { IndexDamagedError, IndexUnavailableError, indexIsSound, isCorruption, openIndexDatabase, removeIndexFiles } from './file.js';
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
export function openIndexedSource(store: StoreReader, opts: IndexOptions = {}): IndexedSource & { db: BetterSqlite3.Database } {
  const path = opts.path ?? defaultIndexPath(store.identity);
  const db = openIndexDatabase(path, store.identity);
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
export function withIndex<T>(store: StoreReader, opts: IndexOptions, fn: (source: IndexCorpusSource) => T, fallback: () => T): T {
  const path = opts.path ?? defaultIndexPath(store.identity);
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
