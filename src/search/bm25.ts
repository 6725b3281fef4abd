export interface Bm25Params {
  readonly k1: number;
  readonly b: number;
}

export const DEFAULT_BM25: Bm25Params = { k1: 1.5, b: 0.75 };

/** What BM25 needs of the corpus: per-document length, and term frequencies for the query terms only. */
export interface TermStats {
  /** Number of documents (empty ones included). */
  readonly n: number;
  /** Sum of all document lengths. */
  readonly totalLength: number;
  /** Document length per document id. */
  docLength(doc: number): number;
  /** For each query term: the documents containing it, ascending, with their term frequency. */
  postings(term: string): ReadonlyArray<readonly [doc: number, tf: number]>;
}

export interface Ranked {
  readonly doc: number;
  readonly score: number;
}

/**
 * BM25 exactly as the reference computes it (spec §5.2): IEEE doubles in the same operation order,
 * positive scores only, stable descending sort so ties keep corpus order.
 */
export function rankBm25(stats: TermStats, terms: readonly string[], params: Bm25Params): Ranked[] {
  const { n } = stats;
  if (n === 0 || terms.length === 0) return [];
  const avgdl = stats.totalLength / n;
  if (avgdl === 0) return [];
  const { k1, b } = params;
  const scores = new Map<number, number>();
  for (const term of terms) {
    const postings = stats.postings(term);
    const df = postings.length;
    if (df === 0) continue;
    const idf = Math.log((n - df + 0.5) / (df + 0.5) + 1.0);
    for (const [doc, tf] of postings) {
      const dl = stats.docLength(doc);
      if (dl === 0) continue;
      const add = (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * dl) / avgdl));
      scores.set(doc, (scores.get(doc) ?? 0) + add);
    }
  }
  const ranked: Ranked[] = [];
  for (const [doc, score] of scores) if (score > 0) ranked.push({ doc, score });
  ranked.sort((x, y) => y.score - x.score || x.doc - y.doc);
  return ranked;
}
