import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { EMPTY_DIGEST } from '../../src/store/content.js';

test('EMPTY_DIGEST, written out, is the SHA-256 of nothing as the digests are encoded (base64)', () => {
  assert.equal(EMPTY_DIGEST, createHash('sha256').digest('base64'));
});
