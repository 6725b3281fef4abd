import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { ContentDigester, EMPTY_DIGEST } from '../../src/store/content.js';

test('a run with no rows digests to EMPTY_DIGEST (what the readers write for no media), the SHA-256 of nothing in base64', () => {
  assert.deepEqual(new ContentDigester(0).finish(), { count: 0, maxSeq: 0, digest: EMPTY_DIGEST, prefix: EMPTY_DIGEST });
  assert.equal(EMPTY_DIGEST, createHash('sha256').digest('base64'));
});
