import { VarintWriter } from './varint.js';

/**
 * One segment's postings being built. Per term, a run contributes one group: `run_key, n`, then for each
 * of its n documents `2 × (pos - previous pos) + (tf > 1)` and, when that flag is set, `tf`; all unsigned
 * varints. Document lengths are kept per run (see `encodeLengths`), not per posting.
 */
export class SegmentBuilder {
  readonly terms = new Map<string, VarintWriter>();
  private pending = new Map<string, number[]>();
  private runKey = -1;

  beginRun(runKey: number): void {
    this.runKey = runKey;
    this.pending = new Map();
  }

  /** Documents of a run must come in ascending position order. */
  addDocument(pos: number, tf: ReadonlyMap<string, number>): void {
    for (const [term, f] of tf) {
      const list = this.pending.get(term);
      if (list) list.push(pos, f);
      else this.pending.set(term, [pos, f]);
    }
  }

  endRun(): void {
    for (const [term, list] of this.pending) {
      let w = this.terms.get(term);
      if (!w) this.terms.set(term, (w = new VarintWriter()));
      writeGroup(w, this.runKey, list);
    }
    this.pending = new Map();
  }
}

/** `list` holds (pos, tf) pairs in ascending position order. */
function writeGroup(w: VarintWriter, runKey: number, list: readonly number[]): void {
  w.write(runKey);
  w.write(list.length / 2);
  let prev = 0;
  for (let k = 0; k < list.length; k += 2) {
    const pos = list[k]!;
    const tf = list[k + 1]!;
    w.write(2 * (pos - prev) + (tf > 1 ? 1 : 0));
    if (tf > 1) w.write(tf);
    prev = pos;
  }
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
    const count = next();
    const want = wantRun(runKey);
    let pos = 0;
    for (let k = 0; k < count; k++) {
      const v = next();
      const tf = v % 2 === 1 ? next() : 1;
      pos += Math.floor(v / 2);
      if (want) visit(runKey, pos, tf);
    }
  }
}

/** Re-encodes groups of (pos, tf) pairs (used when segments merge). */
export function encodeGroups(groups: ReadonlyMap<number, number[]>): Buffer {
  const w = new VarintWriter();
  for (const [runKey, list] of groups) writeGroup(w, runKey, list);
  return w.bytes();
}

/** A run's document lengths by position, as varints. */
export function encodeLengths(lengths: readonly number[]): Buffer {
  const w = new VarintWriter(lengths.length + 8);
  for (const n of lengths) w.write(n);
  return w.bytes();
}
