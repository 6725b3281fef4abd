import { mulberry32 } from '../../scripts/lib/random.js';

/**
 * Integers in [0, n) from mulberry32, seeded so that a failure reproduces. (The LCGs the tests wrote by
 * hand computed `seed * 1103515245` in doubles: past 2^53 the product lost its low bits, and `seed % n`
 * stuck, so a random document was never an array or an object, and no overlaid key was ever removed.)
 */
export function draws(seed: number): (n: number) => number {
  const next = mulberry32(seed);
  return (n) => Math.floor(next() * n);
}
