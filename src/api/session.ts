/**
 * A session: the stores a command reads, opened read-only, and what can be asked of them. One store is a
 * set of one; several (`--db` given more than once, or a directory of SQLite files) are read as one
 * corpus (search/union.ts): each store keeps its own replay, index and attribution, runs carry their
 * store's label, and run ids two stores share are qualified `<label>:<run-id>` (accepted back by the
 * run scope, `parent` and `showRun`). A set of one labels and qualifies nothing: it answers as its store.
 */
import { HistorySource, noticeWarnings, renameRun, type Warning } from '../history/source.js';
import type { StoreNotice } from '../store/notices.js';
import { storeToolNames } from '../history/tool-names.js';
import { scopeMiss } from '../search/scope.js';
import type { SearchOutcome } from '../search/search.js';
import { mergeOrder, qualifiedName, RunNames } from '../search/union.js';
import type { IndexChoice } from '../sidecar/with-index.js';
import { holdSharedReads, ReadSession, sharedReads } from '../sidecar/shared/read-session.js';
import { indexStandIn } from '../sidecar/shared/stand-in.js';
import { StoreError } from '../store/errors.js';
import { syncShared } from '../sidecar/shared/shared-index.js';
import { isSharedIndex } from '../sidecar/shared/target.js';
import type { SyncReport } from '../sidecar/sync.js';
import { parallelOptionsFromEnv } from '../parallel/threads.js';
import { openStoreReader } from '../store/open-reader.js';
import type { StoreReader, StoreRun } from '../store/reader.js';
import { DEFAULTS } from './defaults.js';
import { exportRecords, type ExportRuns, type ExportSelection, type ExportTarget } from './export.js';
import { NotFoundError, PastEndError, RequestError } from './errors.js';
import {
  conversationsOfStore,
  runsOfStore,
  sortConversations,
  sortRuns,
  type ConversationListing,
  type ConversationQuery,
  type ConversationSummary,
  type RunListing,
  type RunQuery,
  type RunSummary,
} from './listings.js';
import { searchOptions, searchStores, type NamedStore, type SearchRequest, type WorkHooks } from './search.js';
import { showRun, type ShowRequest, type ShowView } from './show.js';
import { sameStore, targetSet } from './stores.js';
import { listTools, type ToolListing, type ToolQuery } from './tools.js';
import { withNotices } from './warnings.js';
import { withCatalog, withConversationMeta } from './catalog.js';

export { prestartDrivers } from '../store/prestart.js';

export interface SessionOptions extends WorkHooks {
  /**
   * The sidecar index searches and listings read through: by default one per store in the user cache
   * directory (`$XDG_CACHE_HOME/convsearch`, else `~/.cache/convsearch`, else `<tmpdir>/convsearch-<uid>`, else
   * none); `{ path }` names the file (one store only; only a new file or an index of ours), or a
   * `postgres://` URL: the shared index (`?schema=`, default convsearch_index), which several stores share
   * and which only syncIndex writes; false replays
   * the stores every time (the reference's way; same results, slower).
   */
  readonly index?: IndexChoice;
}

/** A run named either way (bare, or `<label>:<run-id>` even where no other store holds the id) as the session shows it. */
function shownName<T extends string | null | undefined>(name: T, names: RunNames): T | string {
  if (name === null || name === undefined) return name;
  const at = names.resolve(name);
  return at === null ? name : names.name(at.store, at.runId);
}

/** Sorted, maybe turned around, then cut: `limit` keeps the first n. */
function arrange<T>(items: T[], reverse: boolean | undefined, limit: number | null | undefined): T[] {
  const ordered = reverse ? items.reverse() : items;
  return limit === null || limit === undefined ? ordered : ordered.slice(0, limit);
}

/**
 * The stores of one command, opened read-only. Every call reads one consistent state of the stores;
 * hooks given to a call replace the session's.
 */
export class Session {
  private readonly index: IndexChoice;
  /** Each store's runs, read once: a session lives for one read of its stores (withSession opens a new one to read again). */
  private runLists: ReadonlyArray<readonly StoreRun[]> | null = null;
  private runNames: RunNames | null = null;

  /**
   * `setNotices`: what choosing the stores set aside (a store named again, a directory entry that
   * cannot be read), reported with the stores' own notices.
   */
  constructor(
    readonly stores: readonly NamedStore[],
    private readonly options: SessionOptions = {},
    private readonly setNotices: readonly StoreNotice[] = [],
  ) {
    if (stores.length === 0) throw new RequestError('a session needs at least one store');
    this.index = options.index ?? {};
    if (stores.length > 1 && this.index !== false && this.index.path !== undefined && !isSharedIndex(this.index.path))
      throw new RequestError(
        '--index names one index file, which serves one store: leave it out with several stores (each has its own index)',
      );
  }

