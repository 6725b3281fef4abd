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
 * Ranked documents, yielded best first: score descending, ties in corpus order (what the reference's
 * stable `sort(reverse=True)` gives). A binary heap yields them lazily, so a search that fills its
 * windows from the first few never sorts every matching document.
 */
export class RankedList implements Iterable<Ranked> {
  constructor(
    private readonly docs: Int32Array,
    private readonly scores: Float64Array,
  ) {}

  get length(): number {
    return this.docs.length;
  }

  *[Symbol.iterator](): Iterator<Ranked> {
    const heap = Int32Array.from({ length: this.docs.length }, (_, i) => i);
    const { docs, scores } = this;
    // a before b: higher score, then lower document id
    const before = (a: number, b: number): boolean => scores[a]! > scores[b]! || (scores[a] === scores[b] && docs[a]! < docs[b]!);
    let size = heap.length;
    const sift = (from: number): void => {
      let i = from;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= size) return;
        const r = l + 1;
        const c = r < size && before(heap[r]!, heap[l]!) ? r : l;
        if (!before(heap[c]!, heap[i]!)) return;
        const t = heap[i]!;
        heap[i] = heap[c]!;
        heap[c] = t;
        i = c;
      }
    };
    for (let i = (size >> 1) - 1; i >= 0; i--) sift(i);
    while (size > 0) {
      const top = heap[0]!;
      heap[0] = heap[--size]!;
      sift(0);
      yield { doc: docs[top]!, score: scores[top]! };
    }
  }
}

/**
 * BM25 exactly as the reference computes it (spec §5.2): IEEE doubles in the same operation order,
 * positive scores only, ties keep corpus order.
 */
export function rankBm25(stats: TermStats, terms: readonly string[], params: Bm25Params): RankedList {
  const { n } = stats;
  const empty = new RankedList(new Int32Array(0), new Float64Array(0));
  if (n === 0 || terms.length === 0) return empty;
  const avgdl = stats.totalLength / n;
  if (avgdl === 0) return empty;
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
  let count = 0;
  for (const score of scores.values()) if (score > 0) count++;
  const docs = new Int32Array(count);
  const values = new Float64Array(count);
  let i = 0;
  for (const [doc, score] of scores) {
    if (score > 0) {
      docs[i] = doc;
      values[i++] = score;
    }
  }
  return new RankedList(docs, values);
}
