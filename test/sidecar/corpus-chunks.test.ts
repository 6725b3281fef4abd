/**
 * Issue 21: an update reads the blobs of the runs that changed only (the others' marks are read, under
 * their own checksum), and rewrites the corpus cache from the chunk of the first run it changed on. A
 * store of more runs than two chunks hold is changed early, in the middle and at the end; every answer
 * stays that of `--no-index`, and the cache never keeps a stale or surplus chunk.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { appendRun } from '../../scripts/bench/mutations.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { copyFileSync } from 'node:fs';
import { writeCorpusCache } from '../../src/sidecar/corpus-cache.js';
import { SqliteIndexDb } from '../../src/sidecar/index-db.js';
import { readIndexMeta } from '../../src/sidecar/meta.js';
import { CACHE_CHUNK, IndexTables } from '../../src/sidecar/tables.js';
import { openIndexedSource } from '../../src/sidecar/with-index.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { cli } from '../helpers/cli.js';
import { assertSameAnswers, patchFile, sync } from '../helpers/index-answers.js';
import { assertListedFromIndex } from '../helpers/run-listing.js';
import { writeRun } from '../helpers/random-stores.js';
import { addRawSnapshot, tempDir } from '../helpers/stores.js';

type Runs = Array<{ id: string; conv: string | null }>;

const RUNS = 2 * CACHE_CHUNK + 40;

/** RUNS small runs in 40 conversations; run 3 (in the first chunk) holds the word `zzearlyalpha`. */
function chunkedStore(): { path: string; runs: Runs } {
  const random = rng(4242);
  const path = join(tempDir(), 'sessions.db');
  const w = new StepStoreWriter(path);
  const runs: Runs = [];
  let clock = Date.UTC(2026, 0, 1);
  try {
    for (let i = 0; i < RUNS; i++) {
      const conv = i % 9 === 0 ? null : `conv-${i % 40}`;
      const id = `run-${i}`;
      clock += 60_000;
      writeRun(w, random, id, conv, new Date(clock));
      if (i === 3)
        addRawSnapshot(w, id, '[{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "zzearlyalpha"}]}]', {
          stepIndex: 50,
        });
      runs.push({ id, conv });
    }
  } finally {
    w.close();
  }
  return { path, runs };
}

/** The runs the index's corpus cache lists (read and checked as a search reads them) are the store's, in its order. */
function assertCacheListsStore(path: string, index: string): void {
  const store = openSqliteReader(path);
  try {
    const opened = openIndexedSource(store, { path: index });
    try {
      assert.deepEqual(opened.source.runs(), store.runs());
    } finally {
      opened.db.close();
    }
  } finally {
    store.close();
  }
}

/** The index's cache rows equal those written anew from every run row (writeCorpusCache 'all', on a copy). */
function assertCacheAsWritten(index: string, what: string): void {
  const copy = join(tempDir(), 'copy.db');
  copyFileSync(index, copy);
  const rows = (file: string): unknown[] => {
    const db = new Database(file, { readonly: true });
    try {
      return db
        .prepare('SELECT id, hex(numbers) AS numbers, hex(lengths) AS lengths, hex(runs) AS runs, sum FROM corpus_cache ORDER BY id')
        .all();
    } finally {
      db.close();
    }
  };
  const db = new Database(copy);
  try {
    const t = new IndexTables(new SqliteIndexDb(db));
    const meta = readIndexMeta(t.readMeta());
    db.transaction(() => writeCorpusCache(t, meta.runCount, meta, 'all'))();
  } finally {
    db.close();
  }
  assert.deepEqual(rows(index), rows(copy), what);
}

function cacheChunks(index: string): number[] {
  const db = new Database(index, { readonly: true });
  try {
    return db.prepare('SELECT id FROM corpus_cache ORDER BY id').pluck().all() as number[];
  } finally {
    db.close();
  }
}

