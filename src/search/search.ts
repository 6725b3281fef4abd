import { rankBm25, type Bm25Params, type RankedList } from './bm25.js';
import { clipFields, joinClipped, type ClippedField } from '../render/clip.js';
import type { PartRole } from '../render/roles.js';
import { delegateTree } from '../history/delegates.js';
import { messageTime } from '../history/time.js';
import type { Warning } from '../history/source.js';
import type { ConversationMeta } from '../store/conversation-meta.js';
import type { StoreRun } from '../store/reader.js';
import { DocumentIds, type Corpus, type CorpusSource, type SectionView } from './corpus.js';
import { queryTokensWith, tokenizerNamed, type Tokenizer, type TokenizerName } from '../text/tokenizer.js';
import { scopeMiss, type ScopeMiss } from './scope.js';
import { collapseKey, distinctTexts, type Fold, FoldBlock, Peekable, type HitLocation } from './collapse.js';
import { explainScore, type Explain } from './explain.js';
import { factsOf, filterNeeds, HitTest, isEmptyFilter, type HitFilter, type SearchContext } from './filters.js';
import { closestIds } from '../text/suggest.js';
import { orderHits, type HitSort } from './order.js';

export type { HitFilter, SearchContext } from './filters.js';

export type Scope = 'all' | 'conversation';

export interface SearchOptions {
  readonly query: string;
  readonly scope: Scope;
  /** The conversation searched under `scope: 'conversation'`; `''` is a real id, null means none. */
  readonly conversationId: string | null;
  /** Search only this run's full record (no attribution). */
  readonly runId: string | null;
  readonly maxMatches: number;
  readonly contextLines: number;
  readonly bm25: Bm25Params;
  /**
   * Which ranked messages may become hits. Applied when windows are selected, after ranking: N, df and
   * avgdl (so every score) are those of the unfiltered scope. Absent: every ranked message may.
   */
  readonly filter?: HitFilter;
  /**
   * Fold a hit whose index text equals a better hit's into that hit (its `locations`) instead of giving
   * it a slot; counts then count distinct texts. Scores and the order of the other hits do not change.
   */
  readonly collapse?: boolean;
  /** Give each hit the terms' parts of its score (`Hit.explain`). */
  readonly explain?: boolean;
  /** The order of `hits` (default: by rank); which messages are hits does not depend on it. */
  readonly sort?: HitSort;
  readonly reverse?: boolean;
  /** The tokenizer of ranking, phrases, windows and highlighting (default: the reference's; `cjk` is off-parity). */
  readonly tokenizer?: TokenizerName;
}

export interface ExcerptLine {
  /** Position in the run's full record (the `[n]` shown). */
  readonly position: number;
  /** Display text: clipped, windowed around query terms, without the `[n] ` prefix. */
  readonly text: string;
  /** Full index text of the message. */
  readonly fullText: string;
  readonly hit: boolean;
  /** The clipped fields `text` joins: printers that mark clips their own way use these. */
  readonly fields: readonly ClippedField[];
}

/** A rendered part of a hit message: its role, tool and full (unclipped) text, without the label. */
export interface HitPart extends PartRole {
  readonly text: string;
}

export interface Hit {
  readonly rank: number;
  readonly score: number;
  readonly run: StoreRun;
  readonly position: number;
  readonly text: string;
  readonly excerpt: readonly ExcerptLine[];
  readonly parts: readonly HitPart[];
  readonly timestamp: string | null;
  readonly firstSeq: number;
  readonly firstStep: number | null;
  /**
   * With `collapse`: every matching message holding this hit's text, in corpus order (the hit's own
   * included; more are added until the search returns). Null otherwise.
   */
  readonly locations: readonly HitLocation[] | null;
  /** With `explain`: each query term's part of the score. Null otherwise. */
  readonly explain: Explain | null;
  /** When the message was made (microseconds; see `messageTime`), what `--since`, `--until` and `--sort time` use. */
  readonly time: number | null;
  /** The conversation's title, tags and outcome from the store's catalog, where it has them (set by the session). */
  readonly conversation?: ConversationMeta;
}

export interface RankedHit {
  readonly run: StoreRun;
  readonly position: number;
  readonly score: number;
  readonly shown: boolean;
  /** Passes the hit filter (role, tool, minimum score); always true without one. */
  readonly eligible: boolean;
}

