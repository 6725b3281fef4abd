import { TermIds } from '../text/term-ids.js';
import { IndexDamagedError } from './errors.js';
import { VarintWriter } from './varint.js';

/** A new term's postings buffer, the slabs such buffers are cut from, and the largest buffer cut from one. */
const FIRST_BYTES = 16;
const SLAB_BYTES = 64 * 1024;
const SLAB_CUT = 4096;

/**
 * Postings of one segment, per term: for each run that has the term, one group `run_key, entries…, 0`.
 * An entry is `2 × (pos - previous pos) + (tf > 1)` (the previous pos of a group's first entry is -1,
 * so every entry is at least 2 and 0 can end the group), followed by `tf` when the flag is set; all
 * unsigned varints. Document lengths are kept per run (see `encodeLengths`), not per posting.
 */
export class SegmentBuilder {
  /** Term → dense id, in first-seen order. */
  private readonly ids = new TermIds();
  /**
   * Per term id, its postings so far, already encoded (entries arrive in run, then position order,
   * so they are appended in place): the builder holds about the size of the blobs it will write.
   */
  private bufs: Uint8Array[] = [];
  /**
   * Where a new term's first 16 bytes are cut from: most terms of a segment stay that small, and a
   * buffer of its own per term costs more than its bytes (an ArrayBuffer and a native block each).
   */
  private slab = new Uint8Array(0);
  private slabUsed = 0;
  private lens = new Int32Array(1024);
  /** Per term id, the run (ordinal within this segment) of its open group, and its last position. */
  private lastRun = new Int32Array(1024).fill(-1);
  private lastPos = new Int32Array(1024);
  private runOrdinal = -1;
  private runKey = 0;
  /** Per term id, its count in the document being added; `touched` lists the ids counted. */
  private counts = new Int32Array(1024);
  private readonly touched: number[] = [];
  /** Bytes of postings held. */
  size = 0;
  private closed = false;

  beginRun(runKey: number): void {
    this.runOrdinal++;
    this.runKey = runKey;
  }

  /**
   * Tokenizes one document, given as pieces whose tokens follow each other (fields.ts `searchPieces`),
   * and adds its term frequencies; returns its length in tokens. Documents of a run must come in
   * ascending position order, and a run's documents together.
   */
  addDocument(pos: number, pieces: readonly string[]): number {
    let length = 0;
    for (const piece of pieces) length += this.ids.forEachId(piece, this.count);
    for (const id of this.touched) {
      if (this.lastRun[id] !== this.runOrdinal) {
        if (this.lastRun[id] !== -1) this.put(id, 0);
        this.put(id, this.runKey);
        this.lastRun[id] = this.runOrdinal;
        this.lastPos[id] = -1;
      }
      const tf = this.counts[id]!;
      const gap = pos - this.lastPos[id]!;
      if (tf > 1) {
        this.put(id, 2 * gap + 1);
        this.put(id, tf);
      } else this.put(id, 2 * gap);
      this.lastPos[id] = pos;
      this.counts[id] = 0;
    }
    this.touched.length = 0;
    return length;
  }

  /** Counts one token of the document being added (counts go into an array indexed by term id). */
  private readonly count = (id: number): void => {
    if (id === this.bufs.length) this.newTerm(id);
    if (this.counts[id]++ === 0) this.touched.push(id);
  };

