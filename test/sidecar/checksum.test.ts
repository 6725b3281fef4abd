import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { rowSum, verifyRow } from '../../src/sidecar/checksum.js';
import { IndexDamagedError } from '../../src/sidecar/errors.js';

describe('sidecar/checksum', () => {
  test('the sum is CRC-32 of the typed row encoding (values pinned: the sums are stored on disk)', () => {
    // computed independently with Python's zlib.crc32
    assert.equal(rowSum([]), 0);
    assert.equal(rowSum(['']), 852232284); // crc32(b's\x01')
    assert.equal(rowSum(['abc', 42, null]), 3228211195); // crc32(b'sabc\x01n42\x01\x02\x01')
    assert.equal(rowSum([-1.5]), 354361906); // crc32(b'n-1.5\x01')
    // bytes: crc32(b'\x039\x01', crc32(b'123456789')); crc32(b'123456789') is the standard check value
    assert.equal(rowSum([Buffer.from('123456789')]), 202398529);
  });

  test('values of different types or boundaries sum differently', () => {
    const rows = [[null], [''], ['0'], [0], [new Uint8Array(0)], ['ab'], ['a', 'b'], ['a', null], [Buffer.from('ab')]];
    const sums = new Set(rows.map((r) => rowSum(r)));
    assert.equal(sums.size, rows.length);
  });

  test('one flipped bit in a blob or one changed character changes the sum', () => {
    const blob = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
    const base = rowSum(['term', 3, blob]);
    for (let i = 0; i < blob.length * 8; i++) {
      const copy = Uint8Array.from(blob);
      copy[i >> 3]! ^= 1 << (i & 7);
      assert.notEqual(rowSum(['term', 3, copy]), base);
    }
    assert.notEqual(rowSum(['terM', 3, blob]), base);
    assert.notEqual(rowSum(['term', 4, blob]), base);
  });

  test('an empty blob after another sums the same written and read back from SQLite (which hands it out with no data pointer)', () => {
    const db = new Database(':memory:');
    try {
      db.exec('CREATE TABLE t (a BLOB NOT NULL, b BLOB NOT NULL, sum INTEGER NOT NULL)');
      const written = [Buffer.from('numbers'), Buffer.concat([])];
      db.prepare('INSERT INTO t VALUES (?, ?, ?)').run(...written, rowSum(written));
      const r = db.prepare('SELECT a, b, sum FROM t').get() as { a: Buffer; b: Buffer; sum: number };
      assert.equal(r.b.length, 0);
      verifyRow('corpus_cache', [r.a, r.b], r.sum);
      assert.notEqual(rowSum([r.a, r.b]), rowSum([r.a]), 'the empty blob still counts as a value');
    } finally {
      db.close();
    }
  });

  test('verifyRow passes the right sum and names the table otherwise', () => {
    const row = ['x', 1, Uint8Array.from([9])];
    verifyRow('postings', row, rowSum(row));
    for (const bad of [rowSum(row) ^ 1, String(rowSum(row)), undefined, null]) {
      assert.throws(
        () => verifyRow('postings', row, bad),
        (e: unknown) => e instanceof IndexDamagedError && e.message === 'a postings row fails its checksum',
      );
    }
  });
});
