import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { cli } from '../helpers/cli.js';
import { writeRun } from '../helpers/random-stores.js';
import { tempDir } from '../helpers/stores.js';

/** A small tmpfs mounted for the test (root only), or null where mounting is not allowed. */
const mounts: string[] = [];
function tmpfs(options: string): string | null {
  const dir = tempDir();
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]);
  if (r.status !== 0) return null;
  mounts.push(dir);
  return dir;
}
after(() => {
  for (const m of mounts) spawnSync('umount', ['-l', m]);
});
const canMount = (() => {
  const m = tmpfs('size=64k');
  return m !== null;
})();

function store(runs: number): string {
  const db = join(tempDir(), 'sessions.db');
  const w = new StepStoreWriter(db);
  const random = rng(8);
  for (let i = 0; i < runs; i++) writeRun(w, random, `r${i}`, `c${i % 3}`, new Date(Date.UTC(2026, 0, 1, i)));
  w.close();
  return db;
}

describe('the index on a disk that will not take it', { skip: !canMount && 'needs permission to mount a tmpfs' }, () => {
  test('a read-only cache is reported as a read-only file system, and the search answers without the index', async () => {
    const db = store(3);
    const cache = tmpfs('ro,size=1m')!;
    const args = ['search', 'user', '--db', db, '--scope', 'all', '--format', 'tool'];
    const want = await cli([...args, '--no-index']);
    // every default place on it: $XDG_CACHE_HOME, ~/.cache and the temporary directory
    const r = await cli(args, { env: { XDG_CACHE_HOME: cache, HOME: cache, TMPDIR: cache } });
    assert.equal(r.stdout, want.stdout);
    assert.equal(r.status, want.status);
    assert.match(
      r.stderr,
      /^convsearch: warning: index unavailable, searching without it: no default place will do for the index: cannot create .*convsearch: read-only file system; .*: read-only file system\n$/,
    );
    assert.doesNotMatch(r.stderr, /ENOENT|mkdir/);
  });

  test('a full disk: one warning naming it, no -wal left, no retry until something changed, then a rebuild', async () => {
    const db = store(20);
    const disk = tmpfs('size=40m')!;
    const index = join(disk, 'idx.db');
    const args = ['search', 'user', '--db', db, '--scope', 'all', '--format', 'tool', '--index', index];
    const first = await cli(args);
    assert.equal(first.stderr, '');
    // fill the disk, then give the index something to write
    const s = statfsSync(disk);
    writeFileSync(join(disk, 'filler'), Buffer.alloc(Math.max(0, s.bavail * s.bsize - 32 * 1024)));
    const w = new Database(db);
    w.exec(
      "INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) SELECT run_id || '-b', conversation_id, parent_run_id, agent_name, metadata, started_at || 'b' FROM runs",
    );
    w.exec(
      "INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) SELECT run_id || '-b', step_index, timestamp, state, messages FROM snapshots",
    );
    w.close();
    const want = await cli(args.slice(0, -2).concat('--no-index'));
    const full = await cli(args);
    assert.equal(full.stdout, want.stdout);
    assert.match(full.stderr, /^convsearch: warning: index unavailable, searching without it: no space left on the device/);
    assert.ok(!existsSync(`${index}-wal`), 'no -wal of the index is left');
    const again = await cli(args);
    assert.equal(again.stdout, want.stdout);
    assert.match(again.stderr, /the disk was full when the index was last updated .*; free some space, or pass --no-index/);
    assert.deepEqual(readdirSync(disk).sort(), ['filler', 'idx.db', 'idx.db.nospace']);
    rmSync(join(disk, 'filler'));
    const freed = await cli(args);
    assert.equal(freed.stdout, want.stdout);
    assert.equal(freed.stderr, want.stderr);
    assert.deepEqual(readdirSync(disk), ['idx.db']);
  });

  test('a first build that cannot fit is not started', async () => {
    const db = store(3);
    const disk = tmpfs('size=1m')!;
    mkdirSync(join(disk, 'c'));
    const r = await cli(['search', 'user', '--db', db, '--scope', 'all', '--count', '--index', join(disk, 'c', 'idx.db')]);
    assert.match(r.stderr, /not enough free space for the index: a first build needs about \d+ MB, \d+ MB free/);
    assert.ok(!existsSync(join(disk, 'c', 'idx.db-wal')));
  });
});
