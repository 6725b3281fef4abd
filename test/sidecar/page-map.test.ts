/**
 * Issue 21: after a change, the SQLite content check reads only the runs whose pages changed (the page
 * map kept in the index vouches for the others), and every answer stays that of `--no-index`. Each
 * test changes a store in one way, then compares many searches through the index with a replay, and
 * counts the rows the content check read (never times).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { appendRun, appendSnapshots, liveWriter } from '../../scripts/bench/mutations.js';
import { appendTo } from '../helpers/append.js';
import { assertSameAnswers, patchFile, sync } from '../helpers/index-answers.js';
import { threadedStore } from '../helpers/random-stores.js';
import { tempDir } from '../helpers/stores.js';
import { storeDigest } from '../helpers/hardening.js';
import type { ChunkedWords, KeptTree, PageTree } from '../../src/store/content.js';
import { rowSum } from '../../src/sidecar/checksum.js';
import { IndexDamagedError } from '../../src/sidecar/errors.js';
import { type IndexStatement, SqliteIndexDb } from '../../src/sidecar/index-db.js';
import { INDEX_DDL } from '../../src/sidecar/schema.js';
import { IndexTables } from '../../src/sidecar/tables.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { stampOf } from '../../src/store/sqlite/stamp.js';

/** Chunked words as one array (what the index read, joined here only to be compared). */
function joined<T extends Uint32Array | Float64Array>(words: ChunkedWords<T>, make: (n: number) => T): T {
  const all = make(words.length);
  words.copyTo(all, 0, 0, words.length);
  return all;
}
const pagesOf = (words: ChunkedWords<Uint32Array>): Uint32Array => joined(words, (n) => new Uint32Array(n));
/** A tree as a map makes it (one piece), from its values. */
const pageTree = (tree: { runIds: string[]; values: Float64Array }): PageTree => ({ runIds: tree.runIds, pieces: [tree.values] });
const treeOf = (tree: KeptTree | null): { runIds: readonly string[]; values: Float64Array } | null =>
  tree && { runIds: tree.runIds, values: joined(tree.values, (n) => new Float64Array(n)) };

const KILLED_WRITER = fileURLToPath(new URL('../helpers/killed-writer-child.js', import.meta.url));

function storeValue(path: string, sql: string, ...params: unknown[]): unknown {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(sql)
      .pluck()
      .get(...params);
  } finally {
    db.close();
  }
}

const storeRows = (path: string): number => storeValue(path, 'SELECT COUNT(*) FROM snapshots') as number;

function indexedStore(seed: number): { path: string; index: string; runs: Array<{ id: string; conv: string | null }> } {
  const { path, runs } = threadedStore(seed);
  const index = join(tempDir(), 'idx.db');
  const first = sync(path, index);
  assert.equal(first.rowsDigested, storeRows(path), 'a first build reads every row');
  return { path, index, runs };
}

test('one appended run: only its rows (and those sharing its first leaf page) are read by the content check, and answers equal --no-index', () => {
  const { path, index, runs } = indexedStore(31);
  const total = storeRows(path);
  appendRun(path);
  const added = storeRows(path) - total;
  assert.ok(added > 0);
  const r = sync(path, index);
  assert.equal(r.contentChecked, true);
  // the new run, and the run(s) whose rows share the last leaf page it was appended to
  assert.ok(r.rowsDigested >= added && r.rowsDigested < total / 2, `read ${r.rowsDigested} rows of ${total + added}, ${added} new`);
  assert.equal(r.runsReplayed, 1);
  assert.equal(r.runsResumed, 0);
  assert.equal(sync(path, index).contentChecked, false, 'the new stamp was recorded');
  assertSameAnswers(path, index, runs, 1);
  // and again: the page map written by the last update vouches for the next one
  appendRun(path);
  assert.ok(sync(path, index).rowsDigested < storeRows(path) / 4);
  assertSameAnswers(path, index, runs, 2);
});

test('new snapshots of old runs: those runs are read again and resumed, the others are not read', () => {
  const { path, index, runs } = indexedStore(32);
  appendSnapshots(path, 3);
  const r = sync(path, index);
  assert.ok(r.runsResumed >= 1);
  assert.equal(r.runsReplayed, 0);
  assert.ok(r.rowsDigested > 0 && r.rowsDigested < storeRows(path), `read ${r.rowsDigested} of ${storeRows(path)}`);
  assertSameAnswers(path, index, runs, 3, 'quarzite');
});

test('a same-length edit in place (on a leaf page, and on an overflow page), mtime restored: seen, that run rebuilt, answers equal --no-index', () => {
  const { path, index, runs } = indexedStore(33);
  // a snapshot large enough that its marker lies on an overflow page
  const db = new Database(path);
  const victim = runs[5]!.id;
  const last = db
    .prepare('SELECT step_index, timestamp, messages FROM snapshots WHERE run_id = ? ORDER BY seq DESC LIMIT 1')
    .get(victim) as {
    step_index: number;
    timestamp: string;
    messages: string;
  };
  const filler = 'lorem '.repeat(3000);
  const big = `${last.messages.slice(0, -1)}, {"parts": [{"content": "${filler} overflowmarker", "timestamp": "2026-02-01T00:00:00Z", "part_kind": "user-prompt"}], "timestamp": "2026-02-01T00:00:00Z", "instructions": null, "kind": "request", "run_id": null, "conversation_id": null, "metadata": null}]`;
  db.prepare("INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) VALUES (?, ?, ?, 'complete', ?)").run(
    victim,
    last.step_index + 1,
    last.timestamp,
    big,
  );
  db.close();
  sync(path, index);
  assertSameAnswers(path, index, runs, 4, 'overflowmarker');
  const total = storeRows(path);

  patchFile(path, 'overflowmarker', 'overflowmarkex');
  let r = sync(path, index);
  assert.equal(r.contentChecked, true);
  assert.equal(r.runsReplayed, 1, 'the edited run was rebuilt');
  assert.equal(r.rowsDigested, storeValue(path, 'SELECT COUNT(*) FROM snapshots WHERE run_id = ?', victim));
  assertSameAnswers(path, index, runs, 5, 'overflowmarkex');

  // a word of a small snapshot, on a leaf page
  const other = runs[9]!.id;
  const text = storeValue(path, 'SELECT messages FROM snapshots WHERE run_id = ? ORDER BY seq LIMIT 1', other) as string;
  const word = /"content": "([a-z]{5,})/.exec(text)![1]!;
  patchFile(path, `"content": "${word}`, `"content": "${'q'.repeat(word.length)}`);
  r = sync(path, index);
  assert.ok(r.runsReplayed >= 1);
  assert.ok(r.rowsDigested < total, `read ${r.rowsDigested} of ${total}`);
  assertSameAnswers(path, index, runs, 6, 'q'.repeat(word.length));
});

