import { test } from 'node:test';
import assert from 'node:assert/strict';
import { longestOverlap } from '../../src/history/overlap.js';
import { mulberry32 as rng } from '../../scripts/lib/random.js';

/** The reference scan (§3.2): the longest L from min(len) down to 1 with history[-L:] == next[:L]. */
function referenceOverlap(history: readonly string[], next: readonly string[]): number {
  for (let L = Math.min(history.length, next.length); L > 0; L--) {
    let ok = true;
    for (let i = 0; i < L; i++) {
      if (history[history.length - L + i] !== next[i]) {
        ok = false;
        break;
      }
    }
    if (ok) return L;
  }
  return 0;
}

test('examples from the spec', () => {
  assert.equal(longestOverlap(['R'], ['R', 'R', 'reply']), 1);
  assert.equal(longestOverlap(['orig', 'reply'], ['reply', 'follow']), 1);
  assert.equal(longestOverlap(['a', 'b', 'X', 'Y'], ['X', 'Y', 'Z']), 2);
  assert.equal(longestOverlap([], ['a']), 0);
  assert.equal(longestOverlap(['a'], []), 0);
  assert.equal(longestOverlap(['a', 'a', 'a'], ['a', 'a', 'a', 'a']), 3);
  assert.equal(longestOverlap(['a', 'b', 'a', 'b', 'a'], ['a', 'b', 'a', 'c']), 3);
  assert.equal(longestOverlap(['x', 'y'], ['y', 'x']), 1);
});

test('KMP overlap equals the quadratic reference scan on random key arrays (fixed seed)', () => {
  const next = rng(0x5eed);
  for (let iter = 0; iter < 20000; iter++) {
    const alphabet = 1 + Math.floor(next() * 4); // small alphabets make long, periodic overlaps likely
    const gen = (n: number) => Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(next() * alphabet)));
    const history = gen(Math.floor(next() * 14));
    let snap = gen(Math.floor(next() * 14));
    if (next() < 0.5 && history.length > 0) {
      // typical replay shape: the snapshot starts with a suffix of the history, then adds messages
      const k = 1 + Math.floor(next() * history.length);
      snap = [...history.slice(history.length - k), ...snap];
    }
    const want = referenceOverlap(history, snap);
    assert.equal(longestOverlap(history, snap), want, `history=${history.join('')} next=${snap.join('')}`);
  }
});
