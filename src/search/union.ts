/**
 * Several stores searched as one corpus. Each store keeps its own corpus source (its replay or its
 * index, its own cross-run attribution: runs of different stores never share history); the union only
 * interleaves their sections and adds up their term statistics. Documents are disjoint, so N, the total
 * length and each term's df are sums, and every score equals the score in one store holding all the
 * runs with attribution per store.
 *
 * Order: sections merge by `started_at` (as stored text), ties by store order (the order the stores
 * were named); within a store, its own corpus order is kept.
 *
 * Names: every run of the union carries `store` (its store's label). A run id held by two or more
 * stores is qualified as `<label>:<run-id>` (its `parentRunId` too when that id is shared), and the
 * qualified form is what the union's scope accepts back (for any run, shared or not); an id held by one
 * store is shown as it is.
 */
import { renameRun, type Warning } from '../history/source.js';
import type { RenderedMessage } from '../render/record.js';
import type { PartRole } from '../render/roles.js';
import type { StoreRun } from '../store/reader.js';
import type { TermStats } from './bm25.js';
import {
  DocumentIds,
  type Corpus,
  type CorpusNeeds,
  type CorpusSource,
  type DocumentFacts,
  type SectionView,
  type Window,
} from './corpus.js';
import { textKey } from './digest.js';
import type { ScopeFilter } from './scope.js';
import { TermStatsBuilder } from './term-stats.js';
import { containsPhrases } from './filters.js';
import { tokenizerNamed, type Tokenizer } from '../text/tokenizer.js';

/** An error raised by one store's corpus within a union: `store` says whose (see api searchStores). */
export class MemberError extends Error {
  constructor(
    readonly store: number,
    readonly inner: unknown,
  ) {
    super(inner instanceof Error ? inner.message : String(inner));
  }
}

/** Runs `fn` for store `store`, tagging what it throws with the store. */
function guard<T>(store: number, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw e instanceof MemberError ? e : new MemberError(store, e);
  }
}

/** One store of a union: its label (what the user named) and its corpus source. */
export interface UnionMember {
  readonly label: string;
  readonly source: CorpusSource;
}

/** Run `runId` of store `store` as a warning names it (labels alone tell): with several stores always qualified, so that it names its store. */
export function qualifiedName(labels: readonly string[], store: number, runId: string): string {
  return labels.length > 1 ? `${labels[store]}:${runId}` : runId;
}

/** How run ids read across the stores of a union: which are shared, and how to qualify and resolve them. */
export class RunNames {
  /** Run id → the indexes of the stores holding it: made when first asked (see shared). */
  private holding: Map<string, number[]> | null = null;

  /** `runsByStore` is asked only when an id must be looked up among the stores' runs (a session of one store that names no run never reads them). */
  constructor(
    readonly labels: readonly string[],
    private readonly runsByStore: () => ReadonlyArray<readonly StoreRun[]>,
  ) {}

  private get holders(): Map<string, number[]> {
    if (this.holding === null) {
      const holders = new Map<string, number[]>();
      this.runsByStore().forEach((runs, i) => {
        for (const r of runs) {
          const h = holders.get(r.runId);
          if (!h) holders.set(r.runId, [i]);
          else if (h[h.length - 1] !== i) h.push(i);
        }
      });
      this.holding = holders;
    }
    return this.holding;
  }

  shared(runId: string): boolean {
    // one store holds each of its runs once: a store-wide search of one store never makes the map
    // (at 50k runs, a Map of 50k entries and an array each)
    return this.labels.length > 1 && (this.holders.get(runId)?.length ?? 0) > 1;
  }

  /** The qualified names of a bare id that several stores hold (what to say instead of "no such run"); empty otherwise. */
  qualifiedForms(runId: string): string[] {
    const h = this.holders.get(runId) ?? [];
    return h.length > 1 ? h.map((i) => `${this.labels[i]}:${runId}`) : [];
  }

  /** The id as the union shows it: qualified when another store holds it too. */
  name(store: number, runId: string): string {
    return this.shared(runId) ? `${this.labels[store]}:${runId}` : runId;
  }

  /** The id as a warning names it: with several stores always qualified, so that it names its store. */
  qualified(store: number, runId: string): string {
    return qualifiedName(this.labels, store, runId);
  }

  /** The run of store `store` as the union shows it. */
  run(store: number, r: StoreRun): StoreRun {
    // a union of one store names its runs as the store does
    if (this.labels.length === 1) return r;
    const parent = r.parentRunId === null ? null : this.name(store, r.parentRunId);
    // every field named (no spread: this runs for every run of a store-wide search), in StoreRun's order
    return {
      runId: this.name(store, r.runId),
      conversationId: r.conversationId,
      parentRunId: parent,
      agentName: r.agentName,
      startedAt: r.startedAt,
      rowid: r.rowid,
      store: this.labels[store]!,
      storeRunId: r.runId,
    };
  }

