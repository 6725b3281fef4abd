/** Python's `re.findall(r'\w+', text)` on str, then `str.lower()` per token (spec §5.1). */
let pattern: RegExp | undefined;
/**
 * `\w+` as Python's `re` reads it on str (global: callers match with matchAll, which copies it). Made on
 * first use, as every pattern with a `\p{…}` class is: V8 parses a pattern when its literal is evaluated,
 * looking up Unicode property tables (~1 ms here), and a module's top level runs at every start.
 */
export const tokenPattern = (): RegExp => (pattern ??= /[\p{L}\p{N}_]+/gu);

export const ASCII = /^[\x00-\x7f]*$/;

/** ASCII word characters: what `[\p{L}\p{N}_]` matches below 0x80 (digits, letters and `_`; a test compares them). */
export const ASCII_WORD = new Uint8Array(128);
for (let c = 0; c < 128; c++) ASCII_WORD[c] = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || c === 95 || (c >= 97 && c <= 122) ? 1 : 0;

/**
 * String methods called on a text rather than looked up on it: texts come in many string
 * representations (each its own map), which made `text.slice` a megamorphic lookup, a generic IC call
 * per token in optimized code.
 */
const slice = String.prototype.slice;
const toLowerCase = String.prototype.toLowerCase;

/**
 * Visits each lowercased token in order and returns how many there were. Every counter (the replayed
 * corpus, the index build) goes through here, so indexed and replayed statistics cannot drift apart.
 * With `lengths`, a caller that only looks for some tokens (the query's) may be spared the others: on
 * ASCII text a token whose length is not in it is counted but not visited.
 */
export function forEachToken(text: string, visit: (token: string) => void, lengths?: ReadonlySet<number>): number {
  let count = 0;
  if (ASCII.test(text)) {
    // in ASCII, lowercasing changes no token boundary (elsewhere it may: `İ` lowercases to two code
    // points, the second not a word character). A plain scan allocates only the tokens visited, and
    // lowercases only those with a capital: no lowercased copy of the whole text (a 200 MB message)
    const n = text.length;
    for (let i = 0; i < n; ) {
      if (ASCII_WORD[text.charCodeAt(i)] === 0) {
        i++;
        continue;
      }
      const start = i;
      let capital = false;
      for (; i < n; i++) {
        const c = text.charCodeAt(i);
        if (ASCII_WORD[c] === 0) break;
        if (c >= 65 && c <= 90) capital = true;
      }
      count++;
      if (!lengths || lengths.has(i - start)) {
        const token = slice.call(text, start, i);
        visit(capital ? toLowerCase.call(token) : token);
      }
    }
  } else {
    for (const m of text.matchAll(tokenPattern())) {
      count++;
      visit(m[0].toLowerCase());
    }
  }
  return count;
}

/**
 * Counts a query's terms in documents, as BM25 counts them: `count(text)` sets `counts[k]` to the
 * occurrences of `terms[k]` and returns the text's length in tokens.
 */
export class QueryTermCounter {
  readonly counts: Int32Array;
  private readonly lengths: ReadonlySet<number>;
  /** `wanted[n] === 1`: some term is `n` UTF-16 units long. */
  private readonly wanted: Uint8Array;
  private readonly index: ReadonlyMap<string, number>;
  private readonly visit: (token: string) => void;

  constructor(
    readonly terms: readonly string[],
    /** The tokenizer's `forEachToken` (default: the reference's). */
    private readonly each: typeof forEachToken = forEachToken,
  ) {
    const index = (this.index = new Map(terms.map((t, k) => [t, k])));
    const counts = (this.counts = new Int32Array(terms.length));
    this.lengths = new Set(terms.map((t) => t.length));
    this.wanted = new Uint8Array(Math.max(0, ...this.lengths) + 1);
    for (const n of this.lengths) this.wanted[n] = 1;
    this.visit = (t) => {
      const k = index.get(t);
      if (k !== undefined) counts[k]!++;
    };
  }

  count(text: string): number {
    this.counts.fill(0);
    return this.each === forEachToken ? this.countAscii(text) : this.each(text, this.visit, this.lengths);
  }

  /**
   * `forEachToken`'s ASCII scan with the counting inlined (no callback per token, no length set): the
   * replay counts every message of the scope through here. The first non-ASCII character hands the
   * whole text to `forEachToken`, which then takes the Unicode path, as it would have from the start.
   */
  private countAscii(text: string): number {
    const { counts, wanted, index } = this;
    const n = text.length;
    let count = 0;
    for (let i = 0; i < n; ) {
      let c = text.charCodeAt(i);
      if (c >= 128) {
        counts.fill(0);
        return forEachToken(text, this.visit, this.lengths);
      }
      if (ASCII_WORD[c] === 0) {
        i++;
        continue;
      }
      const start = i;
      let capital = false;
      // a non-ASCII character ends the token here; the outer loop then hands the text over
      for (; i < n; i++) {
        c = text.charCodeAt(i);
        if (c >= 128 || ASCII_WORD[c] === 0) break;
        if (c >= 65 && c <= 90) capital = true;
      }
      count++;
      const len = i - start;
      if (len < wanted.length && wanted[len] === 1) {
        const token = slice.call(text, start, i);
        const k = index.get(capital ? toLowerCase.call(token) : token);
        if (k !== undefined) counts[k]!++;
      }
    }
    return count;
  }
}

export function tokenize(text: string): string[] {
  const out: string[] = [];
  forEachToken(text, (t) => out.push(t));
  return out;
}

/** Query tokens deduplicated, first occurrence kept (spec §5.2). */
export function queryTokens(query: string): string[] {
  return [...new Set(tokenize(query))];
}
