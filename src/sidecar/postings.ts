import { forEachToken } from '../text/tokenize.js';
import { IndexDamagedError } from './file.js';
import { VarintWriter } from './varint.js';

/**
 * Postings of one segment, per term: for each run that has the term, one group `run_key, entries…, 0`.
 * An entry is `2 × (pos - previous pos) + (tf > 1)` (the previous pos of a group's first entry is -1,
 * so every entry is at least 2 and 0 can end the group), followed by `tf` when the flag is set; all
 * unsigned varints. Document lengths are kept per run (see `encodeLengths`), not per posting.
 */
const CHUNK_BITS = 16;
const CHUNK_ENTRIES = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK_ENTRIES - 1;

export class SegmentBuilder {
  /** Term → dense id, in first-seen order. */
  private readonly ids = new Map<string, number>();
  private readonly terms: string[] = [];
  /**
   * Every posting so far, in arrival order (run, then position): term id, run ordinal, position, tf;
   * in fixed-size chunks, so growing never copies (a build holds millions).
   */
  private readonly chunks: Int32Array[] = [];
  private size = 0;
  private runKey = -1;
  private runTerms = new Map<string, number>();
  /** Per term id, its count in the document being added; `touched` lists the ids counted. */
  private counts = new Int32Array(1024);
  private readonly touched: number[] = [];
  private runKeys: number[] = [];

  beginRun(runKey: number): void {
    this.runKey = this.runKeys.length;
    this.runKeys.push(runKey);
    this.runTerms = new Map();
  }

  /**
   * Tokenizes one document and adds its term frequencies; returns its length in tokens. Documents of a
   * run must come in ascending position order, and a run's documents together.
   */
  addDocument(pos: number, text: string): number {
    // tokens map to term ids through a per-run dictionary (small, so cache-friendly; a run repeats its
    // words) in front of the segment's; counts go into an array indexed by term id
    const length = forEachToken(text, (t) => {
      let id = this.runTerms.get(t);
      if (id === undefined) {
        id = this.ids.get(t) ?? this.newTerm(t);
        this.runTerms.set(t, id);
      }
      if (this.counts[id]++ === 0) this.touched.push(id);
    });
    for (const id of this.touched) {
      const offset = (this.size & CHUNK_MASK) * 4;
      if (offset === 0) this.chunks.push(new Int32Array(CHUNK_ENTRIES * 4));
      const e = this.chunks[this.chunks.length - 1]!;
      e[offset] = id;
      e[offset + 1] = this.runKey;
      e[offset + 2] = pos;
      e[offset + 3] = this.counts[id]!;
      this.counts[id] = 0;
      this.size++;
    }
    this.touched.length = 0;
    return length;
  }

  private newTerm(term: string): number {
    const id = this.terms.length;
    this.ids.set(term, id);
    this.terms.push(term);
    if (id >= this.counts.length) {
      const grown = new Int32Array(this.counts.length * 2);
      grown.set(this.counts);
      this.counts = grown;
    }
    return id;
  }

  /** Each term's postings blob (the segment is complete: add nothing after). */
  *postings(): IterableIterator<[string, Buffer]> {
    // a stable counting sort by term keeps each term's postings in arrival order
    const n = this.size;
    const chunks = this.chunks;
    const termOf = (i: number): number => chunks[i >>> CHUNK_BITS]![(i & CHUNK_MASK) * 4]!;
    const starts = new Int32Array(this.terms.length + 1);
    for (let i = 0; i < n; i++) starts[termOf(i) + 1]!++;
    for (let t = 0; t < this.terms.length; t++) starts[t + 1]! += starts[t]!;
    const order = new Int32Array(n);
    const fill = starts.slice(0, this.terms.length);
    for (let i = 0; i < n; i++) order[fill[termOf(i)]!++] = i;
    for (let t = 0; t < this.terms.length; t++) {
      const w = new VarintWriter();
      let run = -1;
      let prev = -1;
      for (let j = starts[t]!; j < starts[t + 1]!; j++) {
        const e = chunks[order[j]! >>> CHUNK_BITS]!;
        const i = (order[j]! & CHUNK_MASK) * 4;
        if (e[i + 1] !== run) {
          if (run !== -1) w.write(0);
          run = e[i + 1]!;
          w.write(this.runKeys[run]!);
          prev = -1;
        }
        writeEntry(w, e[i + 2]! - prev, e[i + 3]!);
        prev = e[i + 2]!;
      }
      w.write(0);
      yield [this.terms[t]!, w.bytes()];
    }
  }
}

function writeEntry(w: VarintWriter, gap: number, tf: number): void {
  if (tf > 1) {
    w.write(2 * gap + 1);
    w.write(tf);
  } else w.write(2 * gap);
}

export type PostingVisitor = (runKey: number, pos: number, tf: number) => void;

/** Visits the entries of one postings blob; `wantRun` lets a reader skip whole runs it does not need. */
export function decodePostings(data: Uint8Array, visit: PostingVisitor, wantRun: (runKey: number) => boolean = () => true): void {
  let i = 0;
  const next = (): number => {
    let n = 0;
    let shift = 1;
    for (;;) {
      if (i >= data.length) throw new IndexDamagedError('index postings end in the middle of an entry');
      const b = data[i++]!;
      n += (b & 0x7f) * shift;
      if (b < 0x80) return n;
      shift *= 128;
    }
  };
  while (i < data.length) {
    const runKey = next();
    const want = wantRun(runKey);
    let pos = -1;
    for (let v = next(); v !== 0; v = next()) {
      const tf = v % 2 === 1 ? next() : 1;
      pos += Math.floor(v / 2);
      if (want) visit(runKey, pos, tf);
    }
  }
}

/** Encodes groups of (pos, tf) pairs in ascending position order (used when segments merge). */
export function encodeGroups(groups: ReadonlyMap<number, number[]>): Buffer {
  const w = new VarintWriter();
  for (const [runKey, list] of groups) {
    w.write(runKey);
    let prev = -1;
    for (let k = 0; k < list.length; k += 2) {
      writeEntry(w, list[k]! - prev, list[k + 1]!);
      prev = list[k]!;
    }
    w.write(0);
  }
  return w.bytes();
}

/** A run's document lengths by position, as varints. */
export function encodeLengths(lengths: readonly number[]): Buffer {
  const w = new VarintWriter(lengths.length + 8);
  for (const n of lengths) w.write(n);
  return w.bytes();
}