  /** Which store holds the run the union names `name`, and its id there; null when none does (or a bare shared id). */
  resolve(name: string): { store: number; runId: string } | null {
    const h = this.holders.get(name);
    if (h && h.length === 1) return { store: h[0]!, runId: name };
    // qualified: the longest label that prefixes it (labels may hold ':')
    let best: { store: number; runId: string } | null = null;
    this.labels.forEach((label, i) => {
      if (!name.startsWith(`${label}:`)) return;
      const runId = name.slice(label.length + 1);
      if (!this.holders.get(runId)?.includes(i)) return;
      if (best === null || this.labels[best.store]!.length < label.length) best = { store: i, runId };
    });
    return best;
  }
}

/** Lists each in corpus order merged into one: by `started_at` (as stored text), ties by list order. */
export function mergeOrder<T>(
  lists: ReadonlyArray<readonly T[]>,
  startedAt: (x: T) => string,
): Array<{ store: number; item: T; index: number }> {
  const at = lists.map(() => 0);
  // each list's next key, read once (this runs over every run of a store-wide search); null: the list is done
  const heads = lists.map((l) => (l.length > 0 ? startedAt(l[0]!) : null));
  const out: Array<{ store: number; item: T; index: number }> = [];
  for (;;) {
    let pick = -1;
    let best = '';
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i]!;
      if (h !== null && (pick < 0 || h < best)) {
        pick = i;
        best = h;
      }
    }
    if (pick < 0) return out;
    const list = lists[pick]!;
    const index = at[pick]!++;
    out.push({ store: pick, item: list[index]!, index });
    heads[pick] = index + 1 < list.length ? startedAt(list[index + 1]!) : null;
  }
}

/** The union of the members' corpus sources. */
export class UnionCorpusSource implements CorpusSource {
  readonly names: RunNames;
  /** Every member's runs, read when first asked: a store-wide search through an index reads only its hits' runs. */
  private runLists: ReadonlyArray<readonly StoreRun[]> | null = null;

  constructor(readonly members: readonly UnionMember[]) {
    this.names = new RunNames(
      members.map((m) => m.label),
      () => this.byStore(),
    );
  }

  private byStore(): ReadonlyArray<readonly StoreRun[]> {
    return (this.runLists ??= this.members.map((m, i) => guard(i, () => m.source.runs())));
  }

  runs(): readonly StoreRun[] {
    return mergeOrder(this.byStore(), (r) => r.startedAt).map(({ store, item }) => this.names.run(store, item));
  }

  corpus(scope: ScopeFilter, needs?: CorpusNeeds): Corpus {
    let target: { store: number; runId: string } | null = null;
    if (scope.runId !== null) {
      target = this.names.resolve(scope.runId);
      // a run no store holds (or a bare shared id): an empty corpus, which reads as "no such run"
      if (target === null) return new UnionCorpus([], this.names);
    }
    const parts = this.members.map((m, i) => {
      if (target !== null && target.store !== i) return null;
      return guard(i, () => m.source.corpus(target === null ? scope : { ...scope, runId: target.runId }, needs));
    });
    return new UnionCorpus(parts, this.names, needs?.phrases ?? [], tokenizerNamed(needs?.tokenizer));
  }
}

class UnionCorpus implements Corpus {
  readonly sections: SectionView[] = [];
  readonly warnings: Warning[] = [];
  readonly scopeRuns: number;
  /** Union section → (store, the store's section); empty for a union of one store (`one`). */
  private readonly origin: Array<{ store: number; section: number }> = [];
  /**
   * A union of one store: its sections are the union's, in its order and under its names, so each
   * section and document is the store's own (no mapping made per run: a store-wide search of 50k runs
   * made 100k objects and two document maps for it).
   */
  private readonly one: boolean;

  constructor(
    private readonly stores: ReadonlyArray<Corpus | null>,
    names: RunNames,
    private readonly phrases: ReadonlyArray<readonly string[]> = [],
    private readonly tok: Tokenizer = tokenizerNamed(undefined),
  ) {
    this.scopeRuns = stores.reduce((n, c) => n + (c?.scopeRuns ?? 0), 0);
    this.one = stores.length === 1 && stores[0] !== null && names.labels.length === 1;
    if (this.one) this.sections = stores[0]!.sections.slice();
    else
      for (const { store, item, index } of mergeOrder(
        stores.map((c) => c?.sections ?? []),
        (s) => s.run.startedAt,
      )) {
        this.sections.push({ run: names.run(store, item.run), start: item.start, end: item.end });
        this.origin.push({ store, section: index });
      }
    stores.forEach((c, store) => {
      for (const w of c?.warnings ?? []) this.warnings.push(renameRun(w, (id) => names.qualified(store, id)));
    });
  }

