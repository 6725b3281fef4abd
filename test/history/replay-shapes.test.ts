import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { RunReplayer } from '../../src/history/replay.js';
import type { MediaCache } from '../../src/history/media.js';

// V8's own test of an object's hidden class: what optimized code checks before it runs
setFlagsFromString('--allow-natives-syntax');
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: unknown, b: unknown) => boolean;

const NO_MEDIA = { get: () => null } as unknown as MediaCache;

test('the replay lists have the map of filled ones while empty: code optimized on filled ones does not deoptimize at an empty one', () => {
  // an empty `[]` is an array of small integers to V8 until its first push; a replay's record and
  // keys start empty at every run, and an empty snapshot parses to no elements
  const filled = ['a'];
  const r = new RunReplayer('r1', NO_MEDIA);
  const lists = r as unknown as { entries: unknown[]; looseKeys: unknown[] };
  assert.ok(sameMap(lists.entries, filled), 'record of a run replayed from nothing');
  assert.ok(sameMap(lists.looseKeys, filled), 'its overlap keys');
  r.add({ seq: 1, stepIndex: 0, timestamp: null, messages: '[]' });
  assert.equal(r.lastSnapshot!.elements.length, 0);
  assert.ok(sameMap(r.lastSnapshot!.elements, filled), 'the elements of an empty snapshot');
  assert.ok(sameMap(lists.entries, filled), 'the record after an empty snapshot');
});