  private hooks(over: WorkHooks): WorkHooks {
    return { ...this.options, ...over };
  }

  private storeRuns(): ReadonlyArray<readonly StoreRun[]> {
    return (this.runLists ??= this.stores.map((s) => s.store.runs()));
  }

  private names(): RunNames {
    return (this.runNames ??= new RunNames(
      this.stores.map((s) => s.label),
      () => this.storeRuns(),
    ));
  }

  /**
   * Adds to the notices what reading every store's runs would add, without reading them where the
   * store can tell (noteRuns): a search or listing through the index needs none of them.
   */
  private noteRuns(): void {
    for (const s of this.stores) if (s.store.noteRuns) s.store.noteRuns();
    if (this.stores.some((s) => !s.store.noteRuns)) this.storeRuns();
  }

  /** Store `i`'s history; its runs, where it needs them (not through the index), are the session's. */
  private source(i: number, h: WorkHooks): HistorySource {
    return new HistorySource(this.stores[i]!.store, { onProgress: h.onProgress, runs: () => this.storeRuns()[i]! });
  }

  /** A bare run id that several stores hold names no run: say which qualified names do. */
  private unambiguous(name: string | null | undefined, names: RunNames): void {
    if (name === null || name === undefined) return;
    const forms = names.qualifiedForms(name);
    if (forms.length > 0) throw new RequestError(`run id '${name}' is in ${forms.length} stores: name one as ${forms.join(' or ')}`);
  }

  /** Every store's notices so far (what its reader skipped or read leniently), runs named as the session names them. */
  private notices(): Warning[] {
    const labels = this.labels();
    const several = this.stores.length > 1;
    const set: Warning[] = this.setNotices.map((n) => ({ kind: 'store-notice', notice: n.kind, runId: null, seq: null, detail: n.detail }));
    return set.concat(
      this.stores.flatMap((s, i) =>
        noticeWarnings(s.store, several ? s.label : undefined).map((w) => renameRun(w, (id) => qualifiedName(labels, i, id))),
      ),
    );
  }

  /** The tool names the runs mention (each run's latest snapshot, read as text: for shell completion), sorted, each once. */
  toolNames(): string[] {
    return [...new Set(this.stores.flatMap((s) => storeToolNames(s.store)))].sort();
  }

  /** The stores' labels, as the output names them (a server URL without its password). */
  labels(): string[] {
    return this.stores.map((s) => s.label);
  }

  runCount(): number {
    return this.stores.reduce((n, s) => n + s.store.runCount(), 0);
  }

  /** Every run, in corpus order (`started_at`, ties by store order, then each store's own order), named as the session names them. */
  runs(): StoreRun[] {
    const names = this.names();
    return mergeOrder(this.storeRuns(), (r) => r.startedAt).map(({ store, item }) => names.run(store, item));
  }

  /**
   * Brings the shared index at `url` (a `postgres://` URL) up to date with each store, one transaction
   * per store (see sidecar/shared/shared-index.ts): the one way the shared index is written. `rebuild`
   * lays each store's part out anew and builds it from the store.
   */
  syncIndex(
    url: string,
    hooks: WorkHooks = {},
    options: { readonly rebuild?: boolean } = {},
  ): Array<{ readonly label: string; readonly report: SyncReport }> {
    if (!isSharedIndex(url)) throw new RequestError('index sync writes a shared index: pass --index postgres://…');
    const h = this.hooks(hooks);
    return this.stores.map((s) => ({
      label: s.label,
      report: syncShared(s.store, url, {
        onProgress: h.onProgress,
        onWarning: h.onWarning,
        env: h.env,
        parallel: parallelOptionsFromEnv(h.env),
        rebuild: options.rebuild === true,
        ...(h.onBulkWrite ? { onBulkWrite: h.onBulkWrite } : {}),
      }),
    }));
  }

  /**
   * BM25 search with the reference's semantics. A conversation or run the stores lack is a
   * NotFoundError (carrying the reference's reply as `outcome`), never a quiet "no history".
   */
  search(request: SearchRequest, hooks: WorkHooks = {}): SearchOutcome {
    const parent = this.searchNames(request);
    const asked = request.filter && parent !== undefined ? { ...request, filter: { ...request.filter, parent } } : request;
    const found = withConversationMeta(searchStores(this.stores, searchOptions(asked), this.index, this.hooks(hooks)), this.stores);
    const outcome = withNotices(found, this.notices());
    if (outcome.missing) throw new NotFoundError(outcome.missing, outcome);
    return outcome;
  }

