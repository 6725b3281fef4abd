import { VarintWriter } from './varint.js';

/**
 * Postings of one segment, per term: for each run that has the term, one group `run_key, entries…, 0`.
 * An entry is `2 × (pos - previous pos) + (tf > 1)` (the previous pos of a group's first entry is -1,
 * so every entry is at least 2 and 0 can end the group), followed by `tf` when the flag is set; all
 * unsigned varints. Document lengths are kept per run (see `encodeLengths`), not per posting.
 */
interface TermPostings {
  readonly w: VarintWriter;
  /** Run of the open group, -1 before the first. */
  run: number;
  prev: number;
}

/** One segment's postings being built, written as documents arrive (no per-run buffering). */
export class SegmentBuilder {
  private readonly terms = new Map<string, TermPostings>();
  private runKey = -1;

  beginRun(runKey: number): void {
    this.runKey = runKey;
  }

  /** Documents of a run must come in ascending position order, and a run's documents together. */
  addDocument(pos: number, tf: ReadonlyMap<string, number>): void {
    for (const [term, f] of tf) {
      let t = this.terms.get(term);
      if (!t) this.terms.set(term, (t = { w: new VarintWriter(), run: -1, prev: -1 }));
      if (t.run !== this.runKey) {
        if (t.run !== -1) t.w.write(0);
        t.w.write(this.runKey);
        t.run = this.runKey;
        t.prev = -1;
      }
      writeEntry(t.w, pos - t.prev, f);
      t.prev = pos;
    }
  }

  get isEmpty(): boolean {
    return this.terms.size === 0;
  }

  /** Each term's postings blob, its last group closed. */
  *postings(): IterableIterator<[string, Buffer]> {
    for (const [term, t] of this.terms) {
      t.w.write(0);
      yield [term, t.w.bytes()];
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