test('a deleted snapshot and a VACUUM: answers equal --no-index after each', () => {
  const { path, index, runs } = indexedStore(34);
  const db = new Database(path);
  db.prepare('DELETE FROM snapshots WHERE seq = (SELECT seq FROM snapshots WHERE run_id = ? ORDER BY seq LIMIT 1 OFFSET 1)').run(
    runs[2]!.id,
  );
  db.close();
  const r = sync(path, index);
  assert.ok(r.runsReplayed >= 1, 'the run that lost a snapshot was rebuilt');
  assertSameAnswers(path, index, runs, 7);
  const v = new Database(path);
  v.exec('VACUUM');
  v.close();
  sync(path, index);
  assertSameAnswers(path, index, runs, 8);
  appendRun(path);
  assertSameAnswers(path, index, runs, 9);
});

test('a writer that keeps its -wal open, then checkpoints and leaves: answers equal --no-index throughout', () => {
  const { path, index, runs } = indexedStore(35);
  const live = liveWriter(path);
  try {
    const r = live.prepare('SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1').pluck().get() as string;
    live
      .prepare(
        'INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) SELECT run_id, step_index + 1, timestamp, state, messages FROM snapshots WHERE run_id = ? ORDER BY seq DESC LIMIT 1',
      )
      .run(r);
    assertSameAnswers(path, index, runs, 10);
    live.exec('DELETE FROM snapshots WHERE seq = (SELECT MIN(seq) FROM snapshots)');
    live.pragma('wal_checkpoint(TRUNCATE)');
    assertSameAnswers(path, index, runs, 11);
    live.exec("UPDATE snapshots SET timestamp = '2030-01-01T00:00:00Z' WHERE seq = (SELECT MAX(seq) FROM snapshots)");
    assertSameAnswers(path, index, runs, 12);
  } finally {
    live.close();
  }
  // the writer checkpointed and removed its -wal: the file is read without locks again
  assertSameAnswers(path, index, runs, 13);
  appendRun(path);
  const total = storeRows(path);
  const r = sync(path, index);
  assert.ok(r.rowsDigested < total, `read ${r.rowsDigested} of ${total}`);
  assertSameAnswers(path, index, runs, 14);
});

/** A commit through `live`: the latest run's last snapshot written again as its next step. */
function growLastRun(live: Database.Database): void {
  const r = live.prepare('SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1').pluck().get() as string;
  live
    .prepare(
      'INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) SELECT run_id, step_index + 1, timestamp, state, messages FROM snapshots WHERE run_id = ? ORDER BY seq DESC LIMIT 1',
    )
    .run(r);
}

test('a live writer keeps its log open: the map reads the pages as its log shows them, each commit costs its own runs, answers equal --no-index', () => {
  const { path, index, runs } = indexedStore(38);
  const total = storeRows(path);
  const live = liveWriter(path);
  const grow = (): void => growLastRun(live);
  try {
    // a commit that grows the database past the main file's end: those pages are in the log only
    grow();
    assert.ok((live.pragma('page_count', { simple: true }) as number) * 4096 > statSync(path).size, 'the log holds pages past the file');
    let r = sync(path, index);
    assert.equal(r.contentChecked, true);
    assert.ok(r.rowsDigested > 0 && r.rowsDigested < total / 2, `read ${r.rowsDigested} of ${total + 1}`);
    assertSameAnswers(path, index, runs, 40);
    // a run appended through another connection while the writer stays: the same
    appendRun(path);
    r = sync(path, index);
    assert.equal(r.runsReplayed, 1);
    assert.ok(r.rowsDigested < storeRows(path) / 2, `read ${r.rowsDigested} of ${storeRows(path)}`);
    assertSameAnswers(path, index, runs, 41);
    // a same-length edit of an old snapshot, committed to the log: seen, that run rebuilt
    const victim = runs[4]!.id;
    const text = live.prepare('SELECT messages FROM snapshots WHERE run_id = ? ORDER BY seq LIMIT 1').pluck().get(victim) as string;
    const word = /"content": "([a-z]{5,})/.exec(text)![1]!;
    const edited = text.replace(`"content": "${word}`, `"content": "${'w'.repeat(word.length)}`);
    live.prepare('UPDATE snapshots SET messages = ? WHERE run_id = ? AND messages = ?').run(edited, victim, text);
    r = sync(path, index);
    assert.ok(r.runsReplayed >= 1, 'the edited run was rebuilt');
    assert.ok(r.rowsDigested < storeRows(path) / 2, `read ${r.rowsDigested} of ${storeRows(path)}`);
    assertSameAnswers(path, index, runs, 42, 'w'.repeat(word.length), word);
    // a checkpoint copies the log into the file and keeps it: the same pages, no run read
    live.pragma('wal_checkpoint(PASSIVE)');
    r = sync(path, index);
    assert.equal(r.contentChecked, true, 'the file changed');
    assert.equal(r.rowsDigested, 0);
    assert.equal(r.runsReplayed + r.runsResumed, 0);
    // the next commit starts the log over (new salts): followed as well
    grow();
    r = sync(path, index);
    assert.ok(r.rowsDigested > 0 && r.rowsDigested < storeRows(path) / 2, `read ${r.rowsDigested} of ${storeRows(path)}`);
    assertSameAnswers(path, index, runs, 43);
    // a deletion and a VACUUM through the log
    live.exec('DELETE FROM snapshots WHERE seq = (SELECT MIN(seq) FROM snapshots)');
    live.exec('VACUUM');
    r = sync(path, index);
    assert.ok(r.runsReplayed >= 1);
    assertSameAnswers(path, index, runs, 44);
    // bytes of a frame changed in the log file itself, not by SQLite: its checksum fails, so a reader
    // that recovers the log would stop before it while SQLite next to the writer reads it: no map, every row read
    // (the log's last frames are the VACUUM's, each the latest of its page)
    const log = readFileSync(`${path}-wal`, 'latin1');
    const at = log.lastIndexOf('"content": "') + '"content": "'.length;
    const word2 = /^[a-z]+/.exec(log.slice(at))![0];
    const fd = openSync(`${path}-wal`, 'r+');
    writeSync(fd, 'x'.repeat(word2.length), at, 'latin1');
    closeSync(fd);
    r = sync(path, index);
    assert.ok(r.runsReplayed >= 1, 'the run whose frame changed was rebuilt');
    assert.equal(r.rowsDigested, storeRows(path));
    assertSameAnswers(path, index, runs, 45, 'x'.repeat(word2.length), word2);
  } finally {
    live.close();
  }
  // the writer checkpointed and removed its log: no map was kept while the log failed its checksums, so
  // the first search takes the file's from scratch; then a change costs its own rows again
  assertSameAnswers(path, index, runs, 46);
  appendRun(path);
  const r = sync(path, index);
  assert.ok(r.rowsDigested < storeRows(path) / 2, `read ${r.rowsDigested} of ${storeRows(path)}`);
  assertSameAnswers(path, index, runs, 47);
});

