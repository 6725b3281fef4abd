/**
 * The filter of every run's message keys (key-filter.ts): never says a key added is absent, rarely says
 * one not added may be there, counts the keys that changed it, says when it is full, and is kept in the
 * index as it was put (tables.ts, pages row 8), a malformed row an IndexDamagedError.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { rowSum } from '../../src/sidecar/checksum.js';
import { IndexDamagedError } from '../../src/sidecar/errors.js';
import { SqliteIndexDb } from '../../src/sidecar/index-db.js';
import { KeyFilter } from '../../src/sidecar/key-filter.js';
import { IndexTables } from '../../src/sidecar/tables.js';
import { sync } from '../helpers/index-answers.js';
import { threadedStore } from '../helpers/random-stores.js';
import { tempDir } from '../helpers/stores.js';

/** Key `i` of family `f` (SHA-1, as run-writer.ts keys are), at offset `at` of a buffer of its own. */
function key(f: string, i: number, at = 0): Buffer {
  return Buffer.concat([Buffer.alloc(at, 0xee), createHash('sha1').update(`${f} ${i}`).digest(), Buffer.alloc(3, 0xee)]);
}

test('a key added is never said to be absent, wherever it lies in its buffer; few keys not added are said to be there', () => {
  const n = 20_000;
  const f = KeyFilter.sized(n);
  for (let i = 0; i < n; i++) assert.equal(f.add(key('in', i, i % 7), i % 7), true, `key ${i} is new`);
  assert.equal(f.added, n);
  for (let i = 0; i < n; i++) assert.ok(f.mayHold(key('in', i, (i * 3) % 5), (i * 3) % 5), `key ${i} added`);
  let maybe = 0;
  for (let i = 0; i < n; i++) if (f.mayHold(key('out', i), 0)) maybe++;
  assert.ok(maybe / n < 0.005, `${maybe} of ${n} keys not added may be there`);
  assert.equal(f.full, false);
});

test('a key added again changes nothing and is not counted; past 8 bits a key added the filter is full', () => {
  const f = KeyFilter.sized(10);
  assert.equal(f.bits.length, 8192);
  assert.equal(f.add(key('a', 1), 0), true);
  const before = Buffer.from(f.bits);
  assert.equal(f.add(key('a', 1, 2), 2), false);
  assert.equal(f.added, 1);
  assert.ok(before.equals(f.bits));
  for (let i = 2; f.added <= 8192; i++) f.add(key('a', i), 0);
  assert.equal(f.full, true);
  assert.equal(KeyFilter.sized(100_000).bits.length, 256 * 1024, '16 bits a key, in a power of two of bytes');
});

test('a filter is a power of two of 64 bytes or more, with a count of keys', () => {
  for (const [bytes, added, sound] of [
    [64, 0, true],
    [8192, 5, true],
    [96, 0, false],
    [32, 0, false],
    [8192, -1, false],
    [8192, 1.5, false],
  ] as const) {
    assert.equal(KeyFilter.sound(bytes, added), sound, `${bytes} bytes, ${added} keys`);
    if (!sound) assert.throws(() => new KeyFilter(new Uint8Array(Math.max(0, bytes)), added), RangeError);
  }
});

test('the index keeps the filter as put (its parts that did not change are left as they were); a malformed row is damage', () => {
  const { path } = threadedStore(101);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  const db = new Database(index);
  try {
    const t = new IndexTables(new SqliteIndexDb(db));
    const built = t.keyFilter()!;
    assert.ok(built !== null && built.added > 0, 'a build keeps a filter of every key');
    const big = KeyFilter.sized(40_000);
    for (let i = 0; i < 1000; i++) big.add(key('big', i), 0);
    t.beginImmediate();
    t.keyFilter();
    t.putKeyFilter(big);
    t.commit();
    const back = t.keyFilter()!;
    assert.equal(back.added, 1000);
    assert.ok(Buffer.from(back.bits).equals(Buffer.from(big.bits)));
    // one key more: one 32 KiB part of the row written again
    const parts = (): Map<number, number> =>
      new Map(
        (db.prepare('SELECT id, sum FROM pages WHERE id > ? ORDER BY id').all(8 * 2 ** 24 - 1) as Array<{ id: number; sum: number }>).map(
          (r) => [r.id, r.sum],
        ),
      );
    const was = parts();
    t.beginImmediate();
    const kept = t.keyFilter()!;
    assert.equal(kept.add(key('one more', 0), 0), true);
    t.putKeyFilter(kept);
    t.commit();
    const now = parts();
    assert.equal(now.size, was.size);
    assert.equal([...now].filter(([id, sum]) => was.get(id) !== sum).length, 1, 'one part changed');
    // a head, under a sound checksum, that says the filter took -4 keys; and one changed behind the checksum
    const head = (db.prepare('SELECT head FROM pages WHERE id = 8').pluck().get() as string).replace('"added":1001', '"added":-4');
    db.prepare('UPDATE pages SET head = ?, sum = ? WHERE id = 8').run(head, rowSum([8, head, Buffer.alloc(0)]));
    assert.throws(() => t.keyFilter(), /the key filter row is malformed/);
    db.prepare('UPDATE pages SET head = ? WHERE id = 8').run(head.replace('-4', '4'));
    assert.throws(() => t.keyFilter(), IndexDamagedError);
  } finally {
    db.close();
  }
});
