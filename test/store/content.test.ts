import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { ContentDigester, EMPTY_DIGEST, hashCell } from '../../src/store/content.js';

test('a run with no rows digests to EMPTY_DIGEST (what the readers write for no media), the SHA-256 of nothing in base64', () => {
  assert.deepEqual(new ContentDigester(0).finish(), { count: 0, maxSeq: 0, digest: EMPTY_DIGEST, prefix: EMPTY_DIGEST });
  assert.equal(EMPTY_DIGEST, createHash('sha256').digest('base64'));
});

test('a row is digested as hashCell makes each of its cells, whatever mix of short and long texts, blobs and numbers it holds', () => {
  const texts = [
    '',
    'a',
    'é',
    '\u{1F600}',
    '\ud800',
    '\udc00x',
    'x'.repeat(255),
    'y'.repeat(256),
    'z'.repeat(257),
    `${'w'.repeat(300)}\ud83d`,
    '\u0000s3\u0000',
  ];
  const cells: unknown[] = [...texts, null, undefined, 0, -1.5, 42, 10n, Buffer.from('blob'), Buffer.alloc(0), true];
  let seed = 7;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let round = 0; round < 200; round++) {
    const rows = Array.from({ length: 1 + next(4) }, () => Array.from({ length: next(8) }, () => cells[next(cells.length)]));
    const d = new ContentDigester(0);
    const want = createHash('sha256');
    rows.forEach((row, seq) => {
      d.add(seq + 1, row);
      for (const v of row) hashCell(want, v);
    });
    assert.equal(
      d.finish().digest,
      want.digest('base64'),
      JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)),
    );
  }
});
