import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  watch,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { cli, runCliAsync } from '../helpers/cli.js';
import { writeRun } from '../helpers/random-stores.js';
import { tempDir } from '../helpers/stores.js';
import { evidence, sha, walWithoutShm } from '../helpers/evidence.js';

const isRoot = process.getuid?.() === 0;
const ROOT_ONLY = isRoot ? {} : { skip: 'mounting a small tmpfs (a full disk) needs root' };

const mounts: string[] = [];
after(() => {
  for (const m of mounts) execFileSync('umount', ['-l', m]);
});

/** A tmpfs of `size`, unmounted when the suite ends. */
function smallDisk(size: string): string {
  const dir = tempDir();
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  mounts.push(dir);
  return dir;
}

/** Writes a file until the disk has no room left but `spare` bytes (room for SQLite's -shm, not for the index's writes). */
function fill(dir: string, spare: number): void {
  writeFileSync(join(dir, 'spare'), Buffer.alloc(spare, 1));
  const fd = openSync(join(dir, 'filler'), 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    closeSync(fd);
  }
  for (let n = 4096; n >= 1; n = Math.floor(n / 2)) {
    try {
      const fd2 = openSync(join(dir, `filler-${n}-${Math.random()}`), 'w');
      try {
        for (;;) writeSync(fd2, Buffer.alloc(n, 1));
      } finally {
        closeSync(fd2);
      }
    } catch {
      // full at this size
    }
  }
  rmSync(join(dir, 'spare'));
}

describe('side files never follow links', () => {
  test(
    'a link planted as the no-space mark is not written through when the disk is full (--index and the default place)',
    ROOT_ONLY,
    async () => {
      for (const where of ['--index', 'default'] as const) {
        const e = await evidence();
        const disk = smallDisk('24m');
        const idx = join(disk, 'idx.db');
        const env = where === 'default' ? { XDG_CACHE_HOME: disk } : {};
        const args = where === 'default' ? e.args : [...e.args, '--index', idx];
        const first = await cli(args, { env });
        assert.equal(first.status, e.status, first.stderr);
        const indexFile = where === 'default' ? join(disk, 'convsearch', readdirSync(join(disk, 'convsearch'))[0]!) : idx;
        // the store changes: the next search must write the index, and the disk is full
        const next = join(tempDir(), 'next.db');
        const w = new StepStoreWriter(next);
        writeRun(w, rng(4), 'r1', 'c1', new Date(Date.UTC(2026, 0, 1)));
        writeRun(w, rng(5), 'r2', 'c2', new Date(Date.UTC(2026, 0, 2)));
        w.close();
        copyFileSync(next, e.db);
        const digest = sha(e.db);
        const victim = join(tempDir(), 'victim.txt');
        writeFileSync(victim, 'precious\n');
        symlinkSync(e.db, `${indexFile}.nospace`);
        symlinkSync(victim, `${indexFile}.nospace.tmp`);
        fill(disk, 64 * 1024);
        const want = (await cli([...e.args, '--no-index'])).stdout;
        const r = await cli(args, { env });
        assert.equal(sha(e.db), digest, `${where}: the store is byte-identical`);
        assert.equal(readFileSync(victim, 'utf8'), 'precious\n', `${where}: the victim is untouched`);
        assert.notEqual(r.status, 2, r.stderr);
        assert.equal(r.stdout, want, `${where}: the answer is the replay's`);
      }
    },
  );
});

describe('--index accepts only convsearch’s own index', () => {
  test('another step store, another SQLite database and a text file are refused with exit 2 and left byte-identical', async () => {
    const e = await evidence();
    const other = await evidence();
    const sqlite = join(tempDir(), 'app.db');
    const db = new Database(sqlite);
    db.exec("CREATE TABLE meta (key TEXT, value TEXT); INSERT INTO meta VALUES ('format', 'x'); CREATE TABLE runs (id INTEGER)");
    db.close();
    const notes = join(tempDir(), 'notes.txt');
    writeFileSync(notes, 'my notes\n');
    chmodSync(notes, 0o644);
    for (const target of [other.db, sqlite, notes]) {
      const digest = sha(target);
      const mode = statSync(target).mode;
      // several at once: none of them takes it for an index to lay out
      for (const r of await Promise.all([1, 2, 3].map(() => runCliAsync([...e.args, '--index', target])))) {
        assert.equal(r.status, 2, `${target}: ${r.stderr}`);
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /^convsearch: error: refusing --index .+not a convsearch index.*\n$/);
      }
      assert.equal(sha(target), digest, `${target} is byte-identical`);
      assert.equal(statSync(target).mode, mode, `${target} keeps its mode`);
      assert.deepEqual(readdirSync(dirname(target)).sort(), [...new Set([...readdirSync(dirname(target))])].sort());
      assert.ok(!existsSync(`${target}-wal`) && !existsSync(`${target}-journal`), 'no side file beside it');
    }
  });

  test('an empty or missing file becomes an index; an index of ours (signed, or of an older format) is rebuilt in place', async () => {
    const e = await evidence();
    const empty = join(tempDir(), 'empty.db');
    writeFileSync(empty, '');
    const missing = join(tempDir(), 'missing.db');
    for (const idx of [empty, missing]) {
      for (const r of await Promise.all([1, 2, 3].map(() => runCliAsync([...e.args, '--index', idx])))) {
        assert.equal(r.status, e.status, r.stderr);
        assert.equal(r.stdout, e.want);
      }
      const check = new Database(idx, { readonly: true });
      assert.notEqual(check.pragma('application_id', { simple: true }), 0, 'the index is signed');
      check.close();
    }
    // an index of an older format (no application_id, format row of ours, our tables)
    const old = new Database(missing);
    old.pragma('application_id = 0');
    old.exec("UPDATE meta SET value = 'convsearch-index-7' WHERE key = 'format'");
    old.close();
    const r = await cli([...e.args, '--index', missing]);
    assert.equal(r.status, e.status, r.stderr);
    assert.equal(r.stdout, e.want);
  });
});

