/**
 * `--collapse`: a hit whose index text equals a better hit's folds into it instead of taking a slot.
 * Documents with equal index texts have equal BM25 scores (same tokens, same length, the same sum in
 * the same order), and ties rank in corpus order, so the copies of a text are adjacent in the ranking:
 * only the current block of equal scores is remembered, and counting compares only documents that
 * share a score.
 */
import type { StoreRun } from '../store/reader.js';
import type { Corpus } from './corpus.js';

/** One place a hit's text occurs. */
export interface HitLocation {
  readonly run: StoreRun;
  readonly position: number;
  readonly timestamp: string | null;
}

/** The key `--collapse` compares: the corpus's text key when it has one, else the index text itself. */
export function collapseKey(corpus: Corpus, section: number, position: number): string {
  return corpus.textKey ? corpus.textKey(section, position) : corpus.document(section, position).text;
}

/** One text of the current score block: where it occurs so far (corpus order), and whether a hit shows it. */
export interface Fold {
  readonly locations: HitLocation[];
  shown: boolean;
}

/** The texts of the block of equal scores being ranked. */
export class FoldBlock {
  private score = NaN;
  private readonly folds = new Map<string, Fold>();
  /** A hit was made from this block: copies still to come fold into it, even once every slot is taken. */
  hasHit = false;

  /** Starts a new block when `score` differs from the current one. */
  at(score: number): void {
    if (score === this.score) return;
    this.score = score;
    this.folds.clear();
    this.hasHit = false;
  }

  /** Whether a document at `score` belongs to the current block. */
  holds(score: number): boolean {
    return score === this.score;
  }

  /** Whether the block already saw a text (else a document alone at its score needs no key). */
  get empty(): boolean {
    return this.folds.size === 0;
  }

  /** The fold of `key`, with `location` added. */
  add(key: string, location: HitLocation): Fold {
    let f = this.folds.get(key);
    if (!f) this.folds.set(key, (f = { locations: [], shown: false }));
    f.locations.push(location);
    return f;
  }
}

/** An iterator that can look one item ahead. */
export class Peekable<T> implements Iterator<T> {
  private ahead: IteratorResult<T> | null = null;

  constructor(private readonly it: Iterator<T>) {}

  next(): IteratorResult<T> {
    const r = this.ahead ?? this.it.next();
    this.ahead = null;
    return r;
  }

  peek(): IteratorResult<T> {
    return (this.ahead ??= this.it.next());
  }
}

export interface DistinctCounts {
  readonly total: number;
  /** Distinct texts per section: a text found in two runs counts once in each. */
  readonly perSection: Int32Array;
}

/**
 * Distinct texts among matching documents, given in ascending id order with their scores. A document
 * alone at its score is distinct without reading its text.
 */
export function distinctTexts(
  docs: Int32Array,
  scores: Float64Array,
  sections: number,
  sectionOf: (doc: number) => number,
  keyOf: (doc: number) => string,
): DistinctCounts {
  const atScore = new Map<number, number>();
  for (const s of scores) atScore.set(s, (atScore.get(s) ?? 0) + 1);
  const perSection = new Int32Array(sections);
  // score -> text key -> the sections it was counted in
  const seen = new Map<number, Map<string, Set<number>>>();
  let total = 0;
  docs.forEach((doc, i) => {
    const section = sectionOf(doc);
    const score = scores[i]!;
    if (atScore.get(score) === 1) {
      total++;
      perSection[section]!++;
      return;
    }
    let keys = seen.get(score);
    if (!keys) seen.set(score, (keys = new Map()));
    const key = keyOf(doc);
    let where = keys.get(key);
    if (!where) {
      keys.set(key, (where = new Set()));
      total++;
    }
    if (!where.has(section)) {
      where.add(section);
      perSection[section]!++;
    }
  });
  return { total, perSection };
}