/** A run and how many of its messages match (see {@link MatchCounts}). */
export interface RunMatches {
  readonly run: StoreRun;
  readonly count: number;
  /** The best score among them. */
  readonly best: number;
}

/**
 * Every matching message of the scope, shown or not, like `grep -c`: what `--count`, `--count-by` and the
 * `--expect-*` checks judge, whatever `-m` and `-C` select for display.
 */
export interface MatchCounts {
  /** Messages scoring above 0 that pass the hit filter (with `collapse`: their distinct texts). */
  readonly total: number;
  /** The same per run, for the runs with at least one, in corpus order (with `collapse`: distinct texts of the run). */
  readonly byRun: readonly RunMatches[];
  /** Messages scoring above 0 before the hit filter (what the filter had to choose from). */
  readonly unfiltered: number;
}

const NO_MATCHES: MatchCounts = { total: 0, byRun: [], unfiltered: 0 };

/**
 * `o` with `key` made by `make` when first read, once: an own enumerable property in its place, as a plain
 * object's (JSON.stringify and spreads see it as before).
 */
function lazyField<T extends object, K extends keyof T>(o: T, key: K, make: () => T[K]): T {
  let value: { v: T[K] } | null = null;
  return Object.defineProperty(o, key, { enumerable: true, get: () => (value ??= { v: make() }).v });
}

/**
 * A section's matches, its run made when first read: a store-wide search through the index counts the
 * matches of hundreds of runs and most printers show only how many (their runs' texts stay unread).
 */
function runMatches(section: SectionView, count: number, best: number): RunMatches {
  return lazyField({ run: null, count, best } as unknown as RunMatches, 'run', () => section.run);
}

interface OutcomeBase {
  readonly options: SearchOptions;
  readonly warnings: readonly Warning[];
  /** The runs whose sections were searched, in corpus order (made when first read: a store-wide search of 50k runs shows a few). */
  readonly runs: readonly StoreRun[];
  /** How many: `runs.length`, without making them. */
  readonly runCount: number;
  /**
   * Set when the scope names a conversation or run the store does not hold: the outcome still carries
   * the reference's reply, but a caller must treat it as an error (a typo must never pass a check).
   */
  readonly missing: ScopeMiss | null;
  readonly matches: MatchCounts;
}

/** Every way a search can end; printers turn it into text and the CLI into an exit status. */
export type SearchOutcome = OutcomeBase &
  (
    | { readonly kind: 'no-conversation-id' }
    | { readonly kind: 'no-run-history'; readonly runId: string }
    | { readonly kind: 'no-history'; readonly searched: 0 }
    | { readonly kind: 'no-matches'; readonly searched: number }
    | {
        readonly kind: 'found';
        /** Messages the scope holds, all of which were ranked (the reference's "in N persisted messages"). */
        readonly searched: number;
        /** The hits, in the order `sort` and `reverse` ask (by rank unless told). */
        readonly hits: readonly Hit[];
        readonly ranking: readonly RankedHit[];
      }
  );

/**
 * The reference's `search_conversation_history` control flow (spec §6.1), over any corpus source; `ctx`
 * dates messages that carry no timestamp of their own.
 */