  /** Store `store`'s corpus, every call into it tagged with the store when it throws. */
  private readonly guarded = new Map<number, Corpus>();

  private corpusOf(store: number): Corpus {
    let g = this.guarded.get(store);
    if (!g) {
      const c = this.stores[store]!;
      g = new Proxy(c, {
        get: (target, key) => {
          const v = Reflect.get(target, key) as unknown;
          return typeof v === 'function'
            ? (...args: unknown[]) => guard(store, () => (v as (...a: unknown[]) => unknown).apply(target, args))
            : v;
        },
      });
      this.guarded.set(store, g);
    }
    return g;
  }

  private at(section: number): { corpus: Corpus; section: number } {
    if (this.one) return { corpus: this.corpusOf(0), section };
    const o = this.origin[section]!;
    return { corpus: this.corpusOf(o.store), section: o.section };
  }

  termStats(terms: readonly string[]): TermStats {
    // the store's documents are the union's, numbered alike
    if (this.one) return this.corpusOf(0).termStats(terms);
    const ids = new DocumentIds(this.sections);
    const builder = new TermStatsBuilder(terms, ids.count);
    // each store's section → the union's, to map the store's document ids onto the union's
    const toUnion = this.stores.map((c) => new Int32Array(c?.sections.length ?? 0));
    this.origin.forEach((o, u) => {
      toUnion[o.store]![o.section] = u;
    });
    let totalLength = 0;
    this.stores.forEach((c, store) => {
      if (c === null || c.sections.length === 0) return;
      const stats = this.corpusOf(store).termStats(terms);
      totalLength += stats.totalLength;
      const local = new DocumentIds(c.sections);
      const sections = toUnion[store]!;
      guard(store, () => {
        // only the documents holding a query term: the only ones whose length BM25 (and explain) reads
        terms.forEach((t, k) => {
          const { docs, tfs } = stats.postings(t);
          for (let i = 0; i < docs.length; i++) {
            const { section, position } = local.locate(docs[i]!);
            const doc = ids.id(sections[section]!, position);
            builder.add(k, doc, tfs[i]!);
            builder.setLength(doc, stats.docLength(docs[i]!));
          }
        });
      });
    });
    return builder.finish(totalLength);
  }

  document(section: number, position: number): RenderedMessage {
    const a = this.at(section);
    return a.corpus.document(a.section, position);
  }

  /** Each store's windows told to its corpus (a shared index's read them all in one round trip: indexed-source.ts). */
  prefetch(windows: readonly Window[]): void {
    if (this.one) {
      this.corpusOf(0).prefetch?.(windows);
      return;
    }
    const byStore = new Map<number, Window[]>();
    for (const w of windows) {
      const o = this.origin[w.section]!;
      let list = byStore.get(o.store);
      if (list === undefined) byStore.set(o.store, (list = []));
      list.push({ section: o.section, start: w.start, end: w.end });
    }
    for (const [store, list] of byStore) this.corpusOf(store).prefetch?.(list);
  }

  parts(section: number, position: number): readonly PartRole[] {
    const a = this.at(section);
    return a.corpus.parts ? a.corpus.parts(a.section, position) : a.corpus.document(a.section, position).parts;
  }

  // keys of one store's corpus and another's must compare: the digest's key of the text, whatever each store keeps
  textKey(section: number, position: number): string {
    const a = this.at(section);
    return a.corpus.textKey ? a.corpus.textKey(a.section, position) : textKey(a.corpus.document(a.section, position).text);
  }

  facts(section: number, position: number): DocumentFacts {
    const a = this.at(section);
    return a.corpus.facts ? a.corpus.facts(a.section, position) : a.corpus.document(a.section, position);
  }

  sectionFacts(section: number): readonly DocumentFacts[] {
    const a = this.at(section);
    if (a.corpus.sectionFacts) return a.corpus.sectionFacts(a.section);
    const s = this.sections[section]!;
    const out: DocumentFacts[] = [];
    for (let p = s.start; p < s.end; p++) out.push(this.facts(section, p));
    return out;
  }

  hasPhrases(section: number, position: number): boolean {
    const a = this.at(section);
    if (a.corpus.hasPhrases) return a.corpus.hasPhrases(a.section, position);
    // the filter's own test on the text, as for a corpus without hasPhrases
    return containsPhrases(a.corpus.document(a.section, position).text, this.phrases, this.tok);
  }
}