  /** Appends one varint to a term's postings. */
  private put(id: number, n: number): void {
    let buf = this.bufs[id]!;
    let len = this.lens[id]!;
    if (len + 10 > buf.length) {
      const grown = this.room(buf.length * 2);
      grown.set(buf.subarray(0, len));
      this.size += buf.length;
      this.bufs[id] = buf = grown;
    }
    while (n >= 0x80) {
      buf[len++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    buf[len++] = n;
    this.lens[id] = len;
  }

  /**
   * A buffer of `bytes` for a term's postings: cut from the current slab up to SLAB_CUT bytes (most
   * terms' buffers, as they double), its own beyond. One ArrayBuffer per buffer made the collector
   * track tens of thousands of them a segment.
   */
  private room(bytes: number): Uint8Array {
    if (bytes > SLAB_CUT) return new Uint8Array(bytes);
    if (this.slabUsed + bytes > this.slab.length) {
      this.slab = new Uint8Array(SLAB_BYTES);
      this.slabUsed = 0;
    }
    return this.slab.subarray(this.slabUsed, (this.slabUsed += bytes));
  }

  /** Room for the postings of a term just given its id. */
  private newTerm(id: number): void {
    this.bufs.push(this.room(FIRST_BYTES));
    this.size += FIRST_BYTES + this.ids.terms[id]!.length;
    if (id >= this.counts.length) {
      const grow = (a: Int32Array<ArrayBuffer>, fill = 0): Int32Array<ArrayBuffer> => {
        const g = new Int32Array(a.length * 2).fill(fill);
        g.set(a);
        return g;
      };
      this.counts = grow(this.counts);
      this.lens = grow(this.lens);
      this.lastRun = grow(this.lastRun, -1);
      this.lastPos = grow(this.lastPos);
    }
  }

  /** Each term's postings blob (the segment is complete: add nothing after). */
  *postings(): IterableIterator<[string, Buffer]> {
    const { terms } = this.ids;
    if (!this.closed) for (let id = 0; id < terms.length; id++) this.put(id, 0); // closes each term's last group
    this.closed = true;
    for (let id = 0; id < terms.length; id++) {
      const buf = this.bufs[id]!;
      yield [terms[id]!, Buffer.from(buf.buffer, buf.byteOffset, this.lens[id]!)];
    }
  }
}

function writeEntry(w: VarintWriter, gap: number, tf: number): void {
  if (tf > 1) {
    w.write(2 * gap + 1);
    w.write(tf);
  } else w.write(2 * gap);
}

/** Reads a postings blob's unsigned varints one by one; `offset` is where the next one starts. */
function varints(data: Uint8Array): { next: () => number; offset: () => number } {
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
  return { next, offset: () => i };
}

export type PostingVisitor = (runKey: number, pos: number, tf: number) => void;

/** Visits the entries of one postings blob; `wantRun` lets a reader skip whole runs it does not need. */
export function decodePostings(data: Uint8Array, visit: PostingVisitor, wantRun: (runKey: number) => boolean = () => true): void {
  const { next, offset } = varints(data);
  while (offset() < data.length) {
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

/**
 * The groups of a postings blob whose run `wantRun` accepts, as the blob's own bytes: a group is
 * self-contained (its first gap counts from -1), so it is copied, not decoded and encoded again. What a
 * merge writes is exactly what encodeGroups makes of the same entries; a blob whose every group is
 * wanted is returned as it is. A group without entries (never written) is dropped, as decoding drops it.
 */
export function liveGroups(data: Uint8Array, wantRun: (runKey: number) => boolean): Uint8Array {
  // varints read inline (a merge reads every byte of every row: ~58 MB at 50k runs)
  const n = data.length;
  const ranges: number[] = [];
  let size = 0;
  let i = 0;
  while (i < n) {
    const start = i;
    let runKey = 0;
    let shift = 1;
    let b: number;
    do {
      if (i >= n) throw new IndexDamagedError('index postings end in the middle of an entry');
      b = data[i++]!;
      runKey += (b & 0x7f) * shift;
      shift *= 128;
    } while (b >= 0x80);
    let entries = 0;
    for (;;) {
      let v = 0;
      shift = 1;
      do {
        if (i >= n) throw new IndexDamagedError('index postings end in the middle of an entry');
        b = data[i++]!;
        v += (b & 0x7f) * shift;
        shift *= 128;
      } while (b >= 0x80);
      if (v === 0) break;
      entries++;
      // its tf
      if (v % 2 === 1)
        do {
          if (i >= n) throw new IndexDamagedError('index postings end in the middle of an entry');
          b = data[i++]!;
        } while (b >= 0x80);
    }
    if (entries > 0 && wantRun(runKey)) {
      ranges.push(start, i);
      size += i - start;
    }
  }
  if (size === n) return data;
  const out = Buffer.allocUnsafe(size);
  for (let k = 0, o = 0; k < ranges.length; k += 2) {
    out.set(data.subarray(ranges[k], ranges[k + 1]), o);
    o += ranges[k + 1]! - ranges[k]!;
  }
  return out;
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