describe('private copies never land beside the evidence', () => {
  test('with TMPDIR equal to or inside the store directory, no copy is made there (several processes, and SIGKILL)', async () => {
    const db = walWithoutShm();
    const dir = dirname(db);
    const inner = join(dir, 'tmp');
    mkdirSync(inner);
    const seen: string[] = [];
    const watcher = watch(dir, { recursive: true }, (_ev, name) => {
      if (name !== null && String(name).includes('convsearch-copy-')) seen.push(String(name));
    });
    try {
      const runs = [dir, inner, dir, inner].map((tmp) =>
        runCliAsync(['search', 'copied', '--db', db, '--scope', 'all', '--format', 'tool', '--no-index'], { env: { TMPDIR: tmp } }),
      );
      for (const r of await Promise.all(runs)) {
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, /copied words/);
      }
      // a run killed while it holds its copy
      const child = spawn(process.execPath, [fileURLToPathHelper(), db, 'wait'], {
        env: { ...process.env, TMPDIR: dir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      await new Promise<void>((res) => child.stdout.once('data', () => res()));
      child.kill('SIGKILL');
      await new Promise((res) => child.on('exit', res));
      await new Promise((res) => setTimeout(res, 100));
    } finally {
      watcher.close();
    }
    assert.deepEqual(seen, [], 'no copy was ever created in the store directory');
    assert.deepEqual(readdirSync(dir).sort(), ['sessions.db', 'sessions.db-wal', 'tmp']);
    assert.deepEqual(readdirSync(inner), []);
  });
});

function fileURLToPathHelper(): string {
  return new URL('../helpers/hold-store-child.js', import.meta.url).pathname;
}

describe('the default index place never fails a search', () => {
  test('a missing XDG_CACHE_HOME beside a store, or a home with no ~/.cache holding the store: answer and status of --no-index', async () => {
    // XDG_CACHE_HOME names a missing directory in the store's directory
    const e = await evidence();
    // (HOME and TMPDIR, the next places, are temporary: never the user's)
    const r1 = await cli(e.args, { env: { XDG_CACHE_HOME: join(e.dir, 'cache'), HOME: e.dir, TMPDIR: tempDir() } });
    assert.equal(r1.status, e.status, r1.stderr);
    assert.equal(r1.stdout, e.want);
    // the store is ~/sessions.db and there is no ~/.cache
    const home = await evidence();
    const r2 = await cli(home.args, { env: { XDG_CACHE_HOME: '', HOME: home.dir, TMPDIR: tempDir() } });
    assert.equal(r2.status, home.status, r2.stderr);
    assert.equal(r2.stdout, home.want);
    // XDG_CACHE_HOME read-only
    const ro = tempDir();
    chmodSync(ro, 0o500);
    const r3 = await cli(e.args, { env: { XDG_CACHE_HOME: join(ro, 'sub'), HOME: e.dir, TMPDIR: tempDir() } });
    assert.equal(r3.status, e.status, r3.stderr);
    assert.equal(r3.stdout, e.want);
    for (const x of [e, home]) {
      assert.deepEqual(readdirSync(x.dir), ['sessions.db'], 'nothing was created in the store directory');
    }
    for (const r of [r1, r2]) assert.ok(r.stderr.trim().split('\n').length <= 1, `one notice at most: ${r.stderr}`);
  });

  test('with no usable cache the index goes to <tmpdir>/convsearch-<uid> (0700); several searches at once agree', async () => {
    const e = await evidence();
    const tmp = tempDir();
    const env = { XDG_CACHE_HOME: join(e.dir, 'cache'), HOME: e.dir, TMPDIR: tmp };
    const rs = await Promise.all([1, 2, 3, 4].map(() => runCliAsync(e.args, { env })));
    for (const r of rs) {
      assert.equal(r.status, e.status, r.stderr);
      assert.equal(r.stdout, e.want);
    }
    const place = join(tmp, `convsearch-${process.getuid?.() ?? 'user'}`);
    const st = lstatSync(place);
    assert.ok(st.isDirectory());
    assert.equal(st.mode & 0o777, 0o700);
    assert.ok(
      readdirSync(place).some((n) => n.endsWith('.index.db')),
      'the index was built there',
    );
    assert.deepEqual(readdirSync(e.dir), ['sessions.db']);
  });
});
