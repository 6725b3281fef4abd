import { NO_POSTINGS, type Postings, type TermStats } from './bm25.js';
import type { QueryTermCounter } from '../text/tokenize.js';

/** Collects a term's (document, tf) pairs in any order, each document once; `finish` orders them. */
export class PostingsBuilder {
  private docs = new Int32Array(16);
  private tfs = new Int32Array(16);
  private length = 0;
  private sorted = true;

  add(doc: number, tf: number): void {
    if (this.length === this.docs.length) {
      const docs = new Int32Array(this.length * 2);
      const tfs = new Int32Array(this.length * 2);
      docs.set(this.docs);
      tfs.set(this.tfs);
      this.docs = docs;
      this.tfs = tfs;
    }
    if (this.length > 0 && this.docs[this.length - 1]! > doc) this.sorted = false;
    this.docs[this.length] = doc;
    this.tfs[this.length++] = tf;
  }

  finish(): Postings {
    const docs = this.docs.subarray(0, this.length);
    const tfs = this.tfs.subarray(0, this.length);
    if (this.sorted) return { docs, tfs };
    const order = Int32Array.from({ length: this.length }, (_, i) => i).sort((a, b) => docs[a]! - docs[b]!);
    return { docs: order.map((i) => docs[i]!), tfs: order.map((i) => tfs[i]!) };
  }
}

/**
 * Builds the statistics BM25 needs of one corpus of `documents` documents: each document's length and
 * the query terms' postings. Every corpus (replayed, digested, indexed) builds them here.
 */
export class TermStatsBuilder {
  private readonly lengths: Int32Array;
  private readonly postings: PostingsBuilder[];

  constructor(
    readonly terms: readonly string[],
    readonly documents: number,
  ) {
    this.lengths = new Int32Array(documents);
    this.postings = terms.map(() => new PostingsBuilder());
  }

  /** Document `doc` is `length` tokens long. */
  setLength(doc: number, length: number): void {
    this.lengths[doc] = length;
  }

  /** Document `doc` holds `terms[k]` `tf` times; documents may come in any order, each once per term. */
  add(k: number, doc: number, tf: number): void {
    this.postings[k]!.add(doc, tf);
  }

  /** Document `doc`, counted by `counter` (over these terms): its length and its postings. */
  addCounted(doc: number, length: number, counter: QueryTermCounter): void {
    this.lengths[doc] = length;
    const counts = counter.counts;
    for (let k = 0; k < counts.length; k++) if (counts[k]! > 0) this.postings[k]!.add(doc, counts[k]!);
  }

  /** The statistics; `totalLength` is the sum of every document's length (also of those never set here). */
  finish(totalLength: number): TermStats {
    const byTerm = new Map(this.terms.map((t, k) => [t, this.postings[k]!.finish()]));
    const lengths = this.lengths;
    return { n: this.documents, totalLength, docLength: (d) => lengths[d]!, postings: (t) => byTerm.get(t) ?? NO_POSTINGS };
  }
}
