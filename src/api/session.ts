import { HistorySource } from '../history/source.js';
import { storeToolNames } from '../history/tool-names.js';
import type { SearchOutcome } from '../search/search.js';
import type { IndexChoice } from '../sidecar/with-index.js';
import type { StoreReader, StoreRun } from '../store/reader.js';
import { openStoreReader } from '../store/open-reader.js';

export { prestartDrivers } from '../store/prestart.js';
import {
  listConversations,
  listRuns,
  type ConversationListing,
  type ConversationQuery,
  type RunListing,
  type RunQuery,
} from './listings.js';
import { searchOptions, searchStore, type SearchRequest, type WorkHooks } from './search.js';
import { showRun, type ShowRequest, type ShowResult } from './show.js';
import { listTools, type ToolListing, type ToolQuery } from './tools.js';
import { noticeWarnings, showWithNotices, withNotices } from './warnings.js';

export interface SessionOptions extends WorkHooks {
  /**
   * The sidecar index searches and listings read through: by default one per store in the user cache
   * directory (`$XDG_CACHE_HOME/convsearch`); `{ path }` names the file; false replays the store every
   * time (the reference's way; same results, slower).
   */
  readonly index?: IndexChoice;
}

/**
 * One store opened read-only, and what can be asked of it. Every call reads one consistent state of the
 * store; hooks given to a call replace the session's.
 */
export class Session {
  private readonly index: IndexChoice;

  constructor(
    readonly store: StoreReader,
    private readonly options: SessionOptions = {},
  ) {
    this.index = options.index ?? {};
  }

  private hooks(over: WorkHooks): WorkHooks {
    return { ...this.options, ...over };
  }

  private source(hooks: WorkHooks): HistorySource {
    return new HistorySource(this.store, { onProgress: hooks.onProgress });
  }

  /** Every run, in corpus order (`started_at`, ties by the store's own order). */
  runs(): StoreRun[] {
    return this.store.runs();
  }

  runCount(): number {
    return this.store.runCount();
  }

  /** The tool names the runs mention (each run's latest snapshot, read as text: for shell completion). */
  toolNames(): string[] {
    return storeToolNames(this.store);
  }

  /** BM25 search with the reference's semantics; `scope-not-found` outcomes carry `missing`. */
  search(request: SearchRequest, hooks: WorkHooks = {}): SearchOutcome {
    const options = searchOptions(request);
    return withNotices(searchStore(this.store, options, this.index, this.hooks(hooks)), noticeWarnings(this.store));
  }

  /** Runs with snapshot and message counts (`missing` set when the query names what the store lacks). */
  listRuns(query: RunQuery = {}, hooks: WorkHooks = {}): RunListing {
    const h = this.hooks(hooks);
    return withNotices(listRuns(this.source(h), query, this.index, h), noticeWarnings(this.store));
  }

  /** Conversations with their runs, time span, searchable messages and agents. */
  listConversations(query: ConversationQuery = {}, hooks: WorkHooks = {}): ConversationListing {
    const h = this.hooks(hooks);
    return withNotices(listConversations(this.source(h), query, this.index, h), noticeWarnings(this.store));
  }

  /** The tools the scope's messages name: calls, returns, retries, runs, first and last seen (`missing` as for runs). */
  listTools(query: ToolQuery = {}, hooks: WorkHooks = {}): ToolListing {
    const h = this.hooks(hooks);
    return withNotices(listTools(this.source(h), query, this.index, h), noticeWarnings(this.store));
  }

  /** A run's replayed full record (or a window of it), numbered as search excerpts number it. */
  showRun(runId: string, request: ShowRequest = {}, hooks: WorkHooks = {}): ShowResult {
    return showWithNotices(showRun(this.source(this.hooks(hooks)), runId, request), noticeWarnings(this.store));
  }

  close(): void {
    this.store.close();
  }
}

/**
 * Opens the store `target` names read-only (a SQLite file, a FileStepStore directory, a `postgresql://`
 * or `redis://` URL), leaving no trace. Close the session when done.
 */
export function openSession(target: string, options: SessionOptions & { readonly stable?: boolean } = {}): Session {
  return new Session(openStoreReader(target, { stable: options.stable }), options);
}

/**
 * Opens the stores (`open` adds each reader to `opened` as it opens it), runs `fn` and closes them,
 * whatever happens. When a writer changed a store under a read in place (a checkpoint into the file being
 * read), what `fn` saw may mix two states: it runs again on stable copies. A store error that shows only
 * when a query reaches it (a damaged page) is thrown as a StoreError naming the store.
 */
export async function readConsistently<T>(open: (stable: boolean, opened: StoreReader[]) => void, fn: () => T | Promise<T>): Promise<T> {
  for (let stable = false; ; stable = true) {
    const opened: StoreReader[] = [];
    try {
      open(stable, opened);
      const result = await fn();
      if (stable || opened.every((r) => r.unchanged())) return result;
    } catch (e) {
      if (!stable && opened.length > 0 && !opened.every((r) => r.unchanged())) continue;
      for (const r of opened) {
        const err = r.storeError(e);
        if (err) throw err;
      }
      throw e;
    } finally {
      for (const r of opened) r.close();
    }
  }
}

/** One store read consistently (see readConsistently) through a session. */
export async function withSession<T>(target: string, options: SessionOptions, fn: (session: Session) => T | Promise<T>): Promise<T> {
  let session: Session | null = null;
  return readConsistently(
    (stable, opened) => {
      session = openSession(target, { ...options, stable });
      opened.push(session.store);
    },
    () => fn(session!),
  );
}