/** Waits past the coarse clock's tick: a file last written longer ago than this is "settled" (stamp.ts). */
function settle(): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 40);
}

test('next to a live writer, no hashing of the file is started ahead when the pass the index keeps stands for it', () => {
  const { path, index } = indexedStore(41);
  const ahead = (kept: string | null): boolean => {
    const store = openSqliteReader(path);
    try {
      return store.contentAhead(kept);
    } finally {
      store.close();
    }
  };
  const keptStamp = (): string | null => {
    const db = new Database(index, { readonly: true });
    try {
      return new IndexTables(new SqliteIndexDb(db)).filePassStamp();
    } finally {
      db.close();
    }
  };
  const live = liveWriter(path);
  try {
    settle();
    growLastRun(live);
    assert.ok(sync(path, index).pagesHashed > 0, 'the first check next to the writer hashes the file');
    growLastRun(live);
    const kept = keptStamp();
    assert.equal(kept, stampOf(statSync(path, { bigint: true })), 'the pass kept is of the file as it is');
    assert.equal(ahead(kept), false, 'the pass kept stands for the file: nothing started ahead');
    assert.equal(ahead(null), true, 'no pass kept');
    assert.equal(ahead(`${kept}0`), true, 'a pass of another state of the file');
    assert.equal(sync(path, index).pagesHashed, 0, 'and indeed the file was not hashed');
  } finally {
    live.close();
  }
  // the writer gone (its log checkpointed): the file is read without locks, no pass stands for it
  assert.equal(ahead(stampOf(statSync(path, { bigint: true }))), true);
});

test('next to a live writer the file is hashed once: commits to its log cost the log; an edit of the file itself, times set back, a checkpoint or a damaged kept pass hash it again', () => {
  const { path, index, runs } = indexedStore(39);
  const live = liveWriter(path);
  const grow = (): void => growLastRun(live);
  const filePages = (): number => statSync(path).size / 4096;
  try {
    settle();
    grow();
    let r = sync(path, index);
    assert.equal(r.pagesHashed, filePages(), 'the first check next to the writer hashes the file');
    assertSameAnswers(path, index, runs, 50);
    // commits to the log leave the file as it was: the pass kept stands for it
    for (let i = 0; i < 2; i++) {
      grow();
      r = sync(path, index);
      assert.equal(r.contentChecked, true);
      assert.equal(r.pagesHashed, 0, 'the file was not read again');
      assert.ok(r.rowsDigested > 0 && r.rowsDigested < storeRows(path) / 2, `read ${r.rowsDigested} of ${storeRows(path)}`);
    }
    assertSameAnswers(path, index, runs, 51);
    // a same-length edit committed to the log: seen without reading the file
    const victim = runs[3]!.id;
    const text = live.prepare('SELECT messages FROM snapshots WHERE run_id = ? ORDER BY seq LIMIT 1').pluck().get(victim) as string;
    const word = /"content": "([a-z]{5,})/.exec(text)![1]!;
    live
      .prepare('UPDATE snapshots SET messages = ? WHERE run_id = ? AND messages = ?')
      .run(text.replace(`"content": "${word}`, `"content": "${'v'.repeat(word.length)}`), victim, text);
    r = sync(path, index);
    assert.equal(r.pagesHashed, 0);
    assert.ok(r.runsReplayed >= 1, 'the edited run was rebuilt');
    assertSameAnswers(path, index, runs, 52, 'v'.repeat(word.length), word);
    // the file itself edited under the writer (a page the log does not hold), its modification time set back:
    // its change time moved, so the pass kept is not taken, and the edit is seen
    const other = runs[8]!.id;
    const old = live.prepare('SELECT messages FROM snapshots WHERE run_id = ? ORDER BY seq LIMIT 1').pluck().get(other) as string;
    const word2 = /"content": "([a-z]{5,})/.exec(old)![1]!;
    patchFile(path, `"content": "${word2}`, `"content": "${'k'.repeat(word2.length)}`);
    r = sync(path, index);
    assert.equal(r.pagesHashed, filePages(), 'an edited file is hashed again');
    assert.ok(r.runsReplayed >= 1, 'the run edited in the file was rebuilt');
    assertSameAnswers(path, index, runs, 53, 'k'.repeat(word2.length), word2);
    // a checkpoint writes the file: hashed again (and kept once it has settled)
    live.pragma('wal_checkpoint(PASSIVE)');
    settle();
    r = sync(path, index);
    assert.equal(r.pagesHashed, filePages());
    assert.equal(r.rowsDigested, 0, 'the same pages');
    grow();
    r = sync(path, index);
    assert.equal(r.pagesHashed, 0);
    assertSameAnswers(path, index, runs, 54);
    // a damaged part of the kept pass: taken for none, the file hashed, the pass written anew
    const idx = new Database(index);
    idx.prepare('UPDATE pages SET digests = zeroblob(length(digests)) WHERE id = ?').run(4 * 2 ** 24);
    idx.close();
    grow();
    r = sync(path, index);
    assert.equal(r.pagesHashed, filePages());
    assertSameAnswers(path, index, runs, 55);
    grow();
    r = sync(path, index);
    assert.equal(r.pagesHashed, 0, 'the pass was written again');
    assertSameAnswers(path, index, runs, 56);
    // --verify takes no map's word, nor the pass kept with it
    grow();
    assert.equal(sync(path, index, true).pagesHashed, filePages());
  } finally {
    live.close();
  }
  // the writer checkpointed and left: no log, the file read without locks keeps no pass
  appendRun(path);
  const r = sync(path, index);
  assert.equal(r.pagesHashed, filePages());
  assert.equal(
    storeValue(index, 'SELECT COUNT(*) FROM pages WHERE id = 4 OR (id >= ? AND id < ?)', 4 * 2 ** 24, 5 * 2 ** 24),
    0,
    'no pass is kept without a live writer',
  );
  assertSameAnswers(path, index, runs, 57);
});