  /**
   * The search's `parent` as the session names it, after checking the run names the request holds.
   * Only a request that names a run reads every store's runs (a search through the index needs none of
   * them); otherwise each store tells, here as then, what reading them would have told (noteRuns).
   */
  private searchNames(request: SearchRequest): string | null | undefined {
    const parent = request.filter?.parent;
    if ((request.runId ?? null) === null && (parent ?? null) === null) {
      this.noteRuns();
      return parent;
    }
    const names = this.names();
    this.unambiguous(request.runId, names);
    this.unambiguous(parent, names);
    return shownName(parent, names);
  }

  /**
   * Runs with snapshot and message counts: each store's rows merged in corpus order, then sorted,
   * turned and cut. A conversation or `parent` no store holds is a NotFoundError (a typo is never an empty list).
   */
  listRuns(query: RunQuery = {}, hooks: WorkHooks = {}): RunListing {
    // every store's rows from one snapshot of a shared index (one connection)
    return sharedReads(() => this.runListing(query, hooks));
  }

  private runListing(query: RunQuery, hooks: WorkHooks): RunListing {
    const h = this.hooks(hooks);
    this.noteRuns();
    const names = this.names();
    this.unambiguous(query.parent, names);
    if (query.parent !== undefined) query = { ...query, parent: shownName(query.parent, names)! };
    const parent = query.parent === undefined ? null : names.resolve(query.parent);
    const sort = query.sort ?? DEFAULTS.runSort;
    // in corpus order each store need count only the runs that can be shown: the first (or last) `limit` of its own
    const ends = sort === DEFAULTS.runSort ? { reverse: query.reverse, limit: query.limit ?? null } : { reverse: false, limit: null };
    const perStore = this.stores.map((_, i): RunListing | null => {
      if (parent !== null && parent.store !== i) return null;
      const q: RunQuery = { ...query, sort: DEFAULTS.runSort, ...ends, ...(parent ? { parent: parent.runId } : {}) };
      // null: a conversation (or parent) this store lacks, nothing of it here
      const listing = runsOfStore(this.source(i, h), q, this.index, h);
      return listing && ends.reverse ? { ...listing, runs: listing.runs.reverse() } : listing;
    });
    if (perStore.every((l) => l === null)) {
      // every run, named, only to say what a conversation or parent that no store holds is close to
      const missing =
        (query.conversationId !== undefined
          ? scopeMiss(this.runs(), { scope: 'conversation', conversationId: query.conversationId, runId: null })
          : null) ??
        (query.parent !== undefined ? scopeMiss(this.runs(), { scope: 'all', conversationId: null, runId: query.parent }) : null);
      if (missing) throw new NotFoundError(missing);
    }
    // one store names its runs as the store does: its rows are the listing's as they are
    const merged =
      perStore.length === 1
        ? (perStore[0]?.runs ?? [])
        : mergeOrder(
            perStore.map((l) => l?.runs ?? []),
            (r) => r.run.startedAt,
          ).map(({ store, item }): RunSummary => ({ ...item, run: names.run(store, item.run) }));
    const rows = arrange(sortRuns(merged, sort), query.reverse, query.limit);
    const some = perStore.some((l) => l !== null && l.warnings.length > 0);
    const shown = some ? new Set(rows.map((r) => r.run.runId)) : null;
    const warnings = perStore.flatMap((l, i) =>
      (l?.warnings ?? [])
        .filter((w) => w.runId !== null && shown!.has(names.name(i, w.runId)))
        .map((w) => renameRun(w, (id) => names.qualified(i, id))),
    );
    return withNotices({ runs: rows, warnings }, this.notices());
  }

  /**
   * Conversations with their catalog metadata, runs, time span, searchable messages and agents: one row per conversation
   * of each store (a conversation id two stores share is two rows: their runs never share history),
   * merged by first start (ties by store order), then sorted, turned and cut.
   */
  listConversations(query: ConversationQuery = {}, hooks: WorkHooks = {}): ConversationListing {
    return sharedReads(() => this.conversationListing(query, hooks));
  }