export function search(source: CorpusSource, options: SearchOptions, ctx: SearchContext = {}): SearchOutcome {
  if (options.scope === 'conversation' && options.conversationId === null) {
    return { kind: 'no-conversation-id', options, warnings: [], runs: [], runCount: 0, missing: null, matches: NO_MATCHES };
  }
  const filter = options.filter && !isEmptyFilter(options.filter) ? options.filter : null;
  const needs = filterNeeds(filter);
  // with collapse, the copies' locations carry their timestamps: a digest keeps them too
  const tok = tokenizerNamed(options.tokenizer);
  const corpus = source.corpus(options, {
    ...needs,
    textKeys: Boolean(options.collapse),
    times: needs.times || Boolean(options.collapse),
    ...(tok.parity ? {} : { tokenizer: tok.name }),
  });
  const parent = filter?.parent ?? null;
  const tree = parent === null ? null : delegateTree(source.runs(), parent);
  const missing =
    (corpus.scopeRuns === 0 ? scopeMiss(source.runs(), options) : null) ?? (parent === null ? null : parentMiss(source, parent));
  const base = { options, warnings: corpus.warnings, runs: [], runCount: corpus.sections.length, missing, matches: NO_MATCHES };
  const outcome = <O extends SearchOutcome>(o: O): O => lazyField(o, 'runs', () => corpus.sections.map((s) => s.run));
  if (options.runId !== null && corpus.sections.length === 0) return outcome({ ...base, kind: 'no-run-history', runId: options.runId });
  // document ids over the sections, made once (a store-wide search of 50k runs has 50k sections)
  const ids = new DocumentIds(corpus.sections);
  const total = ids.count;
  if (total === 0) return outcome({ ...base, kind: 'no-history', searched: 0 });

  const terms = queryTokensWith(tok, options.query);
  const stats = corpus.termStats(terms);
  const ranked = rankBm25(stats, terms, options.bm25);
  if (ranked.length === 0) return outcome({ ...base, kind: 'no-matches', searched: total });
  const test = filter ? new HitTest(filter, corpus, tree, ctx, tok) : null;
  const explain = options.explain ? (doc: number) => explainScore(stats, terms, options.bm25, doc) : null;
  const selected = selectWindows(corpus, ids, ranked, new Set(terms), tok, options, test, explain, ctx);
  const { ranking } = selected;
  const hits =
    options.sort === 'time' || options.reverse
      ? orderHits(selected.hits, options.sort ?? 'score', Boolean(options.reverse))
      : selected.hits;
  const matches = countMatches(corpus, ids, ranked, test, Boolean(options.collapse));
  const found = outcome({ ...base, matches, kind: 'found' as const, searched: total, hits, ranking: [] as readonly RankedHit[] });
  // the full ranking is rarely wanted (tests, diagnostics): computed on first use only
  return lazyField(found, 'ranking', ranking);
}

/** The outcome with other hits (the same ones, told more): the full ranking stays computed on first use only. */
export function withHits(outcome: SearchOutcome, hits: readonly Hit[]): SearchOutcome {
  if (outcome.kind !== 'found') return outcome;
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(outcome)) as SearchOutcome;
  return Object.defineProperty(copy, 'hits', { value: hits, enumerable: true });
}

/** `--parent` naming a run the store does not hold: an error like a scope's (a typo must not pass a check). */
function parentMiss(source: CorpusSource, parent: string): ScopeMiss | null {
  const ids = source.runs().map((r) => r.runId);
  return ids.includes(parent) ? null : { kind: 'run', id: parent, conversationId: null, suggestions: closestIds(parent, ids) };
}

/** A hit chosen and its window (positions `start .. end-1` of its section), before any of it is read. */
interface Chosen {
  readonly doc: number;
  readonly score: number;
  readonly section: number;
  readonly start: number;
  readonly end: number;
  readonly position: number;
  readonly fold: Fold | null;
}

/**
 * Excerpt windows (spec §6.1 step 6): a hit whose line an earlier window already showed is skipped and
 * frees its slot; windows stay inside their run's section and may still overlap partially. With
 * `collapse`, a copy of a hit's text is one more location of that hit and frees its slot too.
 */
