import { HistorySource, type ProgressFn } from '../history/source.js';
import { StoreError } from '../store/errors.js';
import { openStore, type Store } from '../store/open.js';
import { runCount } from '../store/run-count.js';
import { resolveDb } from './options.js';
import { progressWanted, startProgress } from './progress.js';

/**
 * Opens the store named by `--db` read-only, runs `fn` with a progress callback (an ora spinner on a
 * terminal when the store is big enough to need one, else undefined) and closes everything, whatever happens.
 */
export async function withStore<T>(db: string | undefined, opts: { quiet?: boolean }, fn: (store: Store, onProgress: ProgressFn | undefined) => T): Promise<T> {
  const store = openStore(resolveDb(db));
  let progress;
  try {
    progress = await startProgress(progressWanted(opts.quiet ?? false, runCount(store)));
    return fn(store, progress.onProgress);
  } catch (e) {
    // a corrupt page only shows when a query reaches it: name the file, like every other store error
    const code = (e as { code?: unknown }).code;
    if (e instanceof Error && typeof code === 'string' && code.startsWith('SQLITE_')) {
      throw new StoreError(`${store.path}: database error: ${e.message} (${code})`);
    }
    throw e;
  } finally {
    progress?.stop();
    store.close();
  }
}

/** withStore, with a HistorySource that reports replay progress. */
export function withSource<T>(db: string | undefined, opts: { quiet?: boolean }, fn: (source: HistorySource) => T): Promise<T> {
  return withStore(db, opts, (store, onProgress) => fn(new HistorySource(store, { onProgress })));
}
