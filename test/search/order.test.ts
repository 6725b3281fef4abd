import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { orderHits } from '../../src/search/order.js';

const HITS = [
  { rank: 0, time: 30 },
  { rank: 1, time: null },
  { rank: 2, time: 10 },
  { rank: 3, time: 10 },
  { rank: 4, time: null },
  { rank: 5, time: -5 },
] as const;
const ranks = (hs: ReadonlyArray<{ rank: number }>) => hs.map((h) => h.rank);

describe('search/order', () => {
  test('by score keeps rank order; reversed turns it around', () => {
    assert.deepEqual(ranks(orderHits(HITS, 'score', false)), [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(ranks(orderHits(HITS, 'score', true)), [5, 4, 3, 2, 1, 0]);
  });

  test('by time: oldest first, ties by rank, undated last by rank', () => {
    assert.deepEqual(ranks(orderHits(HITS, 'time', false)), [5, 2, 3, 0, 1, 4]);
    assert.deepEqual(ranks(orderHits(HITS, 'time', true)), [4, 1, 0, 3, 2, 5]);
  });

  test('the input is not reordered and nothing is added or lost', () => {
    const input = [...HITS];
    const out = orderHits(input, 'time', true);
    assert.deepEqual(ranks(input), [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(ranks(out).sort(), [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(orderHits([], 'time', false), []);
  });

  test('all undated hits by time stay in rank order', () => {
    const undated = [
      { rank: 2, time: null },
      { rank: 0, time: null },
      { rank: 1, time: null },
    ];
    assert.deepEqual(ranks(orderHits(undated, 'time', false)), [0, 1, 2]);
  });
});
