/**
 * Issue 21: while the store's runs table is byte for byte the one the index recorded with its page map
 * (an agent's step adds snapshots only), an update does not read the store's run list; any change to the
 * runs table (a new run, a record changed through SQLite, or its bytes patched with the times put back)
 * has the list read again. Answers and listings stay those of `--no-index`; what is read is counted,
 * never timed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { appendRun, appendSnapshots } from '../../scripts/bench/mutations.js';
import { openIndexedSource } from '../../src/sidecar/with-index.js';
import type { SyncReport } from '../../src/sidecar/sync.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { assertSameAnswers, patchFile, sync } from '../helpers/index-answers.js';
import { threadedStore } from '../helpers/random-stores.js';
import { tempDir, writeStore } from '../helpers/stores.js';

/** An update of `index`, counting the reads of the store's run list. */
function syncCounting(path: string, index: string): { report: SyncReport; listed: number } {
  const store = openSqliteReader(path);
  let listed = 0;
  const runs = store.runs.bind(store);
  store.runs = () => {
    listed++;
    return runs();
  };
  try {
    const opened = openIndexedSource(store, { path: index });
    opened.db.close();
    return { report: opened.report, listed };
  } finally {
    store.close();
  }
}

test('steps appended to runs: the run list is not read, the runs are resumed; answers and listings equal --no-index', () => {
  for (const seed of [81, 82]) {
    const { path, runs } = threadedStore(seed, 20);
    const index = join(tempDir(), 'idx.db');
    sync(path, index);
    for (let round = 0; round < 3; round++) {
      appendSnapshots(path, round + 1);
      const { report, listed } = syncCounting(path, index);
      assert.equal(report.upToDate, false, `seed ${seed}, round ${round}: the index was updated`);
      assert.ok(report.runsResumed > 0, `seed ${seed}, round ${round}: runs resumed`);
      assert.equal(report.runsReplayed, 0);
      assert.equal(listed, 0, `seed ${seed}, round ${round}: the run list was not read`);
      assertSameAnswers(path, index, runs, seed, 'quarzite', 'appended');
    }
  }
});

test('a new run, or a run record changed through SQLite, has the run list read; answers and listings equal --no-index', () => {
  const { path, runs } = threadedStore(83, 20);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  appendRun(path);
  const added = syncCounting(path, index);
  assert.ok(added.listed > 0, 'a new run: the list was read');
  assert.equal(added.report.runsReplayed, 1);
  const db = new Database(path, { readonly: true });
  const all = db.prepare('SELECT run_id AS id, conversation_id AS conv FROM runs ORDER BY started_at, rowid').all() as typeof runs;
  db.close();
  assertSameAnswers(path, index, all, 83, 'quarzite');
  // an early run's agent named, and a step appended elsewhere: the list is read again, the record placed anew
  writeStore(path, "UPDATE runs SET agent_name = 'renamed-agent' WHERE run_id = ?", runs[2]!.id);
  appendSnapshots(path, 1);
  const renamed = syncCounting(path, index);
  assert.ok(renamed.listed > 0, 'a changed record: the list was read');
  assertSameAnswers(path, index, all, 83, 'quarzite');
});

test('a run record patched in the file, times put back: the run list is read again; answers and listings equal --no-index', () => {
  const { path, runs } = threadedStore(84, 20);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  const db = new Database(path, { readonly: true });
  // a run with a conversation and no parent or agent: its record's bytes hold its id, then its conversation
  const victim = db
    .prepare(
      "SELECT run_id, conversation_id FROM runs WHERE conversation_id LIKE 'conv-_' AND parent_run_id IS NULL AND agent_name IS NULL LIMIT 1",
    )
    .get() as { run_id: string; conversation_id: string };
  db.close();
  const other = victim.conversation_id === 'conv-0' ? 'conv-1' : 'conv-0';
  patchFile(path, `${victim.run_id}${victim.conversation_id}`, `${victim.run_id}${other}`);
  const patched = syncCounting(path, index);
  assert.equal(patched.report.upToDate, false, 'the patched record was noticed');
  assert.ok(patched.listed > 0, 'the list was read');
  const moved = runs.map((r) => (r.id === victim.run_id ? { id: r.id, conv: other } : r));
  assertSameAnswers(path, index, moved, 84, 'quarzite');
});
