export interface Bm25Params {
  readonly k1: number;
  readonly b: number;
}

/** What BM25 needs of the corpus: per-document length, and term frequencies for the query terms only. */
export interface TermStats {
  /** Number of documents (empty ones included). */
  readonly n: number;
  /** Sum of all document lengths. */
  readonly totalLength: number;
  /** Document length per document id: known for the documents of the query terms' postings (all BM25 reads), maybe 0 for others. */
  docLength(doc: number): number;
  /** For each query term: the documents containing it, ascending, with their term frequency. */
  postings(term: string): Postings;
}

/** A term's postings: document ids ascending, and the term's frequency in each. */
export interface Postings {
  readonly docs: Int32Array;
  readonly tfs: Int32Array;
}

export const NO_POSTINGS: Postings = { docs: new Int32Array(0), tfs: new Int32Array(0) };

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

  /** Every ranked document once, in no particular order (no sorting: for counts). */
  forEachUnordered(fn: (doc: number, score: number) => void): void {
    for (let i = 0; i < this.docs.length; i++) fn(this.docs[i]!, this.scores[i]!);
  }

  *[Symbol.iterator](): Iterator<Ranked> {
    const { docs, scores } = this;
    let size = docs.length;
    const heap = new Int32Array(size);
    for (let i = 0; i < size; i++) heap[i] = i;
    // a before b: higher score, then lower document id (comparisons inlined: this runs over every hit)
    const sift = (from: number): void => {
      let i = from;
      const x = heap[i]!;
      const xs = scores[x]!;
      const xd = docs[x]!;
      for (;;) {
        let c = 2 * i + 1;
        if (c >= size) break;
        let cs = scores[heap[c]!]!;
        const r = c + 1;
        if (r < size) {
          const rs = scores[heap[r]!]!;
          if (rs > cs || (rs === cs && docs[heap[r]!]! < docs[heap[c]!]!)) {
            c = r;
            cs = rs;
          }
        }
        if (!(cs > xs || (cs === xs && docs[heap[c]!]! < xd))) break;
        heap[i] = heap[c]!;
        i = c;
      }
      heap[i] = x;
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
  // per document, the sum in query-term order (as the reference's dict accumulates it)
  const scores = new Float64Array(n);
  const scored = new Uint8Array(n);
  const touched: number[] = [];
  for (const term of terms) {
    const { docs, tfs } = stats.postings(term);
    const df = docs.length;
    if (df === 0) continue;
    const idf = Math.log((n - df + 0.5) / (df + 0.5) + 1.0);
    for (let k = 0; k < df; k++) {
      const doc = docs[k]!;
      const tf = tfs[k]!;
      const dl = stats.docLength(doc);
      if (dl === 0) continue;
      const add = (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * dl) / avgdl));
      if (scored[doc] === 0) {
        scored[doc] = 1;
        touched.push(doc);
      }
      scores[doc] = scores[doc]! + add;
    }
  }
  let count = 0;
  for (const doc of touched) if (scores[doc]! > 0) count++;
  const docs = new Int32Array(count);
  const values = new Float64Array(count);
  let i = 0;
  for (const doc of touched) {
    if (scores[doc]! > 0) {
      docs[i] = doc;
      values[i++] = scores[doc]!;
    }
  }
  return new RankedList(docs, values);
}
