import { TOKEN_PATTERN } from '../search/tokenize.js';
import { readVarints, VarintWriter } from './varint.js';

/** Token count of a document and its term frequencies, exactly as BM25 counts them. */
export function termFrequencies(text: string): { length: number; tf: Map<string, number> } {
  const tf = new Map<string, number>();
  let length = 0;
  for (const m of text.matchAll(TOKEN_PATTERN)) {
    length++;
    const t = m[0].toLowerCase();
    tf.set(t, (tf.get(t) ?? 0) + 1);
  }
  return { length, tf };
}

/** One segment's postings being built: term → entries (run_key, pos, tf, dl) as varints. */
export class SegmentBuilder {
  readonly terms = new Map<string, VarintWriter>();

  add(runKey: number, pos: number, dl: number, tf: ReadonlyMap<string, number>): void {
    for (const [term, f] of tf) {
      let w = this.terms.get(term);
      if (!w) this.terms.set(term, (w = new VarintWriter()));
      w.write(runKey);
      w.write(pos);
      w.write(f);
      w.write(dl);
    }
  }
}

export interface Posting {
  readonly runKey: number;
  readonly pos: number;
  readonly tf: number;
  readonly dl: number;
}

export function decodePostings(data: Uint8Array, visit: (runKey: number, pos: number, tf: number, dl: number) => void): void {
  const v = readVarints(data);
  for (let i = 0; i + 3 < v.length; i += 4) visit(v[i]!, v[i + 1]!, v[i + 2]!, v[i + 3]!);
}

export function encodePostings(entries: readonly Posting[]): Buffer {
  const w = new VarintWriter(entries.length * 6 + 8);
  for (const e of entries) {
    w.write(e.runKey);
    w.write(e.pos);
    w.write(e.tf);
    w.write(e.dl);
  }
  return w.bytes();
}