  private conversationListing(query: ConversationQuery, hooks: WorkHooks): ConversationListing {
    const h = this.hooks(hooks);
    this.noteRuns();
    const names = this.names();
    const several = this.stores.length > 1;
    const perStore = this.stores.map((_, i) => conversationsOfStore(this.source(i, h), { sort: DEFAULTS.conversationSort }, this.index, h));
    const merged = mergeOrder(
      perStore.map((l) => l.conversations),
      (c) => c.firstStartedAt,
    ).map(({ store, item }): ConversationSummary => (several ? { ...item, store: this.stores[store]!.label } : item));
    // the catalog only for the rows shown (store/run ids: see withCatalog)
    const rows = withCatalog(
      arrange(sortConversations(merged, query.sort ?? DEFAULTS.conversationSort), query.reverse, query.limit),
      this.stores,
    );
    const key = (store: string | undefined, conversation: string | null | undefined): string => JSON.stringify([store, conversation]);
    const shown = new Set(rows.map((c) => key(c.store, c.conversationId)));
    const warnings = perStore.flatMap((l, i) => {
      if (l.warnings.length === 0) return [];
      const label = several ? this.stores[i]!.label : undefined;
      return l.warnings
        .filter((w) => w.runId !== null && l.conversationOf.has(w.runId) && shown.has(key(label, l.conversationOf.get(w.runId))))
        .map((w) => renameRun(w, (id) => names.qualified(i, id)));
    });
    return withNotices({ conversations: rows, warnings }, this.notices());
  }

  /**
   * The tools the scope's messages name: calls, returns, retries, runs, first and last seen, over the
   * union of the stores' corpora (a scope the stores lack is a NotFoundError, as for runs).
   */
  listTools(query: ToolQuery = {}, hooks: WorkHooks = {}): ToolListing {
    this.unambiguous(query.runId, this.names());
    return withNotices(listTools(this.stores, query, this.index, this.hooks(hooks)), this.notices());
  }

  /**
   * A run's replayed full record (or a window of it), numbered as search excerpts number it, the run
   * named as the session names it. A run the stores lack is a NotFoundError, an `at` past the end a PastEndError.
   */
  showRun(name: string, request: ShowRequest = {}, hooks: WorkHooks = {}): ShowView {
    const names = this.names();
    this.unambiguous(name, names);
    const at = names.resolve(name);
    if (at === null) throw new NotFoundError(scopeMiss(this.runs(), { scope: 'all', conversationId: null, runId: name })!);
    const source = this.source(at.store, this.hooks(hooks));
    let view: ShowView;
    try {
      view = showRun(source, at.runId, request);
    } catch (e) {
      throw e instanceof PastEndError ? new PastEndError(e.at, name, e.length) : e;
    }
    const named: ShowView = {
      ...view,
      summary: { ...view.summary, run: names.run(at.store, view.summary.run) },
      warnings: view.warnings.map((w) => renameRun(w, (id) => names.qualified(at.store, id))),
    };
    return withNotices(named, this.notices());
  }

  /**
   * The replayed records of the runs `selection` names, each message with its exact stored JSON text
   * (see api/export.ts). The runs are resolved now: a run or conversation the stores lack is a
   * NotFoundError before anything is replayed; a search is the search `search()` answers, and its hits
   * (in hit order, each run once) choose the runs. The records are replayed as the caller reads them.
   */
  exportRuns(selection: ExportSelection, hooks: WorkHooks = {}): ExportRuns {
    const names = this.names();
    let runs: StoreRun[];
    let outcome: SearchOutcome | null = null;
    if ('search' in selection) {
      outcome = this.search(selection.search, hooks);
      runs = outcome.kind === 'found' ? [...new Map(outcome.hits.map((h) => [h.run.runId, h.run])).values()] : [];
    } else if ('runId' in selection) {
      this.unambiguous(selection.runId, names);
      const at = names.resolve(selection.runId);
      if (at === null) throw new NotFoundError(scopeMiss(this.runs(), { scope: 'all', conversationId: null, runId: selection.runId })!);
      runs = [names.run(at.store, this.storeRuns()[at.store]!.find((r) => r.runId === at.runId)!)];
    } else if ('conversationId' in selection) {
      const all = this.runs();
      const miss = scopeMiss(all, { scope: 'conversation', conversationId: selection.conversationId, runId: null });
      if (miss) throw new NotFoundError(miss);
      runs = all.filter((r) => r.conversationId === selection.conversationId);
    } else runs = this.runs();
    const targets = runs.map((run): ExportTarget => {
      const at = names.resolve(run.runId)!;
      return { run, store: at.store, storeRunId: at.runId };
    });
    const stores = this.stores.map((s) => s.store);
    const rename = (w: Warning, store: number): Warning => renameRun(w, (id) => names.qualified(store, id));
    const progress = this.hooks(hooks).onProgress;
    return {
      runs,
      outcome,
      warnings: outcome?.warnings ?? this.notices(),
      records: () => exportRecords(targets, stores, rename, progress),
    };
  }

