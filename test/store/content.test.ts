import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { ContentDigester, EMPTY_DIGEST } from '../../src/store/content.js';

test('a run with no rows digests to EMPTY_DIGEST (what the readers write for no media), the SHA-256 of nothing in base64', () => {
  assert.deepEqual(new ContentDigester(0).finish(), { count: 0, maxSeq: 0, digest: EMPTY_DIGEST, prefix: EMPTY_DIGEST });
  assert.equal(EMPTY_DIGEST, createHash('sha256').digest('base64'));
});

test('totalDigest hashes in batches the bytes hashCell makes of each key, then its count, last seq and digest: the same digest as one update per cell', async () => {
  const { hashCell, totalDigest } = await import('../../src/store/content.js');
  const runs = new Map<string, { count: number; maxSeq: number; digest: string; prefix: string }>();
  // more than one batch (64K characters), keys with lone and paired surrogates, NULs, a non-text key's form
  for (let i = 0; i < 3000; i++) runs.set(`run-${i}-${'x'.repeat(i % 40)}`, { count: i, maxSeq: i * 3, digest: `d${i}`, prefix: '' });
  for (const key of ['\uD800', 'a\uDC00', '\uD83D\uDE00z', '\u0000number:7', '', 'é\uD800'])
    runs.set(key, { count: 1, maxSeq: 2, digest: EMPTY_DIGEST, prefix: '' });
  const media = { count: 4, maxSeq: 0, digest: 'm', prefix: 'm' };
  const one = createHash('sha256').update(`table\n${media.count}:${media.digest}\n`);
  for (const key of [...runs.keys()].sort()) {
    const r = runs.get(key)!;
    hashCell(one, key);
    one.update(`${r.count}:${r.maxSeq}:${r.digest}\n`);
  }
  assert.equal(totalDigest(runs, media, 'table'), one.digest('base64'));
});