test('a writer killed with its log open (-wal and -shm left, no writer attached): the map follows the log as SQLite recovers it, and touches nothing', async () => {
  const { path, index, runs } = indexedStore(39);
  const total = storeRows(path);
  const child = spawn(process.execPath, [KILLED_WRITER, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  assert.equal(line, 'committed');
  child.kill('SIGKILL');
  await once(child, 'exit');
  assert.ok(existsSync(`${path}-wal`) && existsSync(`${path}-shm`), 'the killed writer left its log and index');
  const files = storeDigest(path);
  const r = sync(path, index);
  assert.equal(r.contentChecked, true);
  assert.ok(r.rowsDigested > 0 && r.rowsDigested < total / 2, `read ${r.rowsDigested} of ${total + 1}`);
  assertSameAnswers(path, index, runs, 48);
  assert.deepEqual(storeDigest(path), files, 'the store, its log and its index are as the writer left them');
  // a byte of the commit frame changed: its checksum fails, so recovery ends before that commit and
  // SQLite reads the store without it; the header still names it: no map, every row read as SQLite reads it
  const log = readFileSync(`${path}-wal`);
  const frames = (log.length - 32) / (24 + 4096);
  const fd = openSync(`${path}-wal`, 'r+');
  const at = 32 + (frames - 1) * (24 + 4096) + 24 + 2000;
  writeSync(fd, Buffer.of(log[at]! ^ 1), 0, 1, at);
  closeSync(fd);
  const edited = storeDigest(path);
  const again = sync(path, index);
  assert.equal(again.rowsDigested, total, 'every row SQLite reads: those before the lost commit');
  assert.ok(again.runsReplayed + again.runsResumed >= 1, 'the run that lost its step was rebuilt');
  assertSameAnswers(path, index, runs, 49);
  assert.deepEqual(storeDigest(path), edited);
});

test('a layout the page map does not know (a run id that is a blob): every row is read, answers equal --no-index', () => {
  const { path, index, runs } = indexedStore(36);
  const db = new Database(path);
  db.prepare(
    "INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) VALUES (X'00ff', 0, '2026-01-01T00:00:00Z', 'complete', '[]')",
  ).run();
  db.close();
  const r = sync(path, index);
  assert.equal(r.rowsDigested, storeRows(path), 'no map: the full digest');
  assertSameAnswers(path, index, runs, 15);
  appendRun(path);
  assert.equal(sync(path, index).rowsDigested, storeRows(path), 'still no map');
  assertSameAnswers(path, index, runs, 16);
});

test('the decoded b-tree kept with the map: after several updates, an in-place edit under an unchanged interior page is still seen', () => {
  const { path, runs } = threadedStore(37, 60);
  const index = join(tempDir(), 'idx.db');
  const first = sync(path, index);
  assert.equal(first.rowsDigested, storeRows(path));
  // each update takes the tree the previous one kept, and keeps its own
  for (let i = 0; i < 3; i++) {
    appendRun(path);
    assert.ok(sync(path, index).rowsDigested < storeRows(path) / 4);
  }
  const root = storeValue(path, "SELECT rootpage FROM sqlite_schema WHERE name = 'snapshots'") as number;
  const rootType = readFileSync(path).readUInt8((root - 1) * 4096);
  assert.equal(rootType, 0x05, 'the snapshots table has an interior root page');
  // an old run's small snapshot, on a leaf page: the root above it keeps its bytes
  const victim = runs[3]!.id;
  const text = storeValue(path, 'SELECT messages FROM snapshots WHERE run_id = ? ORDER BY seq LIMIT 1', victim) as string;
  const word = /"content": "([a-z]{5,})/.exec(text)![1]!;
  const rootBefore = readFileSync(path).subarray((root - 1) * 4096, root * 4096);
  patchFile(path, `"content": "${word}`, `"content": "${'z'.repeat(word.length)}`);
  assert.deepEqual(readFileSync(path).subarray((root - 1) * 4096, root * 4096), rootBefore);
  assertSameAnswers(path, index, runs, 17, 'z'.repeat(word.length), word);
  const total = storeRows(path);
  appendRun(path);
  const r = sync(path, index);
  assert.ok(r.rowsDigested < total / 4, `read ${r.rowsDigested} of ${total}`);
  assertSameAnswers(path, index, runs, 18, 'z'.repeat(word.length));
});

test('a page tree row kept for another content (a writer that updated the map alone) is not taken', () => {
  const db = new Database(':memory:');
  db.exec(INDEX_DDL);
  const t = new IndexTables(new SqliteIndexDb(db));
  const digests = Uint32Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
  const tree = { runIds: ['run-a'], values: Float64Array.from([2, 1, 1, 0, 5, 0, 0]) };
  t.putPageMap('content-1', 7, digests, pageTree(tree));
  assert.deepEqual(treeOf(t.pageMap()!.tree), tree);
  // an older convsearch writes row 1 alone
  const head = JSON.stringify({ content: 'content-2', seed: 7 });
  const bytes = Buffer.from(digests.buffer);
  db.prepare('UPDATE pages SET head = ?, digests = ?, sum = ? WHERE id = 1').run(head, bytes, rowSum([1, head, bytes]));
  const map = t.pageMap()!;
  assert.equal(map.content, 'content-2');
  assert.equal(map.tree, null, 'the tree decoded with content-1 does not describe content-2');
  // a map taken without a tree drops the old one
  t.putPageMap('content-3', 7, digests, pageTree(tree));
  t.putPageMap('content-4', 7, digests, null);
  assert.equal(
    db.prepare('SELECT COUNT(*) FROM pages WHERE id IN (2, 7) OR id >= 2 * 16777216').pluck().get(),
    0,
    'no tree row or part is left',
  );
});

test("the tables' walks are kept with the map (row 6): given back with it, not when kept with another content, and a head that does not fit its bytes is damage", () => {
  const db = new Database(':memory:');
  db.exec(INDEX_DDL);
  const t = new IndexTables(new SqliteIndexDb(db));
  const digests = Uint32Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
  const runs = {
    root: 3,
    pageSize: 4096,
    usable: 4096,
    walked: 'runs-fingerprint',
    pages: Uint32Array.from({ length: 9000 }, (_, i) => i + 3),
  };
  const media = { root: 2, pageSize: 4096, usable: 4076, walked: 'media-fingerprint', pages: Uint32Array.from([2, 9100]) };
  t.putPageMap('content-1', 7, digests, null);
  t.putWalks('content-1', { media, runs });
  assert.deepEqual(t.pageMap()!.walks, { media, runs }, 'both walks, across parts');
  t.putWalks('content-1', { media: null, runs });
  assert.deepEqual(t.pageMap()!.walks, { media: null, runs });
  // a walk kept without the geometry it was read with (the row's first form) is not taken; the others are
  t.putWalks('content-1', { media, runs });
  const firstForm = JSON.parse(db.prepare('SELECT head FROM pages WHERE id = 6').pluck().get() as string);
  firstForm.runs = { root: runs.root, walked: runs.walked, pages: runs.pages.length };
  const firstText = JSON.stringify(firstForm);
  db.prepare('UPDATE pages SET head = ?, sum = ? WHERE id = 6').run(firstText, rowSum([6, firstText, Buffer.alloc(0)]));
  assert.deepEqual(t.pageMap()!.walks, { media, runs: null });
  // a map written without its walks (an older convsearch): the walks of another content are not taken
  t.putPageMap('content-2', 7, digests, null);
  assert.equal(t.pageMap()!.walks, null);
  t.putWalks('content-2', null);
  assert.equal(
    db
      .prepare('SELECT COUNT(*) FROM pages WHERE id = 6 OR (id >= ? AND id < ?)')
      .pluck()
      .get(6 * 2 ** 24, 7 * 2 ** 24),
    0,
    'none: dropped',
  );
  t.putWalks('content-2', { media, runs: null });
  const head = { ...JSON.parse(db.prepare('SELECT head FROM pages WHERE id = 6').pluck().get() as string), media: { ...media, pages: 3 } };
  const text = JSON.stringify(head);
  const none = Buffer.alloc(0);
  db.prepare('UPDATE pages SET head = ?, sum = ? WHERE id = 6').run(text, rowSum([6, text, none]));
  assert.throws(() => t.pageMap(), IndexDamagedError);
  // bytes that are not whole page numbers (the head and its one part one byte short)
  t.putWalks('content-2', { media, runs: null });
  const short = JSON.stringify({ ...JSON.parse(db.prepare('SELECT head FROM pages WHERE id = 6').pluck().get() as string), bytes: 7 });
  db.prepare('UPDATE pages SET head = ?, sum = ? WHERE id = 6').run(short, rowSum([6, short, none]));
  const part = (
    db
      .prepare('SELECT digests FROM pages WHERE id = ?')
      .pluck()
      .get(6 * 2 ** 24) as Buffer
  ).subarray(0, 7);
  db.prepare('UPDATE pages SET digests = ?, sum = ? WHERE id = ?').run(part, rowSum([6 * 2 ** 24, '', part]), 6 * 2 ** 24);
  assert.throws(() => t.pageMap(), IndexDamagedError);
});

/** Writes `bytes` as pages row `id` in parts of 32 KiB under `head`, as an older convsearch's writePart did. */
function putRowInParts(db: Database.Database, id: number, head: Record<string, unknown>, bytes: Buffer): void {
  const parts = Math.ceil(bytes.length / 32768);
  db.prepare('DELETE FROM pages WHERE id = ? OR (id >= ? AND id < ?)').run(id, id * 2 ** 24, (id + 1) * 2 ** 24);
  const put = db.prepare('INSERT INTO pages (id, head, digests, sum) VALUES (?, ?, ?, ?)');
  for (let k = 0; k < parts; k++) {
    const data = bytes.subarray(k * 32768, (k + 1) * 32768);
    put.run(id * 2 ** 24 + k, '', data, rowSum([id * 2 ** 24 + k, '', data]));
  }
  const text = JSON.stringify({ ...head, parts, bytes: bytes.length });
  put.run(id, text, Buffer.alloc(0), rowSum([id, text, Buffer.alloc(0)]));
}

test("the decoded tree is kept as row 7 (its run ids a text block); a tree an older convsearch kept as row 2 (ids as JSON) is read while row 7 is not the map's, never written", () => {
  const db = new Database(':memory:');
  db.exec(INDEX_DDL);
  const t = new IndexTables(new SqliteIndexDb(db));
  const digests = Uint32Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
  const rowsOf = (id: number): number =>
    db
      .prepare('SELECT COUNT(*) FROM pages WHERE id = ? OR (id >= ? AND id < ?)')
      .pluck()
      .get(id, id * 2 ** 24, (id + 1) * 2 ** 24) as number;
  // ids across parts of both blocks (20,000 lengths: 80,000 bytes), in Latin-1; then wide ones, a lone surrogate and an empty id among them
  const many = {
    runIds: Array.from({ length: 20000 }, (_, i) => `run-\u00e9-${i}`),
    values: Float64Array.from({ length: 9000 }, (_, i) => i % 13),
  };
  const wide = { runIds: ['run-\u4e2d', '', 'r\ud800x', 'run-a'], values: Float64Array.from([4, 1, 0, 2, 3]) };
  const empty = { runIds: [], values: new Float64Array(0) };
  for (const tree of [many, wide, empty]) {
    t.putPageMap('content-1', 7, digests, pageTree(tree));
    assert.deepEqual(treeOf(t.pageMap()!.tree), tree);
    assert.equal(rowsOf(2), 0);
  }
  // an older convsearch wrote row 2 (values, then the ids' JSON) for the map's content; row 7 is another content's
  const legacy = (content: string, tree: { runIds: string[]; values: Float64Array }): void => {
    const ids = Buffer.from(JSON.stringify(tree.runIds), 'utf8');
    putRowInParts(db, 2, { content, runIds: [], ids: ids.length }, Buffer.concat([Buffer.from(tree.values.buffer), ids]));
  };
  t.putPageMap('content-1', 7, digests, pageTree(wide));
  const head = JSON.stringify({ content: 'content-2', seed: 7 });
  const bytes = Buffer.from(digests.buffer);
  db.prepare('UPDATE pages SET head = ?, digests = ?, sum = ? WHERE id = 1').run(head, bytes, rowSum([1, head, bytes]));
  legacy('content-2', many);
  assert.deepEqual(treeOf(t.pageMap()!.tree), many, "row 2 kept for the map's content");
  legacy('content-3', many);
  assert.equal(t.pageMap()!.tree, null, 'neither row kept for it');
  // row 7 kept for the map's content is taken over row 2; the next write drops row 2
  t.putPageMap('content-4', 7, digests, pageTree(wide));
  legacy('content-4', many);
  assert.deepEqual(treeOf(t.pageMap()!.tree), wide);
  t.putPageMap('content-5', 7, digests, pageTree(wide));
  assert.equal(rowsOf(2), 0, 'row 2 dropped');
  assert.ok(rowsOf(7) > 0);
  // a row 7 whose head does not fit its bytes, or whose lengths do not add up to its text: damage
  const kept = JSON.parse(db.prepare('SELECT head FROM pages WHERE id = 7').pluck().get() as string);
  const sevenBytes = (): Buffer =>
    Buffer.concat(
      db
        .prepare('SELECT digests FROM pages WHERE id >= ? AND id < ? ORDER BY id')
        .pluck()
        .all(7 * 2 ** 24, 8 * 2 ** 24) as Buffer[],
    );
  const whole = sevenBytes();
  const { parts: _p, bytes: _b, ...rest } = kept;
  for (const bad of [
    { ...rest, runs: 9000 },
    { ...rest, values: 12 },
    { ...rest, ids: { bytes: rest.ids.bytes - 1, wide: false } },
  ]) {
    putRowInParts(db, 7, bad, whole);
    assert.throws(() => t.pageMap(), IndexDamagedError, JSON.stringify(bad));
  }
  // the first id's length one too many (past the text), or one too few (the text left over)
  for (const by of [1, -1]) {
    const lengths = Buffer.from(whole);
    lengths.writeUInt32LE(lengths.readUInt32LE(32768) + by, 32768);
    putRowInParts(db, 7, rest, lengths);
    assert.throws(() => t.pageMap(), IndexDamagedError, `length ${by}`);
  }
  // a map taken without a tree drops both rows
  legacy('content-5', many);
  t.putPageMap('content-6', 7, digests, null);
  assert.equal(rowsOf(2) + rowsOf(7), 0);
});

test('the map is kept in parts: an update rewrites the parts whose bytes changed only; a part gone is damage', () => {
  const db = new Database(':memory:');
  db.exec(INDEX_DDL);
  // counts the pages rows written
  let written = 0;
  const home = new (class extends SqliteIndexDb {
    override prepare(sql: string): IndexStatement {
      const s = super.prepare(sql);
      if (!sql.startsWith('INSERT OR REPLACE INTO pages')) return s;
      const run = (...a: Parameters<IndexStatement['run']>): void => {
        written++;
        s.run(...a);
      };
      return { get: s.get.bind(s), all: s.all.bind(s), iterate: s.iterate.bind(s), run };
    }
  })(db);
  const t = new IndexTables(home);
  // 6,000 store pages: 96,000 bytes of digests, three parts
  const digests = Uint32Array.from({ length: 6000 * 4 }, (_, i) => (i * 2654435761) >>> 0);
  const tree = { runIds: ['run-a', 'run-b'], values: Float64Array.from({ length: 5000 }, (_, i) => i % 97) };
  t.putPageMap('content-1', 7, digests, pageTree(tree));
  assert.equal(
    written,
    3 + 1 + (2 + 1 + 1) + 1,
    "every part (the tree's values, its ids' lengths and text, each from a part boundary) and both heads",
  );
  written = 0;
  digests[2048 * 4 + 5] = 1; // a page of the second part
  t.putPageMap('content-2', 7, digests, pageTree(tree));
  assert.equal(written, 1 + 1 + 1, 'the changed part and the two heads');
  const map = t.pageMap()!;
  assert.equal(map.content, 'content-2');
  assert.deepEqual(pagesOf(map.pages), digests);
  assert.deepEqual(treeOf(map.tree), tree);
  // read as the parts SQLite handed out, not joined into one copy: a chunk each
  assert.equal(map.pages.chunks.length, 3);
  assert.equal(new Set(map.pages.chunks.map((c) => c.buffer)).size, 3, 'each chunk is its own part');
  assert.equal(map.tree!.values.chunks.length, 2, '5,000 values: a whole part and the rest');
  // the file pass (row 4): its digests and first words in parts, the part between them holding both
  const pass = { stamp: '12:4096:5:6', seed: 7, pageSize: 4096, digests, next: Uint32Array.from({ length: 6000 }, (_, i) => i * 7919) };
  t.putFilePass(pass);
  const kept = t.filePass()!;
  assert.deepEqual(
    { stamp: kept.stamp, seed: kept.seed, pageSize: kept.pageSize, pages: kept.pages },
    { stamp: pass.stamp, seed: 7, pageSize: 4096, pages: 6000 },
  );
  const words = pagesOf(kept.words);
  assert.deepEqual(words.subarray(0, 6000 * 4), digests);
  assert.deepEqual(words.subarray(6000 * 4), pass.next);
  t.putFilePass(null);
  assert.equal(t.filePass(), null);
  assert.equal(
    db
      .prepare('SELECT COUNT(*) FROM pages WHERE id = 4 OR (id >= ? AND id < ?)')
      .pluck()
      .get(4 * 16777216, 5 * 16777216),
    0,
    'its head and parts are gone',
  );
  // a shorter map (a VACUUM): the parts past its end go
  t.putPageMap('content-3', 7, digests.subarray(0, 100 * 4), null);
  assert.deepEqual(pagesOf(t.pageMap()!.pages), digests.subarray(0, 100 * 4));
  assert.equal(db.prepare('SELECT COUNT(*) FROM pages').pluck().get(), 2, 'one head and one part');
  // a part gone, or changed without its checksum: damage, never a shorter map
  t.putPageMap('content-4', 7, digests, pageTree(tree));
  db.prepare('DELETE FROM pages WHERE id = ?').run(16777216 + 1);
  assert.throws(() => t.pageMap(), IndexDamagedError);
  t.putPageMap('content-5', 7, digests, pageTree(tree));
  db.prepare('UPDATE pages SET digests = zeroblob(10) WHERE id = ?').run(7 * 16777216);
  assert.throws(() => t.pageMap(), IndexDamagedError);
  // parts of other sizes that add up to the head's (under sound checksums): damage, as chunks could not be found by index
  t.putPageMap('content-5b', 7, digests, pageTree(tree));
  const part = (k: number): Buffer =>
    db
      .prepare('SELECT digests FROM pages WHERE id = ?')
      .pluck()
      .get(16777216 + k) as Buffer;
  const [p0, p1] = [part(0), part(1)];
  const put = (k: number, b: Buffer): void => {
    db.prepare('UPDATE pages SET digests = ?, sum = ? WHERE id = ?').run(b, rowSum([16777216 + k, '', b]), 16777216 + k);
  };
  put(0, p0.subarray(0, p0.length - 16));
  put(1, Buffer.concat([p0.subarray(p0.length - 16), p1]));
  assert.throws(() => t.pageMap(), IndexDamagedError);
  // a head whose sizes its parts cannot hold (under a sound checksum): damage, before anything that large is made
  t.putPageMap('content-6', 7, digests, pageTree(tree));
  for (const bytes of [1e12, 3 * 32768 + 1, 2 * 32768, -1]) {
    const head = JSON.stringify({ content: 'content-6', seed: 7, parts: 3, bytes });
    const empty = Buffer.alloc(0);
    db.prepare('UPDATE pages SET head = ?, sum = ? WHERE id = 1').run(head, rowSum([1, head, empty]));
    assert.throws(() => t.pageMap(), IndexDamagedError, `bytes ${bytes}`);
  }
});

test('a write in the generation the map was read in compares its parts with the bytes read, reading none back; vouched for by no one, it reads them', () => {
  const db = new Database(':memory:');
  db.exec(INDEX_DDL);
  // counts the pages rows read one by one, and written
  const counts = { read: 0, written: 0 };
  const home = new (class extends SqliteIndexDb {
    override prepare(sql: string): IndexStatement {
      const s = super.prepare(sql);
      if (!/ pages\b/.test(sql)) return s;
      const get = (...a: Parameters<IndexStatement['get']>): unknown => {
        counts.read++;
        return s.get(...a);
      };
      const run = (...a: Parameters<IndexStatement['run']>): void => {
        if (sql.startsWith('INSERT OR REPLACE INTO pages')) counts.written++;
        s.run(...a);
      };
      return { get, all: s.all.bind(s), iterate: s.iterate.bind(s), run };
    }
  })(db);
  const t = new IndexTables(home);
  const digests = Uint32Array.from({ length: 6000 * 4 }, (_, i) => (i * 2654435761) >>> 0);
  const tree = { runIds: ['run-a', 'run-b'], values: Float64Array.from({ length: 5000 }, (_, i) => i % 97) };
  t.putPageMap('content-1', 7, digests, pageTree(tree));
  t.putKnownRuns({ content: 'content-1', runList: 'list', runCount: 1, runs: new Map([['run-a', { count: 1, maxSeq: 1, digest: 'd' }]]) });
  assert.equal(t.pageMap()!.content, 'content-1');
  assert.equal(t.knownRuns()!.content, 'content-1');
  Object.assign(counts, { read: 0, written: 0 });
  digests[2048 * 4 + 5] ^= 1; // a page of the second part
  t.putPageMap('content-2', 7, digests, pageTree(tree), null, null, true);
  t.putKnownRuns(
    {
      content: 'content-2',
      runList: 'list',
      runCount: 2,
      runs: new Map([
        ['run-a', { count: 1, maxSeq: 1, digest: 'd' }],
        ['run-b', { count: 1, maxSeq: 2, digest: 'e' }],
      ]),
    },
    true,
  );
  // the map's changed part and head, the tree's head, and of the known runs a part of each block (the runs'
  // records, their ids, their digests: each grew) and the head
  assert.deepEqual(counts, { read: 0, written: 1 + 1 + 1 + 3 + 1 }, 'the changed parts and the three heads, no part read back');
  const map = t.pageMap()!;
  assert.equal(map.content, 'content-2');
  assert.deepEqual(pagesOf(map.pages), digests);
  assert.deepEqual(treeOf(map.tree), tree);
  assert.deepEqual([...t.knownRuns()!.runs.keys()], ['run-a', 'run-b']);
  // another writer's parts (written behind this process's back): without the caller's word, each part is read and compared
  const theirs = Uint32Array.from(digests, (x) => x ^ 0x55);
  new IndexTables(new SqliteIndexDb(db)).putPageMap('content-3', 8, theirs, pageTree(tree));
  Object.assign(counts, { read: 0, written: 0 });
  t.putPageMap('content-4', 7, digests, pageTree(tree));
  assert.ok(counts.read >= 3, 'the parts are read back');
  assert.deepEqual(pagesOf(t.pageMap()!.pages), digests, 'every part that differs from the kept one is written');
  // a row read, then written twice in one generation: the second write does not take the first read's bytes
  t.putPageMap('content-5', 7, theirs, pageTree(tree), null, null, true);
  t.putPageMap('content-6', 7, digests, pageTree(tree), null, null, true);
  assert.deepEqual(pagesOf(t.pageMap()!.pages), digests);
});

const runRows = (path: string, runId: string): number =>
  storeValue(path, 'SELECT COUNT(*) FROM snapshots WHERE run_id = ?', runId) as number;

/** A store indexed, then a run appended to once (the leaves the append changed are decoded, their cells digested). */
function appendedStore(seed: number): ReturnType<typeof indexedStore> & { victim: string } {
  const store = indexedStore(seed);
  // a run with two complete snapshots or more (a history to repeat)
  const victim = storeValue(
    store.path,
    "SELECT run_id FROM snapshots WHERE state = 'complete' GROUP BY run_id HAVING COUNT(*) >= 2 ORDER BY MIN(seq) LIMIT 1 OFFSET 2",
  ) as string;
  appendTo(store.path, victim, 'warmup step');
  const r = sync(store.path, store.index);
  assert.equal(r.runsResumed, 1);
  // the build's map digested the cells of its last leaf, where the row was appended: the first update reads that row only
  assert.equal(r.rowsDigested, 1, 'the first update after a build reads the new row only');
  return { ...store, victim };
}

test("snapshots appended to a run, long and short, leaves splitting: only the new rows are digested (the old ones' cells and pages vouch for them), and answers equal --no-index", () => {
  const { path, index, runs, victim } = appendedStore(41);
  for (let round = 0; round < 8; round++) {
    const before = storeRows(path);
    // now and then a snapshot longer than a page (on overflow pages), and two in one commit
    appendTo(path, victim, `tailword${round} quarzite`, round % 3 === 0 ? 900 : 0);
    if (round % 4 === 1) appendTo(path, victim, `tailword${round}b`);
    const added = storeRows(path) - before;
    const r = sync(path, index);
    assert.equal(r.runsResumed, 1, `round ${round}`);
    assert.equal(r.runsReplayed, 0, `round ${round}`);
    assert.equal(r.rowsDigested, added, `round ${round}: read ${r.rowsDigested} rows, ${added} new of ${runRows(path, victim)} in the run`);
  }
  assertSameAnswers(path, index, runs, 41, 'quarzite', 'tailword3', 'tailword5b');
  // the digests taken on from the recorded ones are those of the rows read whole
  assert.equal(sync(path, index, true).upToDate, true, '--verify finds the index current');
});

test('an edit in place of an old row of a run appended to (its cell on the leaf the append changed, or its overflow page), times set back: the run is read whole and rebuilt, answers equal --no-index', () => {
  const { path, index, runs, victim } = appendedStore(42);
  // a row known by its time (a cell's first bytes: on its leaf, whatever its length), and a long one
  appendTo(path, victim, 'shortmarker one', 0, '2027-03-03T03:03:03Z');
  appendTo(path, victim, 'longmarker one', 900);
  assert.equal(sync(path, index).runsResumed, 1);
  // the old row's time edited on its leaf, in the moment of an append to that leaf
  patchFile(path, '2027-03-03T03:03:03Z', '2027-03-03T03:03:04Z');
  appendTo(path, victim, 'next step');
  let r = sync(path, index);
  assert.equal(r.runsResumed, 0);
  assert.equal(r.runsReplayed, 1);
  assert.equal(r.rowsDigested, runRows(path, victim), 'the run read whole');
  assert.equal(storeValue(path, 'SELECT COUNT(*) FROM snapshots WHERE timestamp = ?', '2027-03-03T03:03:04Z'), 1);
  assertSameAnswers(path, index, runs, 42, 'shortmarker');
  // an old long row's overflow page (the words lie past what a leaf holds of a row)
  patchFile(path, 'lorem longmarker', 'lorem longmarkex');
  appendTo(path, victim, 'another step');
  r = sync(path, index);
  assert.equal(r.runsReplayed, 1);
  assert.equal(r.rowsDigested, runRows(path, victim), 'the run read whole');
  assertSameAnswers(path, index, runs, 43, 'longmarkex', 'longmarker');
});

test('an old row deleted from a run appended to: the count falls short of the digest taken on, the run is read whole, answers equal --no-index', () => {
  const { path, index, runs, victim } = appendedStore(43);
  const db = new Database(path);
  db.prepare('DELETE FROM snapshots WHERE seq = (SELECT seq FROM snapshots WHERE run_id = ? ORDER BY seq LIMIT 1 OFFSET 1)').run(victim);
  db.close();
  appendTo(path, victim, 'after the deletion');
  const r = sync(path, index);
  assert.equal(r.runsReplayed, 1);
  assert.equal(r.runsResumed, 0);
  // (with the runs whose cells share the leaf the deletion changed: a first map digests its last leaf's cells only)
  assert.ok(r.rowsDigested >= runRows(path, victim), 'the run read whole');
  assertSameAnswers(path, index, runs, 44, 'deletion');
  // the last row the index read deleted, then an append: nothing to go on from
  appendTo(path, victim, 'one more');
  assert.equal(sync(path, index).runsResumed, 1);
  const again = new Database(path);
  again.prepare('DELETE FROM snapshots WHERE seq = (SELECT MAX(seq) FROM snapshots WHERE run_id = ?)').run(victim);
  again.close();
  appendTo(path, victim, 'after the last went');
  const r2 = sync(path, index);
  assert.equal(r2.runsResumed, 0);
  assert.ok(r2.rowsDigested >= runRows(path, victim), 'the run read whole');
  assertSameAnswers(path, index, runs, 45, 'went', 'more');
});

test("the first update after a build: the build's map digested its last leaf's cells, so a row appended beside another run's cell reads that row only", () => {
  const { path, runs } = threadedStore(44);
  const [other, victim] = [runs[0]!.id, runs[5]!.id];
  // a small row of another run last: the last leaf holds its cell and has room for the next
  const small = (runId: string): void => {
    const db = new Database(path);
    db.prepare(
      "INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) VALUES (?, 99, '2027-01-01T00:00:00Z', 'interrupted', '[]')",
    ).run(runId);
    db.close();
  };
  small(other);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  small(victim);
  const r = sync(path, index);
  assert.equal(r.rowsDigested, 1, `read ${r.rowsDigested} rows; ${other} has ${runRows(path, other)}`);
  assertSameAnswers(path, index, runs, 46);
});
