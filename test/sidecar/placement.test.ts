import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync,
  chownSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { cli } from '../helpers/cli.js';
import { tempDir } from '../helpers/stores.js';
import { evidence, sha } from '../helpers/evidence.js';

function assertUntouched(e: { dir: string; db: string; digest: string }): void {
  assert.equal(sha(e.db), e.digest, 'the store is byte-identical');
  assert.deepEqual(
    readdirSync(e.dir).filter((n) => !n.startsWith('link')),
    ['sessions.db'],
    'nothing was created beside the store',
  );
}

async function refused(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const r = await cli(args, { env });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^convsearch: error: refusing .+\n$/);
  return r.stderr;
}

/**
 * A default place that will not do: the search goes on (the next place, or none), with a notice saying
 * why; never exit 2. HOME and TMPDIR are temporary (the next places), never the user's.
 */
async function fellBack(e: { args: string[]; want: string }, env: NodeJS.ProcessEnv, why: RegExp): Promise<void> {
  const r = await cli(e.args, { env: { HOME: tempDir(), TMPDIR: tempDir(), ...env } });
  assert.notEqual(r.status, 2, r.stderr);
  assert.equal(r.stdout, e.want);
  assert.match(r.stderr, /^convsearch: warning: refusing the index location .+; the index is at .+\n$/);
  assert.match(r.stderr, why);
}

describe('the index never touches the evidence', () => {
  test('--index naming the store, a file of it, a link or hard link to it, or a path beside it is refused with exit 2', async () => {
    const e = await evidence();
    const elsewhere = tempDir();
    symlinkSync(e.db, join(elsewhere, 'link.db'));
    linkSync(e.db, join(elsewhere, 'hard.db'));
    symlinkSync(e.dir, join(elsewhere, 'dirlink'));
    const cases: Array<[string, RegExp]> = [
      [e.db, /store's directory|store's file/],
      [`${e.db}-wal`, /store's directory/],
      [`${e.db}-journal`, /store's directory/],
      [join(e.dir, 'index.db'), /store's directory/],
      [join(e.dir, 'sub', 'deeper', 'index.db'), /would create a directory in the store's directory/],
      [join(elsewhere, 'link.db'), /store's file|symbolic link/],
      [join(elsewhere, 'hard.db'), /store's file/],
      [join(elsewhere, 'dirlink', 'index.db'), /store's directory/],
    ];
    for (const [index, why] of cases) {
      for (const cmd of [e.args, ['runs', '--db', e.db], ['conversations', '--db', e.db, '--json']]) {
        const message = await refused([...cmd, '--index', index]);
        assert.match(message, why, index);
      }
      assertUntouched(e);
    }
    assert.equal(sha(join(elsewhere, 'hard.db')), e.digest);
  });

  test('a cache directory that is a link into the evidence directory is passed over for the next place; nothing is written there', async () => {
    const e = await evidence();
    const cache = tempDir();
    symlinkSync(e.dir, join(cache, 'convsearch'));
    await fellBack(e, { XDG_CACHE_HOME: cache }, /store's directory/);
    assertUntouched(e);
    // XDG_CACHE_HOME itself in the evidence directory: the convsearch directory would be created there
    await fellBack(e, { XDG_CACHE_HOME: e.dir }, /store's directory/);
    assertUntouched(e);
  });
});

describe("the index location is taken on no one's word", () => {
  test('an index path that is a symbolic link (to any file) is refused, and its target is left alone', async () => {
    const e = await evidence();
    const other = join(tempDir(), 'notes.txt');
    writeFileSync(other, 'my notes\n', { mode: 0o644 });
    const dir = tempDir();
    symlinkSync(other, join(dir, 'idx.db'));
    const message = await refused([...e.args, '--index', join(dir, 'idx.db')]);
    assert.match(message, /symbolic link/);
    assert.equal(readFileSync(other, 'utf8'), 'my notes\n');
    // a link planted as the index's -wal
    const dir2 = tempDir();
    symlinkSync(other, join(dir2, 'idx.db-wal'));
    assert.match(await refused([...e.args, '--index', join(dir2, 'idx.db')]), /-wal is a symbolic link/);
    assert.equal(readFileSync(other, 'utf8'), 'my notes\n');
    // the default cache directory itself a link (even to a harmless place): passed over for the next place
    const cache = tempDir();
    symlinkSync(tempDir(), join(cache, 'convsearch'));
    await fellBack(e, { XDG_CACHE_HOME: cache }, /symbolic link/);
  });

  test('a cache directory and index readable by others are made private again, with a warning each; the answer is the same', async () => {
    const e = await evidence();
    const cache = tempDir();
    const r0 = await cli(e.args, { env: { XDG_CACHE_HOME: cache } });
    assert.equal(r0.stdout, e.want);
    const dir = join(cache, 'convsearch');
    const [file] = readdirSync(dir);
    chmodSync(dir, 0o777);
    chmodSync(join(dir, file!), 0o666);
    const r = await cli(e.args, { env: { XDG_CACHE_HOME: cache } });
    assert.equal(r.status, r0.status, r.stderr);
    assert.equal(r.stdout, e.want);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 2, r.stderr);
    assert.match(lines[0]!, /^convsearch: warning: .*convsearch was readable or writable by others \(mode 777\); made it 700$/);
    assert.match(lines[1]!, /^convsearch: warning: .*\.index\.db was readable or writable by others \(mode 666\); made it 600$/);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(statSync(join(dir, file!)).mode & 0o777, 0o600);
  });

  test('a cache directory owned by someone else is passed over, an --index owned by someone else is refused', {
    skip: process.getuid?.() !== 0 && 'needs root to hand files to another user',
  }, async () => {
    const e = await evidence();
    const cache = tempDir();
    mkdirSync(join(cache, 'convsearch'), { mode: 0o700 });
    chownSync(join(cache, 'convsearch'), 4242, 4242);
    await fellBack(e, { XDG_CACHE_HOME: cache }, /belongs to uid 4242/);
    const dir = tempDir();
    writeFileSync(join(dir, 'idx.db'), '', { mode: 0o600 });
    chownSync(join(dir, 'idx.db'), 4242, 4242);
    assert.match(await refused([...e.args, '--index', join(dir, 'idx.db')]), /belongs to uid 4242/);
    assert.equal(statSync(join(dir, 'idx.db')).size, 0);
  });

  test('an index with another hard link is refused (writing it would change the other file)', async () => {
    const e = await evidence();
    const dir = tempDir();
    // empty, so that it could be taken for a new index
    writeFileSync(join(dir, 'precious.db'), '', { mode: 0o600 });
    linkSync(join(dir, 'precious.db'), join(dir, 'idx.db'));
    assert.match(await refused([...e.args, '--index', join(dir, 'idx.db')]), /other hard links/);
    assert.equal(statSync(join(dir, 'precious.db')).size, 0);
    assert.ok(!existsSync(join(dir, 'idx.db-wal')));
  });
});
