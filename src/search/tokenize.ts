/** Python's `re.findall(r'\w+', text)` on str, then `str.lower()` per token (spec §5.1). */
export const TOKEN_PATTERN = /[\p{L}\p{N}_]+/gu;

const ASCII = /^[\x00-\x7f]*$/;

/**
 * Visits each lowercased token in order and returns how many there were. Every counter (the replayed
 * corpus, the index build) goes through here, so indexed and replayed statistics cannot drift apart.
 */
export function forEachToken(text: string, visit: (token: string) => void): number {
  let count = 0;
  // For ASCII text, lowercasing first gives the same tokens and saves a call per token; elsewhere it
  // would not (`İ` lowercases to two code points, the second not a word character).
  if (ASCII.test(text)) {
    for (const m of text.toLowerCase().matchAll(TOKEN_PATTERN)) {
      count++;
      visit(m[0]);
    }
  } else {
    for (const m of text.matchAll(TOKEN_PATTERN)) {
      count++;
      visit(m[0].toLowerCase());
    }
  }
  return count;
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
