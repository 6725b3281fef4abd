import { HistorySource, type ProgressFn } from '../history/source.js';
import { DigestCorpusSource } from '../search/digest-source.js';
import type { CorpusSource } from '../search/corpus.js';
import { MemberError, UnionCorpusSource } from '../search/union.js';
import { ForeignError } from '../sidecar/errors.js';
import { search, type HitFilter, type Scope, type SearchContext, type SearchOptions, type SearchOutcome } from '../search/search.js';
import { withIndex, type IndexChoice } from '../sidecar/with-index.js';
import type { IndexStanding } from '../sidecar/shared/standing.js';
import { parallelOptionsFromEnv } from '../parallel/threads.js';
import type { StoreReader } from '../store/reader.js';
import { isTokenizer, queryTokensWith, tokenizerNamed, TOKENIZERS, type TokenizerName } from '../text/tokenizer.js';
import { RequestError } from './errors.js';
import type { HitSort } from '../search/order.js';

export type { ProgressFn } from '../history/source.js';
export { isRole, ROLES, type Role } from '../render/roles.js';
export { scopeMissMessage, type ScopeMiss } from '../search/scope.js';
export type {
  ExcerptLine,
  Hit,
  HitFilter,
  MatchCounts,
  RunMatches,
  Scope,
  SearchContext,
  SearchOptions,
  SearchOutcome,
} from '../search/search.js';
export { GlobSet } from '../text/glob.js';
export { tokenize } from '../text/tokenize.js';
export { isTokenizer, tokenizeWith, tokenizerNamed, TOKENIZERS, type Tokenizer, type TokenizerName } from '../text/tokenizer.js';
export { isEmptyFilter } from '../search/filters.js';
export type { HitSort } from '../search/order.js';
export type { Explain, TermExplain } from '../search/explain.js';
export type { HitLocation } from '../search/collapse.js';
import { DEFAULTS } from './defaults.js';
import { checkSearchOptions } from './validate.js';

/** A search as a library caller asks for it: what is left out takes its value from {@link DEFAULTS}. */
export interface SearchRequest {
  readonly query: string;
  /** `conversation` searches `conversationId`'s runs (the reference's default scope); `all` every run. */
  readonly scope: Scope;
  readonly conversationId?: string | null;
  /** Search only this run's full record (no attribution). */
  readonly runId?: string | null;
  readonly maxMatches?: number;
  readonly contextLines?: number;
  readonly bm25?: { readonly k1?: number; readonly b?: number };
  /** Which ranked messages may become hits (the statistics stay those of the whole scope). */
  readonly filter?: HitFilter;
  /** Fold hits whose text repeats a better hit's into it (see SearchOptions.collapse). */
  readonly collapse?: boolean;
  /** Give each hit its terms' parts of the score. */
  readonly explain?: boolean;
  /** The order of the hits shown (default: rank); -m still picks the best. */
  readonly sort?: HitSort;
  readonly reverse?: boolean;
  /** `cjk` ranks, windows and highlights with the CJK tokenizer (off-parity); default: the reference's. */
  readonly tokenizer?: TokenizerName;
}

/** The request with every default filled in, checked as the reference checks its parameters. */
export function searchOptions(r: SearchRequest): SearchOptions {
  // a JavaScript caller can pass any string: an unknown tokenizer must not rank as the default silently
  if (r.tokenizer !== undefined && !isTokenizer(r.tokenizer)) {
    throw new RequestError(`tokenizer must be one of ${TOKENIZERS.join(', ')}, got ${JSON.stringify(r.tokenizer)}.`);
  }
  const options: SearchOptions = {
    query: r.query,
    scope: r.scope,
    conversationId: r.conversationId ?? null,
    runId: r.runId ?? null,
    maxMatches: r.maxMatches ?? DEFAULTS.maxMatches,
    contextLines: r.contextLines ?? DEFAULTS.contextLines,
    bm25: { k1: r.bm25?.k1 ?? DEFAULTS.bm25.k1, b: r.bm25?.b ?? DEFAULTS.bm25.b },
    ...(r.filter ? { filter: r.filter } : {}),
    ...(r.collapse ? { collapse: true } : {}),
    ...(r.explain ? { explain: true } : {}),
    ...(r.sort === 'time' ? { sort: 'time' as const } : {}),
    ...(r.reverse ? { reverse: true } : {}),
    ...(r.tokenizer === 'cjk' ? { tokenizer: 'cjk' as const } : {}),
  };
  checkSearchOptions(options);
  return options;
}

