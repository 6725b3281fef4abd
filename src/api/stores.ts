/**
 * Several stores read as one (`--db` given more than once, or a directory of SQLite files): search over
 * the union of their corpora (search/union.ts), the `runs` listing and `show`. Each store keeps its own
 * replay, index and attribution; runs carry their store's label, and run ids two stores share are
 * qualified `<label>:<run-id>` (accepted back by `--run`, `--parent` and `show`).
 */
import { DEFAULTS } from './defaults.js';
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { HistorySource, renameRun } from '../history/source.js';
import { storeToolNames } from '../history/tool-names.js';
import { mergeOrder, RunNames } from '../search/union.js';
import { scopeMiss } from '../search/scope.js';
import type { SearchOutcome } from '../search/search.js';
import type { IndexChoice } from '../sidecar/with-index.js';
import type { StoreRun } from '../store/reader.js';
import { holdsRuns, openStoreReader } from '../store/open-reader.js';
import { RequestError } from './errors.js';
import {
  listConversations,
  listRuns,
  sortConversations,
  sortRuns,
  type ConversationListing,
  type ConversationQuery,
  type ConversationSummary,
  type RunListing,
  type RunQuery,
  type RunSummary,
} from './listings.js';
import { noticeWarnings, showWithNotices, withNotices, type Warning } from './warnings.js';
import { searchOptions, searchStores, type NamedStore, type SearchRequest, type WorkHooks } from './search.js';
import { readConsistently, type SessionOptions } from './session.js';
import { showRun, type ShowRequest, type ShowResult } from './show.js';
import { listToolsOfStores, type ToolListing, type ToolQuery } from './tools.js';

/**
 * The stores a `--db` value names: a directory whose entries include `.db` files and no FileStepStore
 * run (no `<name>/run.json`, no `media/`) is a set of SQLite stores, each `.db` file one (sorted by
 * name, labelled by its path); anything else is one store, labelled as given.
 */
export function expandTarget(target: string): string[] {
  let names: string[];
  try {
    if (!statSync(target).isDirectory()) return [target];
    names = readdirSync(target).sort();
  } catch {
    return [target];
  }
  const dbs = names.filter((n) => n.endsWith('.db') && isFile(join(target, n)));
  return holdsRuns(target) || dbs.length === 0 ? [target] : dbs.map((n) => join(target, n));
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** A run named either way (bare, or `<label>:<run-id>` even where no other store holds the id) as the union shows it. */
function shownName<T extends string | null | undefined>(name: T, names: RunNames): T | string {
  if (name === null || name === undefined) return name;
  const at = names.resolve(name);
  return at === null ? name : names.name(at.store, at.runId);
}

/**
 * The stores `targets` name, each once: directories of SQLite files expanded (see expandTarget), and a
 * path named twice (`a.db`, `./a.db`, a symlink to it) kept once, under its first label.
 */
export function storeTargets(targets: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of targets.flatMap(expandTarget)) {
    let key = t;
    try {
      key = realpathSync(t);
    } catch {
      // a URL, or a path that does not exist: opening says what it is
    }
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(t);
  }
  return out;
}

/** Several stores opened read-only, and what can be asked of them together. */
export class StoreSet {
  private readonly index: IndexChoice;
  /** Each store's runs, read once: a set lives for one read of its stores (withStores opens a new one to read again). */
  private runLists: ReadonlyArray<readonly StoreRun[]> | null = null;
  private runNames: RunNames | null = null;

