/**
 * Hit filters: which ranked messages count as hits. They are tested after ranking, so N, df and avgdl
 * (every score) stay those of the whole scope; a filtered-out message can still be context of a hit.
 * Each test reads as little as it can: the run first, then the parts, the time, and the text last.
 */
import { isEmptyPartFilter, partsMatch, type PartFilter } from '../render/roles.js';
import { messageTime } from '../history/time.js';
import type { GlobSet } from '../text/glob.js';
import type { Corpus, CorpusNeeds, DocumentFacts } from './corpus.js';
import { tokenizerNamed, type Tokenizer } from '../text/tokenizer.js';

export interface HitFilter extends PartFilter {
  /** Hits must score at least this (the unrounded score; absent or null: any score above 0). */
  readonly minScore?: number | null;
  /** The run's agent name matches one of these patterns (absent or empty: any run). */
  readonly agents?: GlobSet;
  /** The run is this one or one it delegated to, transitively (its delegate tree, via `parent_run_id`). */
  readonly parent?: string | null;
  /** The message's time (see `messageTime`) is at or after / at or before this, in microseconds. */
  readonly since?: number | null;
  readonly until?: number | null;
  /** The message's text holds each of these token sequences, consecutively (tokenized like the query). */
  readonly phrases?: ReadonlyArray<readonly string[]>;
}

/** What a search can look up beyond its corpus. */
export interface SearchContext {
  /** The `timestamp` of the run's snapshot `seq`: the time of a message that has none. */
  readonly snapshotTime?: (runId: string, seq: number) => string | null;
}

export function isEmptyFilter(f: HitFilter): boolean {
  return (
    isEmptyPartFilter(f) &&
    (f.minScore ?? null) === null &&
    !f.agents?.size &&
    (f.parent ?? null) === null &&
    (f.since ?? null) === null &&
    (f.until ?? null) === null &&
    !f.phrases?.length
  );
}

const timed = (f: HitFilter | null): boolean => f !== null && ((f.since ?? null) !== null || (f.until ?? null) !== null);

/** What the corpus must keep for the filter to be tested without rendering. */
export function filterNeeds(f: HitFilter | null): CorpusNeeds {
  return { times: timed(f), ...(f?.phrases?.length ? { phrases: f.phrases } : {}) };
}

/** Whether `text` holds every phrase, each as consecutive tokens. */
export function containsPhrases(
  text: string,
  phrases: ReadonlyArray<readonly string[]>,
  tok: Tokenizer = tokenizerNamed(undefined),
): boolean {
  const tokens: string[] = [];
  tok.forEachToken(text, (t) => tokens.push(t));
  return phrases.every((p) => {
    for (let i = 0; i + p.length <= tokens.length; i++) {
      let k = 0;
      while (k < p.length && tokens[i + k] === p[k]) k++;
      if (k === p.length) return true;
    }
    return false;
  });
}

/** A document's facts, from the corpus's fast path when it has one. */
export function factsOf(corpus: Corpus, section: number, position: number): DocumentFacts {
  return corpus.facts ? corpus.facts(section, position) : corpus.document(section, position);
}

/** The time of a document (see `messageTime`). */
export function documentTime(corpus: Corpus, section: number, position: number, ctx: SearchContext): number | null {
  const f = factsOf(corpus, section, position);
  return messageTime(f.timestamp, () => ctx.snapshotTime?.(corpus.sections[section]!.run.runId, f.firstSeq) ?? null);
}

/** A filter bound to one corpus: `accepts` says whether a ranked document counts as a hit. */
export class HitTest {
  private readonly runOk: boolean[];
  private readonly parts: boolean;

  constructor(
    private readonly f: HitFilter,
    private readonly corpus: Corpus,
    /** The run ids of `f.parent`'s delegate tree (null without `parent`). */
    tree: ReadonlySet<string> | null,
    private readonly ctx: SearchContext,
    private readonly tok: Tokenizer = tokenizerNamed(undefined),
  ) {
    this.runOk = corpus.sections.map(({ run }) => {
      if (tree && !tree.has(run.runId)) return false;
      if (f.agents?.size && (run.agentName === null || !f.agents.has(run.agentName))) return false;
      return true;
    });
    this.parts = !isEmptyPartFilter(f);
  }

  accepts(section: number, position: number, score: number): boolean {
    const f = this.f;
    if (f.minScore != null && score < f.minScore) return false;
    if (!this.runOk[section]) return false;
    const c = this.corpus;
    if (this.parts && !partsMatch(c.parts ? c.parts(section, position) : factsOf(c, section, position).parts, f)) return false;
    if (timed(f)) {
      const t = documentTime(c, section, position, this.ctx);
      if (t === null || (f.since != null && t < f.since) || (f.until != null && t > f.until)) return false;
    }
    if (f.phrases?.length) {
      const has = c.hasPhrases ? c.hasPhrases(section, position) : containsPhrases(c.document(section, position).text, f.phrases, this.tok);
      if (!has) return false;
    }
    return true;
  }
}