/** What a long search reports while it runs. */
export interface WorkHooks {
  /** Replay or index-build progress: `done` of `total` runs. Keep it cheap. */
  readonly onProgress?: ProgressFn;
  /** Told when the index cannot be used and the store is replayed instead (same results). */
  readonly onFallback?: (reason: string) => void;
  /** Told of what the index repaired or rebuilt on the way (one line each). */
  readonly onWarning?: (message: string) => void;
  /** Told how a shared index stands against each store it answers for (null: it did not answer after all): JSON's `index`. */
  readonly onIndexStanding?: (store: string, standing: IndexStanding | null) => void;
  /**
   * Told before an index is written in bulk (a build, or an update that rewrites many runs), possibly
   * more than once: the process's owner may tune its heap for it (bin/convsearch.js sets V8's heap
   * growth then). A library never sets process-wide flags itself.
   */
  readonly onBulkWrite?: () => void;
  /**
   * The environment the work reads: the index's default place ($XDG_CACHE_HOME, $HOME),
   * CONVSEARCH_THREADS, and (given when the stores open) libpq's variables. Default: the process's.
   */
  readonly env?: NodeJS.ProcessEnv;
}

/** A store of a session: its label (as the user named it, or as its directory lists it) and its reader. */
export interface NamedStore {
  readonly label: string;
  readonly store: StoreReader;
}

/**
 * One search over a session's stores as one corpus (see search/union.ts): each store through its own
 * index (or replayed, when `index` is false or its index cannot be used; same outcome either way), with
 * its own attribution; with several stores, hits and runs name their store, and run ids two stores
 * share are qualified.
 */
export function searchStores(
  stores: readonly NamedStore[],
  options: SearchOptions,
  index: IndexChoice,
  hooks: WorkHooks = {},
): SearchOutcome {
  const tok = tokenizerNamed(options.tokenizer);
  const terms = queryTokensWith(tok, options.query);
  const replayed = (s: NamedStore): CorpusSource =>
    new DigestCorpusSource(new HistorySource(s.store, { onProgress: hooks.onProgress }), terms, parallelOptionsFromEnv(hooks.env));
  // the index holds the default tokenizer's postings only: another tokenizer counts over a replay
  return withUnion(stores, tok.parity ? index : false, hooks, replayed, (union, ctx) => search(union, options, ctx), terms);
}

/**
 * Runs `fn` over the union of the stores' corpus sources: each store's index opened in turn (`fn` runs
 * inside the last), a store whose index cannot be used read through `replayed`. What fails is handled
 * by the guard of the store it belongs to, and passed on by the others. `ctx` dates messages by their
 * snapshot in their own store. `fn` answers from the sources alone: when every source before the last
 * store's is an index, it may run ahead over that store's index while the store's stamp is read, and
 * again if the index then changed (IndexOptions.answerAhead).
 */
export function withUnion<T>(
  stores: readonly NamedStore[],
  index: IndexChoice,
  hooks: WorkHooks,
  replayed: (s: NamedStore) => CorpusSource,
  fn: (union: UnionCorpusSource, ctx: SearchContext) => T,
  terms: readonly string[] = [],
): T {
  const run = (sources: readonly CorpusSource[]): T => {
    const union = new UnionCorpusSource(stores.map((s, i) => ({ label: s.label, source: sources[i]! })));
    const ctx: SearchContext = {
      snapshotTime: (name, seq) => {
        const at = union.names.resolve(name);
        return at === null ? null : stores[at.store]!.store.snapshotTime(at.runId, seq);
      },
    };
    return fn(union, ctx);
  };
  /** `replays`: some source of `sources` is a replay (run twice, it would read its store twice). */
  const open = (i: number, sources: readonly CorpusSource[], replays = false): T => {
    if (i === stores.length) return run(sources);
    const s = stores[i]!;
    if (index === false) return open(i + 1, [...sources, replayed(s)], true);
    return withIndex(
      s.store,
      // an index file named by path serves one store: the session refuses it with several; a shared
      // index reads ahead what every store needs for these terms (sidecar/shared/read-session.ts)
      { ...index, ...hooks, peers: stores.map((p) => p.store), terms, answerAhead: i === stores.length - 1 && !replays },
      (source) => {
        try {
          return open(i + 1, [...sources, source], replays);
        } catch (e) {
          const carried = e instanceof ForeignError ? e.inner : e;
          if (carried instanceof MemberError && carried.store === i) throw carried.inner;
          throw e instanceof ForeignError ? e : new ForeignError(e);
        }
      },
      () => open(i + 1, [...sources, replayed(s)], true),
    );
  };
  try {
    return open(0, []);
  } catch (e) {
    throw unwrap(e);
  }
}

/** The error a store raised, out of the wrappers that carried it past the other stores' guards. */
function unwrap(e: unknown): unknown {
  let x = e;
  for (;;) {
    if (x instanceof ForeignError || x instanceof MemberError) x = x.inner;
    else return x;
  }
}
