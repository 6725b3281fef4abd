import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expandTarget, sameStore, targetSet, storeTargets } from '../../src/api/stores.js';
import { StoreError } from '../../src/store/errors.js';

/** A fresh directory for one test, removed after it. */
function inDir(run: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'stores-'));
  try {
    run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const notices = (targets: string[]) => targetSet(targets).notices.map((n) => `${n.kind}: ${n.detail}`);

describe('api/stores', () => {
  test('a directory of .db files names each of them, sorted, other entries ignored', () => {
    inDir((dir) => {
      for (const n of ['b.db', 'a.db', 'notes.txt', 'c.db-wal', 'A.db']) writeFileSync(join(dir, n), '');
      assert.deepEqual(expandTarget(dir), { stores: [join(dir, 'A.db'), join(dir, 'a.db'), join(dir, 'b.db')], unreadable: [] });
    });
  });

  test('a file, a missing path, a URL and a directory without .db files are one store each, as given', () => {
    inDir((dir) => {
      writeFileSync(join(dir, 'x.txt'), '');
      assert.deepEqual(expandTarget(dir), { stores: [dir], unreadable: [] });
      assert.deepEqual(expandTarget(join(dir, 'x.txt')), { stores: [join(dir, 'x.txt')], unreadable: [] });
      assert.deepEqual(expandTarget(join(dir, 'absent.db')), { stores: [join(dir, 'absent.db')], unreadable: [] });
      assert.deepEqual(expandTarget('postgresql://h/db'), { stores: ['postgresql://h/db'], unreadable: [] });
    });
  });

  test('a FileStepStore directory (a run.json or media/) is one store even with .db entries', () => {
    inDir((dir) => {
      writeFileSync(join(dir, 'stray.db'), '');
      mkdirSync(join(dir, 'run-1'));
      writeFileSync(join(dir, 'run-1', 'run.json'), '{}');
      assert.deepEqual(expandTarget(dir).stores, [dir]);
    });
    inDir((dir) => {
      writeFileSync(join(dir, 'stray.db'), '');
      mkdirSync(join(dir, 'media'));
      assert.deepEqual(expandTarget(dir).stores, [dir]);
    });
  });

  test('.db entries that are not readable files are listed with why, never opened', () => {
    inDir((dir) => {
      writeFileSync(join(dir, 'good.db'), '');
      mkdirSync(join(dir, 'sub.db'));
      symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling.db'));
      symlinkSync(join(dir, 'loop.db'), join(dir, 'loop.db'));
      assert.deepEqual(expandTarget(dir), {
        stores: [join(dir, 'good.db')],
        unreadable: [
          `${join(dir, 'dangling.db')}: a dangling symlink`,
          `${join(dir, 'loop.db')}: a symlink loop`,
          `${join(dir, 'sub.db')}: a directory, not a file`,
        ],
      });
    });
  });

  test('a directory whose .db entries are all unreadable is an error naming each', () => {
    inDir((dir) => {
      mkdirSync(join(dir, 'only.db'));
      assert.throws(
        () => expandTarget(dir),
        (e: unknown) =>
          e instanceof StoreError &&
          e.message === `${dir}: none of its 1 .db entries can be read (${join(dir, 'only.db')}: a directory, not a file)`,
      );
    });
  });

  test('a store reached again by another path, a symlink or a hard link is kept once, under its first label', () => {
    inDir((dir) => {
      const a = join(dir, 'a.db');
      writeFileSync(a, '');
      symlinkSync(a, join(dir, 'link.db'));
      linkSync(a, join(dir, 'hard.db'));
      const again = `${dir}/./a.db`;
      assert.deepEqual(storeTargets([a, again, join(dir, 'link.db'), join(dir, 'hard.db'), a]), [a]);
      assert.deepEqual(notices([a, again, a]), [`same-store: ${again} is ${a}`, `same-store: ${a} named twice`]);
    });
  });

  test('a file named directly and again through its directory is read once, with a notice', () => {
    inDir((dir) => {
      const sub = join(dir, 'stores');
      mkdirSync(sub);
      for (const n of ['a.db', 'b.db']) writeFileSync(join(sub, n), '');
      mkdirSync(join(sub, 'bad.db'));
      const set = targetSet([join(sub, 'b.db'), sub]);
      assert.deepEqual(set.targets, [join(sub, 'b.db'), join(sub, 'a.db')]);
      assert.deepEqual(
        set.notices.map((n) => `${n.kind}: ${n.detail}`),
        [`unreadable-entry: ${join(sub, 'bad.db')}: a directory, not a file`, `same-store: ${join(sub, 'b.db')} named twice`],
      );
    });
  });

  test('paths that do not exist and URLs are never merged: opening says what they are', () => {
    assert.deepEqual(storeTargets(['postgresql://h/db', 'postgresql://h/db', '/no/such.db', '/no/such.db']), [
      'postgresql://h/db',
      'postgresql://h/db',
      '/no/such.db',
      '/no/such.db',
    ]);
  });

  test('sameStore words the notice', () => {
    assert.equal(sameStore('a.db', 'a.db'), 'a.db named twice');
    assert.equal(sameStore('./a.db', 'a.db'), './a.db is a.db');
  });
});
