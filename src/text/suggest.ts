/**
 * "did you mean …?": the known ids closest to a mistyped one, by case-insensitive edit distance; ties go
 * to ids that extend what was typed, then to those closer in case, so `conv-X` finds `conv-x1` first.
 */
export function closestIds(wanted: string, known: Iterable<string>, limit = 3): string[] {
  const w = wanted.toLowerCase();
  // farther than about a third of the id is a different id, not a typo
  const bound = Math.max(2, Math.ceil(Math.max(wanted.length, 1) / 3));
  const scored: Array<{ id: string; key: [number, number, number] }> = [];
  for (const id of new Set(known)) {
    if (id === wanted) continue;
    const lower = id.toLowerCase();
    const extends_ = w.length >= 3 && lower.startsWith(w);
    // an id that extends what was typed is a likely target however long its tail (`conv-pay` → `conv-payments`)
    const d = extends_ ? Math.min(editDistance(w, lower, bound), bound) : editDistance(w, lower, bound);
    if (d > bound) continue;
    scored.push({ id, key: [d, extends_ ? 0 : 1, editDistance(wanted, id, bound * 2)] });
  }
  scored.sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1] || a.key[2] - b.key[2] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return scored.slice(0, limit).map((s) => s.id);
}

/** Levenshtein distance over code points; anything above `bound` is reported as bound + 1. */
export function editDistance(a: string, b: string, bound = Infinity): number {
  const x = Array.from(a);
  const y = Array.from(b);
  if (Math.abs(x.length - y.length) > bound) return bound + 1;
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= y.length; j++) {
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
      cur.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > bound) return bound + 1;
    prev = cur;
  }
  return Math.min(prev[y.length]!, bound + 1);
}

/** ` (did you mean a, b?)`, or nothing when no id is close. */
export function didYouMean(ids: readonly string[]): string {
  return ids.length ? `; did you mean ${ids.join(', ')}?` : '';
}
