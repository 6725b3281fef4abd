import { pyFloatRepr } from '../py/repr.js';
import type { SearchOptions } from '../search/search.js';
import { RequestError } from './errors.js';

/**
 * The reference tool's own checks of its parameters (spec §7), with its messages: a library call and
 * the command line reject the same values the same way.
 */
export function checkNonNegative(name: string, n: number): number {
  if (n < 0) throw new RequestError(`${name} must be non-negative, got ${n}.`);
  return n;
}

export function checkK1(k1: number): number {
  if (!Number.isFinite(k1) || k1 < 0) throw new RequestError(`bm25_k1 must be a non-negative finite number, got ${pyFloatRepr(k1)}.`);
  return k1;
}

export function checkB(b: number): number {
  if (!(b >= 0 && b <= 1)) throw new RequestError(`bm25_b must be between 0.0 and 1.0, got ${pyFloatRepr(b)}.`);
  return b;
}

/** All of them, in the reference's order. */
export function checkSearchOptions(o: SearchOptions): void {
  checkNonNegative('max_matches', o.maxMatches);
  checkNonNegative('context_lines', o.contextLines);
  checkK1(o.bm25.k1);
  checkB(o.bm25.b);
}