test('changes early, in the middle and at the end of a store of several cache chunks: answers equal --no-index, the cache has one row per chunk', () => {
  const { path, index, runs } = (() => {
    const s = chunkedStore();
    return { ...s, index: join(tempDir(), 'idx.db') };
  })();
  assert.equal(sync(path, index).runsReplayed, RUNS);
  assert.deepEqual(cacheChunks(index), [0, 1, 2]);
  assertCacheListsStore(path, index);
  assertCacheAsWritten(index, 'step 1');
  assertSameAnswers(path, index, runs, 1, 'zzearlyalpha');
  assertListedFromIndex(path, index, 'a build of many runs');

  // a same-length edit in place of a run in the first chunk: its rebuilt row (new segment, lengths) must reach the cache
  patchFile(path, 'zzearlyalpha', 'zzearlybravo');
  const edited = sync(path, index);
  assert.equal(edited.runsReplayed, 1);
  assertCacheListsStore(path, index);
  assertCacheAsWritten(index, 'step 2');
  assertSameAnswers(path, index, runs, 2, 'zzearlybravo', 'zzearlyalpha');

  // one appended run: the last chunk only changes, and the answers with it
  appendRun(path);
  assert.equal(sync(path, index).runsReplayed, 1);
  assertCacheListsStore(path, index);
  assertCacheAsWritten(index, 'step 3');
  assertSameAnswers(path, index, runs, 3, 'zzearlybravo');

  // a deleted run in the first chunk: every later run moves one place, across the chunk boundaries
  const db = new Database(path);
  db.prepare('DELETE FROM snapshots WHERE run_id = ?').run('run-1');
  db.prepare('DELETE FROM runs WHERE run_id = ?').run('run-1');
  runs.splice(1, 1);
  assert.equal(sync(path, index).runsRemoved, 1);
  assertCacheListsStore(path, index);
  assertCacheAsWritten(index, 'step 4');
  assertSameAnswers(path, index, runs, 4, 'zzearlybravo');
  assertListedFromIndex(path, index, 'a run deleted');

  // runs deleted until two chunks hold them all, then a VACUUM: the third chunk is gone
  const gone = runs.splice(2 * CACHE_CHUNK - 10);
  for (const r of gone) {
    db.prepare('DELETE FROM snapshots WHERE run_id = ?').run(r.id);
    db.prepare('DELETE FROM runs WHERE run_id = ?').run(r.id);
  }
  db.exec("DELETE FROM snapshots WHERE run_id LIKE '%-again-%'; DELETE FROM runs WHERE run_id LIKE '%-again-%'");
  const removed = sync(path, index);
  assert.ok(removed.runsRemoved >= gone.length);
  assert.deepEqual(cacheChunks(index), [0, 1]);
  assertCacheListsStore(path, index);
  assertCacheAsWritten(index, 'step 5');
  assertSameAnswers(path, index, runs, 5, 'zzearlybravo');
  db.exec('VACUUM');
  db.close();
  assertCacheListsStore(path, index);
  assertCacheAsWritten(index, 'step 6');
  assertSameAnswers(path, index, runs, 6, 'zzearlybravo');
});

test('twenty appended runs one after another (a tier merge among them): each time the cache rows are those written from every run row', () => {
  const { path, runs } = chunkedStore();
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  let merges = 0;
  for (let i = 0; i < 20; i++) {
    appendRun(path);
    const report = sync(path, index);
    if (report.merged || report.compacted) merges++;
    assertCacheAsWritten(index, `append ${i + 1}`);
  }
  assert.ok(merges > 0, 'a merge among the appends');
  assertCacheListsStore(path, index);
  assertSameAnswers(path, index, runs, 7, 'zzearlyalpha');
});

test("a run's marks or a cache chunk damaged in the index: caught by the checksums, rebuilt, the answer that of --no-index", async () => {
  const { path } = chunkedStore();
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  const args = (extra: string[]): string[] => [
    'search',
    'zzearlyalpha',
    'user',
    '--db',
    path,
    '--scope',
    'all',
    '--json',
    '-m',
    '20',
    ...extra,
  ];

  // a mark read without its row's blobs: its own checksum must catch it (a renamed run looks removed, its row never read whole)
  let idx = new Database(index);
  assert.equal(idx.prepare("UPDATE runs SET run_id = 'zz' || run_id WHERE run_key = 7").run().changes, 1);
  // nothing kept of what the content was made of: every run's marks are read (with it, those of the runs that changed only)
  idx.exec('DELETE FROM pages');
  idx.close();
  appendRun(path); // the marks are read when the store changed
  const wantAfter = await cli(args(['--no-index']));
  assert.notEqual(wantAfter.stdout, '');
  let r = await cli(args(['--index', index]));
  assert.equal(r.stdout, wantAfter.stdout);
  assert.match(r.stderr, /was damaged \(a runs row fails its checksum\); rebuilt it/);

  // a cache chunk gone
  idx = new Database(index);
  assert.equal(idx.prepare('DELETE FROM corpus_cache WHERE id = 1').run().changes, 1);
  idx.close();
  r = await cli(args(['--index', index]));
  assert.equal(r.stdout, wantAfter.stdout);
  assert.match(r.stderr, /was damaged \(corpus cache chunk 1 is missing\); rebuilt it/);
});
