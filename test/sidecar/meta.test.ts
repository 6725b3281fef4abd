import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EMPTY_META, liveSegment, readIndexMeta } from '../../src/sidecar/meta.js';
import { IndexDamagedError } from '../../src/sidecar/errors.js';

const damaged = (message: string) => (e: unknown) => e instanceof IndexDamagedError && e.message === message;

describe('sidecar/meta', () => {
  test('the meta of an empty index reads back as nothing seen, segments and run keys starting at 1', () => {
    assert.deepEqual(readIndexMeta(new Map(EMPTY_META)), {
      runCount: 0,
      nextSegment: 1,
      nextRunKey: 1,
      compacted: 0,
      base: 0,
      merged: 0,
      tierFrom: 0,
      tierSegments: [],
      baseBytes: 0,
      tierBytes: 0,
      liveSegments: 0,
      content: '',
      mediaCount: 0,
      // base64 SHA-256 of nothing
      mediaDigest: '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=',
      storeStamp: '',
      generation: 0,
    });
  });

  test('counts up to the largest safe integer are read exactly', () => {
    const meta = new Map(EMPTY_META);
    meta.set('run_count', '9007199254740991');
    meta.set('next_segment', '42');
    assert.equal(readIndexMeta(meta).runCount, Number.MAX_SAFE_INTEGER);
    assert.equal(readIndexMeta(meta).nextSegment, 42);
  });

  test('each missing key is damage, named', () => {
    for (const [key] of EMPTY_META) {
      const meta = new Map(EMPTY_META);
      meta.delete(key);
      assert.throws(() => readIndexMeta(meta), damaged(`the index meta lacks ${key}`));
    }
  });

  test('a count that is not a plain non-negative decimal integer is damage', () => {
    for (const bad of ['-1', '1.5', 'abc', 'NaN', 'Infinity', '9007199254740992', '', ' ', ' 7', '0x10', '1e3']) {
      const meta = new Map(EMPTY_META);
      meta.set('run_count', bad);
      assert.throws(() => readIndexMeta(meta), damaged('the index meta run_count is not a count'), JSON.stringify(bad));
    }
  });

  test('a run lives in its own segment unless a later compaction merged it', () => {
    const base = (compacted: number) => ({ compacted, base: compacted, merged: 0 });
    assert.equal(liveSegment(3, base(0)), 3);
    assert.equal(liveSegment(3, base(5)), 5);
    assert.equal(liveSegment(7, base(5)), 7);
    assert.equal(liveSegment(5, base(5)), 5);
  });

  test('segments after the base merged into the tier live there; the base and later segments are untouched', () => {
    const at = { compacted: 5, base: 5, merged: 9 };
    assert.equal(liveSegment(2, at), 5);
    assert.equal(liveSegment(6, at), 9);
    assert.equal(liveSegment(9, at), 9);
    assert.equal(liveSegment(10, at), 10);
  });

  test("a build's segments are the base, each its runs' own; later ones are merged into the tier", () => {
    const at = { compacted: 0, base: 4, merged: 7 };
    assert.equal(liveSegment(1, at), 1);
    assert.equal(liveSegment(4, at), 4);
    assert.equal(liveSegment(5, at), 7);
    assert.equal(liveSegment(8, at), 8);
  });
});
