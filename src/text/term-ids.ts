import { ASCII, ASCII_WORD, tokenPattern } from './tokenize.js';

/** Slots of the table at first (a power of two); it doubles past half full. */
const FIRST_SLOTS = 1 << 12;

/** FNV-1a step over one UTF-16 unit. */
const step = (h: number, c: number): number => Math.imul(h ^ c, 0x01000193);
/** Spreads a hash's bits into the low ones, which pick the slot (murmur3's finalizer). */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * Dense ids for the tokens of texts, in first-seen order: `forEachToken`'s tokens (the same split, the
 * same lowercasing), each visited as its id. On ASCII text a token already seen is found by its
 * characters in place (hashed while scanning, compared with the stored term): no string is made for
 * it, where a `Map<string, number>` needs a sliced, lowercased and then hashed string per token (the
 * index build counts every token of the store).
 */
export class TermIds {
  /** Id → term. */
  readonly terms: string[] = [];
  /** Id → its term's hash. */
  private hashes = new Int32Array(FIRST_SLOTS >> 1);
  /** Open addressing, linear probing: id + 1, 0 for an empty slot. */
  private slots = new Int32Array(FIRST_SLOTS);
  private mask = FIRST_SLOTS - 1;

  /** Visits the id of each token of `text` in order; returns how many tokens there were. */
  forEachId(text: string, visit: (id: number) => void): number {
    if (!ASCII.test(text)) {
      let count = 0;
      for (const m of text.matchAll(tokenPattern())) {
        count++;
        visit(this.idOf(m[0].toLowerCase()));
      }
      return count;
    }
    const n = text.length;
    let count = 0;
    for (let i = 0; i < n; ) {
      if (ASCII_WORD[text.charCodeAt(i)] === 0) {
        i++;
        continue;
      }
      const start = i;
      let h = 0x811c9dc5 | 0;
      for (; i < n; i++) {
        let c = text.charCodeAt(i);
        if (ASCII_WORD[c] === 0) break;
        if (c >= 65 && c <= 90) c += 32;
        h = step(h, c);
      }
      count++;
      visit(this.findAscii(text, start, i, mix(h)));
    }
    return count;
  }

  /** The id of an ASCII token `text[start..end)` (lowercased) whose hash is `h`, made when new. */
  private findAscii(text: string, start: number, end: number, h: number): number {
    const len = end - start;
    const { slots, hashes, terms, mask } = this;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const id = slots[s]! - 1;
      if (id < 0) return this.add(text.slice(start, end).toLowerCase(), h, s);
      if (hashes[id] !== h) continue;
      const term = terms[id]!;
      if (term.length !== len) continue;
      let k = 0;
      for (; k < len; k++) {
        let c = text.charCodeAt(start + k);
        if (c >= 65 && c <= 90) c += 32;
        if (term.charCodeAt(k) !== c) break;
      }
      if (k === len) return id;
    }
  }

  /** The id of a term (already lowercased), made when new. */
  idOf(term: string): number {
    let h = 0x811c9dc5 | 0;
    for (let k = 0; k < term.length; k++) h = step(h, term.charCodeAt(k));
    h = mix(h);
    const { slots, hashes, terms, mask } = this;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const id = slots[s]! - 1;
      if (id < 0) return this.add(term, h, s);
      if (hashes[id] === h && terms[id] === term) return id;
    }
  }

  private add(term: string, h: number, slot: number): number {
    const id = this.terms.length;
    this.terms.push(term);
    if (id >= this.hashes.length) {
      const grown = new Int32Array(this.hashes.length * 2);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.hashes[id] = h;
    this.slots[slot] = id + 1;
    if (2 * (id + 1) > this.slots.length) this.grow();
    return id;
  }

  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let id = 0; id < this.terms.length; id++) {
      let s = this.hashes[id]! & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = id + 1;
    }
    this.slots = slots;
    this.mask = mask;
  }
}
