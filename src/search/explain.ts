/**
 * `--explain`: why a hit scored what it scored. Each query term's part of the BM25 sum, computed with
 * the very operations of `rankBm25` in the same order, so the parts add up to the score exactly.
 */
import type { Bm25Params, TermStats } from './bm25.js';

export interface TermExplain {
  readonly term: string;
  /** Occurrences of the term in the message. */
  readonly tf: number;
  /** Messages of the scope holding the term. */
  readonly df: number;
  readonly idf: number;
  /** The term's share of the score (0 when the message lacks it). */
  readonly contribution: number;
}

export interface Explain {
  /** The sum of the contributions, in query-term order: the hit's score. */
  readonly score: number;
  /** Messages in the scope (N). */
  readonly n: number;
  /** The message's length in tokens, and the scope's average. */
  readonly dl: number;
  readonly avgdl: number;
  readonly k1: number;
  readonly b: number;
  readonly terms: readonly TermExplain[];
}

/** The term frequency of `doc` in a postings list (document ids ascending), 0 when absent. */
function tfOf(docs: Int32Array, tfs: Int32Array, doc: number): number {
  let lo = 0;
  let hi = docs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const d = docs[mid]!;
    if (d === doc) return tfs[mid]!;
    if (d < doc) lo = mid + 1;
    else hi = mid - 1;
  }
  return 0;
}

export function explainScore(stats: TermStats, terms: readonly string[], params: Bm25Params, doc: number): Explain {
  const { n } = stats;
  const avgdl = stats.totalLength / n;
  const dl = stats.docLength(doc);
  const { k1, b } = params;
  let score = 0;
  const parts = terms.map((term): TermExplain => {
    const { docs, tfs } = stats.postings(term);
    const df = docs.length;
    const idf = Math.log((n - df + 0.5) / (df + 0.5) + 1.0);
    const tf = df === 0 ? 0 : tfOf(docs, tfs, doc);
    // the same expression as rankBm25; a term the message lacks adds nothing there
    const contribution = tf === 0 ? 0 : (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * dl) / avgdl));
    if (tf !== 0) score = score + contribution;
    return { term, tf, df, idf, contribution };
  });
  return { score, n, dl, avgdl, k1, b, terms: parts };
}