  constructor(
    readonly stores: readonly NamedStore[],
    private readonly options: SessionOptions = {},
  ) {
    this.index = options.index ?? {};
    // one index file cannot answer for several stores
    if (this.index !== false && this.index.path !== undefined)
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
      this.storeRuns(),
    ));
  }

  /** A bare run id that several stores hold names no run: say which qualified names do. */
  private unambiguous(name: string | null | undefined, names: RunNames): void {
    if (name === null || name === undefined) return;
    const forms = names.qualifiedForms(name);
    if (forms.length > 0) throw new RequestError(`run id '${name}' is in ${forms.length} stores: name one as ${forms.join(' or ')}`);
  }

  /** The tool names every store's runs mention (for shell completion), sorted, each once. */
  toolNames(): string[] {
    return [...new Set(this.stores.flatMap((s) => storeToolNames(s.store)))].sort();
  }

  runCount(): number {
    return this.stores.reduce((n, s) => n + s.store.runCount(), 0);
  }

  /** Every run of every store, in union order, named as the union names them. */
  runs(): StoreRun[] {
    const names = this.names();
    return mergeOrder(this.storeRuns(), (r) => r.startedAt).map(({ store, item }) => names.run(store, item));
  }

  search(request: SearchRequest, hooks: WorkHooks = {}): SearchOutcome {
    const names = this.names();
    this.unambiguous(request.runId, names);
    this.unambiguous(request.filter?.parent, names);
    const parent = shownName(request.filter?.parent, names);
    const asked = request.filter && parent !== undefined ? { ...request, filter: { ...request.filter, parent } } : request;
    return withNotices(searchStores(this.stores, searchOptions(asked), this.index, this.hooks(hooks)), this.notices());
  }

  /**
   * The `runs` listing over every store: rows merged in union order, then sorted, turned and cut as for
   * one store. A conversation or `parent` missing from every store is `missing`, as for one store.
   */
  listRuns(query: RunQuery = {}, hooks: WorkHooks = {}): RunListing {
    const h = this.hooks(hooks);
    const names = this.names();
    this.unambiguous(query.parent, names);
    if (query.parent !== undefined) query = { ...query, parent: shownName(query.parent, names)! };
    const all = this.runs();
    const missing =
      (query.conversationId !== undefined
        ? scopeMiss(all, { scope: 'conversation', conversationId: query.conversationId, runId: null })
        : null) ?? (query.parent !== undefined ? scopeMiss(all, { scope: 'all', conversationId: null, runId: query.parent }) : null);
    if (missing) return { runs: [], warnings: [], missing };
    const parent = query.parent === undefined ? null : names.resolve(query.parent);
    const perStore = this.stores.map((s, i): RunListing | null => {
      if (parent !== null && parent.store !== i) return null;
      const source = new HistorySource(s.store, { onProgress: h.onProgress });
      const q: RunQuery = { ...query, sort: DEFAULTS.runSort, reverse: false, limit: null, ...(parent ? { parent: parent.runId } : {}) };
      // a conversation this store lacks: nothing of it here
      if (q.conversationId !== undefined && !this.storeRuns()[i]!.some((r) => r.conversationId === q.conversationId)) return null;
      return listRuns(source, q, this.index, h);
    });
    const merged = mergeOrder(
      perStore.map((l) => l?.runs ?? []),
      (r) => r.run.startedAt,
    ).map(({ store, item }): RunSummary => ({ ...item, run: names.run(store, item.run) }));
    let rows = sortRuns(merged, query.sort ?? DEFAULTS.runSort);
    if (query.reverse) rows = rows.reverse();
    if ((query.limit ?? null) !== null) rows = rows.slice(0, query.limit!);
    const shown = new Set(rows.map((r) => r.run.runId));
    const warnings = perStore.flatMap((l, i) =>
      (l?.warnings ?? []).map((w) => renameRun(w, (id) => names.name(i, id))).filter((w) => w.runId !== null && shown.has(w.runId)),
    );
    return withNotices({ runs: rows, warnings, missing: null }, this.notices());
  }

  /** The `tools` listing over the union of the stores' corpora (see listToolsOfStores). */
  listTools(query: ToolQuery = {}, hooks: WorkHooks = {}): ToolListing {
    this.unambiguous(query.runId, this.names());
    return withNotices(listToolsOfStores(this.stores, query, this.index, this.hooks(hooks)), this.notices());
  }

  /**
   * The `conversations` listing over every store: one row per conversation of each store (a conversation
   * id two stores share is two rows: their runs never share history), merged by first start (ties by
   * store order), then sorted, turned and cut as for one store.
   */
  listConversations(query: ConversationQuery = {}, hooks: WorkHooks = {}): ConversationListing {
    const h = this.hooks(hooks);
    const names = this.names();
    const perStore = this.stores.map((s) =>
      listConversations(new HistorySource(s.store, { onProgress: h.onProgress }), { sort: DEFAULTS.conversationSort }, this.index, h),
    );
    const merged = mergeOrder(
      perStore.map((l) => l.conversations),
      (c) => c.firstStartedAt,
    ).map(({ store, item }): ConversationSummary => ({ ...item, store: this.stores[store]!.label }));
    let rows = sortConversations(merged, query.sort ?? DEFAULTS.conversationSort);
    if (query.reverse) rows = rows.reverse();
    if ((query.limit ?? null) !== null) rows = rows.slice(0, query.limit!);
    const key = (store: string | undefined, conversation: string | null | undefined): string => JSON.stringify([store, conversation]);
    const shown = new Set(rows.map((c) => key(c.store, c.conversationId)));
    const warnings = perStore.flatMap((l, i) => {
      if (l.warnings.length === 0) return [];
      const conversationOf = new Map(this.storeRuns()[i]!.map((r) => [r.runId, r.conversationId]));
      return l.warnings
        .filter(
          (w) => w.runId !== null && conversationOf.has(w.runId) && shown.has(key(this.stores[i]!.label, conversationOf.get(w.runId))),
        )
        .map((w) => renameRun(w, (id) => names.name(i, id)));
    });
    return withNotices({ conversations: rows, warnings }, this.notices());
  }

  /** A run's record, the run named as the union names it (`<label>:<run-id>` where two stores share the id). */
  showRun(name: string, request: ShowRequest = {}, hooks: WorkHooks = {}): ShowResult {
    const names = this.names();
    this.unambiguous(name, names);
    const at = names.resolve(name);
    if (at === null) return { kind: 'no-run', missing: scopeMiss(this.runs(), { scope: 'all', conversationId: null, runId: name })! };
    const source = new HistorySource(this.stores[at.store]!.store, { onProgress: this.hooks(hooks).onProgress });
    const shown = showRun(source, at.runId, request);
    if (shown.kind !== 'shown') return shown;
    const view = shown.view;
    const named: ShowResult = {
      kind: 'shown',
      view: {
        ...view,
        summary: { ...view.summary, run: names.run(at.store, view.summary.run) },
        warnings: view.warnings.map((w) => renameRun(w, (id) => names.name(at.store, id))),
      },
    };
    return showWithNotices(named, this.notices());
  }

  /** Every store's notices so far, runs named as the union names them, the store named in each. */
  private notices(): Warning[] {
    const names = this.names();
    return this.stores.flatMap((s, i) => noticeWarnings(s.store, s.label).map((w) => renameRun(w, (id) => names.name(i, id))));
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
 * Opens every store `targets` name (directories of SQLite files expanded, see expandTarget), runs `fn`
 * and closes them, whatever happens; like withSession, a read that a writer changed under it runs again
 * on stable copies. Targets naming the same store (same identity) are one store, the first label kept.
 */
export async function withStores<T>(
  targets: readonly string[],
  options: SessionOptions,
  fn: (stores: StoreSet) => T | Promise<T>,
): Promise<T> {
  const labels = storeTargets(targets);
  let set: StoreSet | null = null;
  return readConsistently(
    (stable, opened) => {
      const named: NamedStore[] = [];
      const seen = new Set<string>();
      for (const label of labels) {
        const store = openStoreReader(label, { stable });
        opened.push(store);
        // the same store named twice (a.db, ./a.db) is searched once
        if (seen.has(store.identity)) continue;
        seen.add(store.identity);
        named.push({ label, store });
      }
      set = new StoreSet(named, options);
    },
    () => fn(set!),
  );
}
