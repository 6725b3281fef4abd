/**
 * Longest L such that the last L entries of `history` equal the first L of `next` (spec §3.2).
 * KMP over `next` as the pattern and the tail of `history` as the text: linear, and the same answer
 * as the reference's scan from the longest candidate down.
 */
export function longestOverlap(history: readonly string[], next: readonly string[]): number {
  const m = Math.min(history.length, next.length);
  if (m === 0) return 0;
  const fail = new Int32Array(next.length);
  for (let i = 1, k = 0; i < next.length; i++) {
    while (k > 0 && next[i] !== next[k]) k = fail[k - 1]!;
    if (next[i] === next[k]) k++;
    fail[i] = k;
  }
  let q = 0;
  for (let i = history.length - m; i < history.length; i++) {
    while (q > 0 && (q === next.length || history[i] !== next[q])) q = fail[q - 1]!;
    if (history[i] === next[q]) q++;
  }
  return q;
}
