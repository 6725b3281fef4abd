import { HistorySource, type ProgressFn } from '../history/source.js';
import { colorEnabled, type ColorChoice } from '../output/color.js';
import { StoreError } from '../store/errors.js';
import { openStore, type Store } from '../store/sqlite/open.js';
import { runCount } from '../store/sqlite/run-count.js';
import { resolveDb } from './options.js';
import { progressWanted, startProgress } from './progress.js';

/**
 * Opens the store named by `--db` read-only, runs `fn` with a progress callback (an ora spinner on a
 * terminal when the store is big enough to need one, else undefined) and closes everything, whatever happens.
 */
export interface SessionOptions {
  readonly quiet?: boolean;
  /** The command's --color: the spinner follows it too. */
  readonly color?: ColorChoice;
}

export async function withStore<T>(db: string | undefined, opts: SessionOptions, fn: (store: Store, onProgress: ProgressFn | undefined) => T): Promise<T> {
  // A writer that checkpoints into a store read in place while `fn` runs may have shown it a mix of two
  // states: then the work is done again on a private copy (store/open.ts).
  for (let copy = false; ; copy = true) {
    const store = openStore(resolveDb(db), { copy });
    let progress;
    try {
      progress = await startProgress(progressWanted(opts.quiet ?? false, runCount(store)), colorEnabled(opts.color ?? 'auto', process.stderr));
      const result = fn(store, progress.onProgress);
      if (copy || store.unchanged()) return result;
    } catch (e) {
      if (!copy && !store.unchanged()) continue;
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
}

/** withStore, with a HistorySource that reports replay progress. */
export function withSource<T>(db: string | undefined, opts: SessionOptions, fn: (source: HistorySource) => T): Promise<T> {
  return withStore(db, opts, (store, onProgress) => fn(new HistorySource(store, { onProgress })));
}