  /** True when no store changed under a read in place. */
  unchanged(): boolean {
    return this.stores.every((s) => s.store.unchanged());
  }

  close(): void {
    for (const s of this.stores) s.store.close();
  }
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
      // a reader's own failures already name it (store/attributed.ts); one that left no reader is
      // pinned on a store only when there is one to pin it on: with several, guessing blames the wrong one
      const err = opened.length === 1 ? opened[0]!.storeError(e) : null;
      throw err ?? e;
    } finally {
      for (const r of opened) r.close();
    }
  }
}

/** The stores `targets` name, each opened once, and what choosing them set aside. */
interface OpenedStores {
  readonly named: NamedStore[];
  readonly notices: StoreNotice[];
}

/**
 * What stands in for a store that cannot be opened: with a shared index (and no `--fresh`), its part
 * of the index (sidecar/shared/stand-in.ts), when the index holds it; otherwise nothing, and the
 * store's error stands.
 */
function standInFor(options: SessionOptions): ((label: string, e: StoreError) => StoreReader | null) | undefined {
  const index = options.index;
  if (index === undefined || index === false || index.path === undefined || !isSharedIndex(index.path) || index.fresh === true)
    return undefined;
  const url = index.path;
  return (label, e) => indexStandIn(url, label, e, options.env);
}

/**
 * Opens each store `targets` names into `opened` (as it opens, so that the caller closes them whatever
 * fails), each once: a path reaching a file already named is not opened (targetSet), and a store whose
 * identity is already open (the same server named two ways) is read once, with a notice naming both.
 */
function openStores(
  targets: string | readonly string[],
  stable: boolean,
  opened: StoreReader[],
  env: NodeJS.ProcessEnv | undefined,
  standIn?: (label: string, e: StoreError) => StoreReader | null,
): OpenedStores {
  const set = targetSet(typeof targets === 'string' ? [targets] : targets);
  const named: NamedStore[] = [];
  const notices = [...set.notices];
  const seen = new Map<string, string>();
  for (const label of set.targets) {
    let store: StoreReader;
    try {
      store = openStoreReader(label, { stable, env });
    } catch (e) {
      const instead = e instanceof StoreError ? (standIn?.(label, e) ?? null) : null;
      if (instead === null) throw e;
      store = instead;
    }
    opened.push(store);
    const was = seen.get(store.identity);
    if (was !== undefined) {
      notices.push({ kind: 'same-store', runId: null, seq: null, detail: sameStore(store.label, was) });
      continue;
    }
    seen.set(store.identity, store.label);
    // the reader's label: a server URL's password shown as ***, never as typed
    named.push({ label: store.label, store });
  }
  return { named, notices };
}

/**
 * Opens the stores `targets` names, read-only and leaving no trace: SQLite files, FileStepStore
 * directories, `postgresql://` and `redis://` URLs, and directories of SQLite files (each of its `.db`
 * files a store; see storeTargets). The same store named twice is opened once, under its first label.
 * Close the session when done.
 */
export function openSession(targets: string | readonly string[], options: SessionOptions & { readonly stable?: boolean } = {}): Session {
  const opened: StoreReader[] = [];
  try {
    const { named, notices } = openStores(targets, options.stable ?? false, opened, options.env, standInFor(options));
    return new Session(named, options, notices);
  } catch (e) {
    for (const r of opened) r.close();
    throw e;
  }
}

/** The stores `targets` names, read consistently (see readConsistently) through a session, and closed after `fn`. */
export async function withSession<T>(
  targets: string | readonly string[],
  options: SessionOptions,
  fn: (session: Session) => T | Promise<T>,
): Promise<T> {
  let session: Session | null = null;
  // a shared index: one connection and one snapshot for the whole command (a stand-in's runs and the search alike)
  const done = holdSharedReads();
  const index = options.index;
  // its connection is made while the stores are opened
  if (index !== undefined && index !== false && index.path !== undefined) ReadSession.start(index.path, options.env);
  try {
    return await readConsistently(
      (stable, opened) => {
        const { named, notices } = openStores(targets, stable, opened, options.env, standInFor(options));
        session = new Session(named, options, notices);
      },
      () => fn(session!),
    );
  } finally {
    done();
  }
}
