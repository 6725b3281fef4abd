/**
 * `--verify` (issue 19, point 8): the store is re-read and digested even when its stamp says nothing
 * changed, for a file system that is not trusted. A snapshot is edited in place, same length. Two ways
 * to hide the write from the stamp: through the API, the store reader's `stamp()` answers the one from
 * before the edit; for real (root only), the store lives on an ext4 image and debugfs puts its mtime and
 * ctime back to the nanosecond on the unmounted image, so inode, size and times are all as before.
 */
import { after, test } from 'node:test';
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { copyFileSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { request, userPromptPart } from '../../scripts/lib/messages.js';
import { searchJson } from '../../src/output/json.js';
import type { SearchOptions } from '../../src/search/search.js';
import { UnseenChangeError } from '../../src/sidecar/verify.js';
import type { StoreReader } from '../../src/store/reader.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { DEFAULTS } from '../../src/lib.js';
import { cli, runCliAsync } from '../helpers/cli.js';
import { threadedStore } from '../helpers/random-stores.js';
import { searchReader, tempDir } from '../helpers/stores.js';

const options = (query: string): SearchOptions => ({
  query,
  scope: 'all',
  conversationId: null,
  runId: null,
  maxMatches: 5,
  contextLines: 1,
  bm25: DEFAULTS.bm25,
});

/** The store as the index sees it through a file system that hides writes: its stamp is `stamp`, whatever was written. */
function hiding(store: StoreReader, stamp: string): StoreReader {
  return Object.assign(Object.create(store) as StoreReader, { stamp: () => stamp });
}

/** Changes `path` with `edit`, then puts its modification and access times back. */
function writeQuietly(path: string, edit: (db: Database.Database) => void, sameSize: boolean): void {
  const before = statSync(path);
  const db = new Database(path);
  edit(db);
  db.close();
  utimesSync(path, before.atime, before.mtime);
  if (sameSize) assert.equal(statSync(path).size, before.size);
}

const matches = (json: unknown): number => (json as { summary: { total_matches: number } }).summary.total_matches;

/** A store, its index built, and the stamp the index recorded. */
function indexed(seed: number): { path: string; index: string; stamp: string; runs: Array<{ id: string }> } {
  const { path, runs } = threadedStore(seed);
  const index = join(tempDir(), 'idx.db');
  const store = openSqliteReader(path);
  try {
    searchReader(store, options('anything'), { path: index });
    const stamp = store.stamp();
    assert.ok(stamp !== null);
    return { path, index, stamp, runs };
  } finally {
    store.close();
  }
}

test('--verify: a snapshot edited in place under an unchanged stamp is an error naming the run; the next search re-reads the store', () => {
  const { path, index, stamp, runs } = indexed(7);
  const victim = runs[3]!.id;
  let word = '';
  writeQuietly(
    path,
    (db) => {
      const text = db.prepare('SELECT messages FROM snapshots WHERE run_id = ? ORDER BY seq DESC LIMIT 1').pluck().get(victim) as string;
      word = /"content": "([a-z]{4,})\b/.exec(text)![1]!;
      // same length: the file keeps its size, and the rows their places
      db.prepare('UPDATE snapshots SET messages = replace(messages, ?, ?) WHERE run_id = ?').run(
        `"content": "${word}`,
        `"content": "${'z'.repeat(word.length)}`,
        victim,
      );
    },
    true,
  );
  const query = options('z'.repeat(word.length));
  const store = openSqliteReader(path);
  try {
    const forged = hiding(store, stamp);
    const truth = searchJson(searchReader(store, query, false));
    assert.ok(matches(truth) > 0);
    // the cheap check trusts the stamp: without --verify the edit goes unseen
    assert.equal(matches(searchJson(searchReader(forged, query, { path: index }))), 0);
    assert.throws(
      () => searchReader(forged, query, { path: index, verify: true }),
      (e: unknown) => e instanceof UnseenChangeError && e.message.includes(victim) && !e.message.includes('\n'),
    );
    // the index no longer vouches for that stamp: the next search compares the content and rebuilds the run
    assert.deepEqual(searchJson(searchReader(forged, query, { path: index })), truth);
  } finally {
    store.close();
  }
});

test('--verify: rows appended under an unchanged stamp are folded into the index and the search answers', () => {
  const { path, index, stamp, runs } = indexed(8);
  const run = runs[2]!.id;
  writeQuietly(
    path,
    (db) => {
      const last = db.prepare('SELECT * FROM snapshots WHERE run_id = ? ORDER BY seq DESC LIMIT 1').get(run) as Record<string, unknown>;
      const history = JSON.parse(last.messages as string) as unknown[];
      history.push(request([userPromptPart('appendedword appears', { timestamp: Date.UTC(2026, 5, 1) })], { runId: run }));
      db.prepare(
        'INSERT INTO snapshots (run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages, idempotency_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)',
      ).run(
        run,
        Number(last.step_index) + 1,
        last.conversation_id,
        last.parent_run_id,
        last.agent_name,
        last.timestamp,
        'complete',
        JSON.stringify(history),
      );
    },
    false,
  );
  const store = openSqliteReader(path);
  try {
    const forged = hiding(store, stamp);
    const query = options('appendedword');
    const truth = searchJson(searchReader(store, query, false));
    assert.equal(matches(truth), 1);
    assert.equal(matches(searchJson(searchReader(forged, query, { path: index }))), 0);
    assert.deepEqual(searchJson(searchReader(forged, query, { path: index, verify: true })), truth);
    // and it stays so without --verify
    assert.deepEqual(searchJson(searchReader(forged, query, { path: index })), truth);
  } finally {
    store.close();
  }
});

test('--verify on search, runs and tools: the same answer as without it when nothing was hidden', async () => {
  const { path } = threadedStore(9);
  const index = join(tempDir(), 'idx.db');
  for (const args of [
    ['search', 'user', '--db', path, '--scope', 'all', '--json'],
    ['runs', '--db', path, '--json'],
    ['tools', '--db', path, '--json'],
  ]) {
    const plain = await cli([...args, '--index', index]);
    const verified = await cli([...args, '--index', index, '--verify']);
    assert.equal(verified.status, plain.status, `${args[0]}: ${verified.stderr}`);
    assert.equal(verified.stdout, plain.stdout, args[0]);
    assert.equal(verified.stderr, plain.stderr, args[0]);
  }
});

// ---------------------------------------------------------------------------------------------
// The same edit, for real: the store on an ext4 image (root only), its times put back with debugfs

const mounts: string[] = [];
after(() => {
  for (const m of mounts) spawnSync('umount', ['-l', m]);
});

/** An ext4 file system in an image file, mounted; null where this cannot be done (not root, no loop devices, no e2fsprogs). */
function ext4(): { image: string; dir: string } | null {
  const image = join(tempDir(), 'fs.img');
  writeFileSync(image, '');
  truncateSync(image, 32 * 1024 * 1024);
  const dir = tempDir();
  if (spawnSync('mkfs.ext4', ['-q', '-F', image]).status !== 0) return null;
  if (spawnSync('mount', ['-o', 'loop', image, dir]).status !== 0) return null;
  if (spawnSync('debugfs', ['-V']).status !== 0) return null;
  mounts.push(dir);
  return { image, dir };
}

/** Sets a file's change and modification times (ns) on the unmounted image, as a write below the file system can. */
function setTimes(image: string, file: string, ctimeNs: bigint, mtimeNs: bigint): void {
  for (const [field, ns] of [
    ['ctime', ctimeNs],
    ['mtime', mtimeNs],
  ] as const) {
    const seconds = ns / 1_000_000_000n;
    // the extra field: nanoseconds above two epoch bits (0 until 2038)
    const extra = (ns % 1_000_000_000n) * 4n;
    for (const [f, v] of [
      [field, `@${seconds}`],
      [`${field}_extra`, String(extra)],
    ]) {
      const r = spawnSync('debugfs', ['-w', '-R', `set_inode_field /${file} ${f} ${v}`, image], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    }
  }
}

test('--verify on a real file system: a same-length edit whose inode, size, mtime and ctime are all put back (debugfs) is exit 2', async (t) => {
  const fs = ext4();
  if (fs === null) return t.skip('cannot mount an ext4 image here');
  const { path: made, runs } = threadedStore(11);
  const path = join(fs.dir, 'sessions.db');
  copyFileSync(made, path);
  const victim = runs[5]!.id;
  const ro = new Database(path, { readonly: true });
  const text = ro.prepare('SELECT messages FROM snapshots WHERE run_id = ? ORDER BY seq DESC LIMIT 1').pluck().get(victim) as string;
  ro.close();
  const word = /"content": "([a-z]{4,})\b/.exec(text)![1]!;
  const query = ['search', 'z'.repeat(word.length), '--db', path, '--scope', 'all', '--count'];
  const index = ['--index', join(tempDir(), 'idx.db')];
  // processes of their own, as a user runs them around the unmount and mount
  assert.equal((await runCliAsync([...query, ...index])).stdout.trim(), '0'); // builds the index

  const before = statSync(path, { bigint: true });
  const db = new Database(path);
  db.prepare('UPDATE snapshots SET messages = replace(messages, ?, ?) WHERE run_id = ?').run(
    `"content": "${word}`,
    `"content": "${'z'.repeat(word.length)}`,
    victim,
  );
  db.close();
  assert.equal(spawnSync('umount', [fs.dir]).status, 0);
  setTimes(fs.image, 'sessions.db', before.ctimeNs, before.mtimeNs);
  assert.equal(spawnSync('mount', ['-o', 'loop', fs.image, fs.dir]).status, 0);
  const now = statSync(path, { bigint: true });
  assert.deepEqual([now.ino, now.size, now.mtimeNs, now.ctimeNs], [before.ino, before.size, before.mtimeNs, before.ctimeNs]);

  const truth = await runCliAsync([...query, '--no-index']);
  assert.ok(Number(truth.stdout) > 0);
  // the stamp is trusted without --verify: the edit goes unseen
  assert.equal((await runCliAsync([...query, ...index])).stdout.trim(), '0');
  const verified = await runCliAsync([...query, ...index, '--verify']);
  assert.equal(verified.status, 2);
  assert.equal(verified.stdout, '');
  assert.match(verified.stderr, new RegExp(`^convsearch: error: .*--verify: ${victim} changed in place.*\\n$`));
  assert.equal(verified.stderr.split('\n').length, 2);
  // then the index no longer vouches for the stamp
  assert.deepEqual(await runCliAsync([...query, ...index]), truth);
});
