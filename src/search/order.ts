/**
 * The order hits are printed in: by rank (score, the reference's), or by the message's time, oldest
 * first, ties by rank, undated last; `reverse` turns either around. Which messages are hits is decided
 * by rank first (`-m`), so this never changes what is shown, only its order.
 */
export type HitSort = 'score' | 'time';

export function orderHits<H extends { readonly rank: number; readonly time: number | null }>(
  hits: readonly H[],
  sort: HitSort,
  reverse: boolean,
): H[] {
  const out = hits.slice();
  if (sort === 'time') {
    out.sort((a, b) => {
      if (a.time === null || b.time === null) return a.time === b.time ? a.rank - b.rank : a.time === null ? 1 : -1;
      return a.time - b.time || a.rank - b.rank;
    });
  }
  return reverse ? out.reverse() : out;
}