function selectWindows(
  corpus: Corpus,
  ids: DocumentIds,
  ranked: RankedList,
  terms: ReadonlySet<string>,
  tok: Tokenizer,
  o: SearchOptions,
  test: HitTest | null,
  explain: ((doc: number) => Explain) | null,
  ctx: SearchContext,
): { hits: Hit[]; ranking: () => RankedHit[] } {
  const shown = new Set<number>(); // document ids already displayed
  const chosen: Chosen[] = [];
  const consumed: RankedHit[] = [];
  const order = new Peekable(ranked[Symbol.iterator]());
  const block = o.collapse ? new FoldBlock() : null;
  const entry = (doc: number, score: number, emit: boolean, eligible: boolean): RankedHit => {
    const { section: si, position } = ids.locate(doc);
    return { run: corpus.sections[si]!.run, position, score, shown: emit, eligible };
  };
  // which hits and windows: decided from the ranking alone (and the filter's and --collapse's facts), no window read yet
  for (;;) {
    if (chosen.length >= o.maxMatches) {
      // every slot is taken; copies of the last hit's text, ranked right after it, still fold into it
      const ahead = order.peek();
      if (!block?.hasHit || ahead.done || !block.holds(ahead.value.score)) break;
    }
    const next = order.next();
    if (next.done) break;
    const { doc, score } = next.value;
    const { section: si, position } = ids.locate(doc);
    const section = corpus.sections[si]!;
    const eligible = !test || test.accepts(si, position, score);
    let fold = null;
    if (block && eligible) {
      block.at(score);
      // a text alone at its score has no copy: its key is never read
      const ahead = order.peek();
      if (!block.empty || (!ahead.done && block.holds(ahead.value.score))) {
        fold = block.add(collapseKey(corpus, si, position), {
          run: section.run,
          position,
          timestamp: factsOf(corpus, si, position).timestamp,
        });
      }
    }
    const emit = eligible && !shown.has(doc) && !fold?.shown && chosen.length < o.maxMatches;
    consumed.push(entry(doc, score, emit, eligible));
    if (!emit) continue;
    const start = Math.max(section.start, position - o.contextLines);
    const end = Math.min(section.end, position + o.contextLines + 1);
    for (let j = start; j < end; j++) shown.add(ids.id(si, j));
    if (fold) {
      fold.shown = true;
      block!.hasHit = true;
    }
    chosen.push({ doc, score, section: si, start, end, position, fold });
  }
  // every window told at once: a corpus that can reads them all in one go (one round trip to a shared index)
  corpus.prefetch?.(chosen.map(({ section, start, end }) => ({ section, start, end })));
  const hits = chosen.map(({ doc, score, section: si, start, end, position, fold }, i): Hit => {
    const run = corpus.sections[si]!.run;
    const excerpt: ExcerptLine[] = [];
    for (let j = start; j < end; j++) {
      const d = corpus.document(si, j);
      const fields = clipFields(d.parts, terms, tok);
      excerpt.push({ position: j, text: joinClipped(fields), fullText: d.text, hit: j === position, fields });
    }
    const d = corpus.document(si, position);
    return {
      rank: i + 1,
      score,
      run,
      position,
      text: d.text,
      excerpt,
      parts: d.parts.map((p) => ({ role: p.role, toolName: p.toolName, text: p.text })),
      timestamp: d.timestamp,
      firstSeq: d.firstSeq,
      firstStep: d.firstStep,
      locations: fold ? fold.locations : block ? [{ run, position, timestamp: d.timestamp }] : null,
      explain: explain?.(doc) ?? null,
      time: messageTime(d.timestamp, () => ctx.snapshotTime?.(run.runId, d.firstSeq) ?? null),
    };
  });
  // the rest of the ranking, past the last window: never shown
  const ranking = (): RankedHit[] => {
    const rest: RankedHit[] = [];
    for (let next = order.next(); !next.done; next = order.next()) {
      const { doc, score } = next.value;
      const { section: si, position } = ids.locate(doc);
      rest.push(entry(doc, score, false, !test || test.accepts(si, position, score)));
    }
    return consumed.concat(rest);
  };
  return { hits, ranking };
}

/**
 * Counts every ranked message the filter accepts, in document order (a corpus that replays documents on
 * demand then replays each run once); each test reads only what it needs.
 */
function countMatches(corpus: Corpus, ids: DocumentIds, ranked: RankedList, test: HitTest | null, collapse: boolean): MatchCounts {
  const docs = new Int32Array(ranked.length);
  const scoreOf = new Float64Array(ids.count);
  let n = 0;
  ranked.forEachUnordered((doc, score) => {
    docs[n++] = doc;
    scoreOf[doc] = score;
  });
  const sorted = docs.sort();
  let perSection: Int32Array = new Int32Array(corpus.sections.length);
  const best = new Float64Array(corpus.sections.length);
  let total = 0;
  const accepted = collapse ? new Int32Array(n) : null;
  for (const doc of sorted) {
    const { section, position } = ids.locate(doc);
    if (test && !test.accepts(section, position, scoreOf[doc]!)) continue;
    perSection[section] = perSection[section]! + 1;
    if (scoreOf[doc]! > best[section]!) best[section] = scoreOf[doc]!;
    if (accepted) accepted[total] = doc;
    total++;
  }
  if (accepted) {
    const matching = accepted.subarray(0, total);
    const distinct = distinctTexts(
      matching,
      Float64Array.from(matching, (d) => scoreOf[d]!),
      corpus.sections.length,
      (d) => ids.locate(d).section,
      (d) => {
        const { section, position } = ids.locate(d);
        return collapseKey(corpus, section, position);
      },
    );
    total = distinct.total;
    perSection = distinct.perSection;
  }
  const byRun: RunMatches[] = [];
  perSection.forEach((count, si) => {
    if (count > 0) byRun.push(runMatches(corpus.sections[si]!, count, best[si]!));
  });
  return { total, byRun, unfiltered: ranked.length };
}
