/**
 * Issue 21: while the store's runs table is byte for byte the one the index recorded with its page map
 * (an agent's step adds snapshots only), an update does not read the store's run list; a new run has the
 * runs table read from the last block of 256 rows its unchanged leaves cover, never whole; any other
 * change to the runs table (a record changed through SQLite, or its bytes patched with the times put
 * back, a run gone, a run out of order) has the list read again. Answers and listings stay those of
 * `--no-index`; what is read is counted, never timed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { appendSnapshots, continueConversation, liveWriter } from '../../scripts/bench/mutations.js';
import { openIndexedSource } from '../../src/sidecar/with-index.js';
import type { SyncReport } from '../../src/sidecar/sync.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { rowSum } from '../../src/sidecar/checksum.js';
import { IndexDamagedError } from '../../src/sidecar/errors.js';
import { SqliteIndexDb } from '../../src/sidecar/index-db.js';
import { INDEX_DDL } from '../../src/sidecar/schema.js';
import { IndexTables } from '../../src/sidecar/tables.js';
import { assertSameAnswers, patchFile, sync } from '../helpers/index-answers.js';
import { threadedStore } from '../helpers/random-stores.js';
import { tempDir, writeStore } from '../helpers/stores.js';
import { rng } from '../../scripts/bench/synthetic-store.js';

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

test('a run record changed through SQLite has the run list read; answers and listings equal --no-index', () => {
  const { path, runs } = threadedStore(83, 20);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  // an early run's agent named, and a step appended elsewhere: the list is read again, the record placed anew
  writeStore(path, "UPDATE runs SET agent_name = 'renamed-agent' WHERE run_id = ?", runs[2]!.id);
  appendSnapshots(path, 1);
  const renamed = syncCounting(path, index);
  assert.ok(renamed.listed > 0, 'a changed record: the list was read');
  assertSameAnswers(path, index, runs, 83, 'quarzite');
});

test('next to a live writer, a new run in its log has the runs table read from its last kept block on; an early record changed there has the list read; answers and listings equal --no-index', () => {
  const path = manyRuns(86);
  const live = liveWriter(path);
  try {
    const index = join(tempDir(), 'idx.db');
    sync(path, index);
    continueConversation(path);
    const added = syncCounting(path, index);
    assert.ok(existsSync(`${path}-wal`) && statSync(`${path}-wal`).size > 0, 'the commit is in the log');
    assert.equal(added.listed, 0, 'the list was not read');
    assert.equal(added.report.runsReplayed, 1);
    assert.ok(
      added.report.runRowsRead > 0 && added.report.runRowsRead < runsOf(path).length - 256,
      `${added.report.runRowsRead} runs rows read`,
    );
    assertSameAnswers(path, index, runsOf(path), 86, 'quarzite', 'kalo');
    live.prepare("UPDATE runs SET agent_name = 'renamed-agent' WHERE run_id = 'bare-3'").run();
    continueConversation(path);
    const renamed = syncCounting(path, index);
    assert.ok(renamed.listed > 0, 'an early record changed: the list was read');
    assertSameAnswers(path, index, runsOf(path), 86, 'quarzite', 'kalo');
  } finally {
    live.close();
  }
});

/** `path`'s runs in corpus order, as the answers' helper takes them. */
function runsOf(path: string): Array<{ id: string; conv: string | null }> {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT run_id AS id, conversation_id AS conv FROM runs ORDER BY started_at, rowid').all() as Array<{
      id: string;
      conv: string | null;
    }>;
  } finally {
    db.close();
  }
}

/** A store of 20 random runs and 600 more without snapshots (only the runs table matters here), after the others. */
function manyRuns(seed: number): string {
  const { path } = threadedStore(seed, 20);
  const db = new Database(path);
  const add = db.prepare(
    "INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) VALUES (?, ?, NULL, NULL, '{}', ?)",
  );
  db.transaction(() => {
    for (let i = 0; i < 600; i++)
      add.run(
        `bare-${i}`,
        i % 3 === 0 ? null : `conv-${i % 4}`,
        `2026-06-01T00:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`,
      );
  })();
  db.close();
  return path;
}

test('a new run: the runs table is read from its last block the index kept on, never whole; a change among the rows it reads, or out of order, has the list read; answers and listings equal --no-index', () => {
  const path = manyRuns(85);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  const total = (): number => runsOf(path).length;
  // two new runs one after the other: each reads the rows from the last full block of 256 its leaves hold on
  for (let round = 0; round < 2; round++) {
    continueConversation(path);
    const added = syncCounting(path, index);
    assert.equal(added.listed, 0, `round ${round}: the list was not read`);
    assert.equal(added.report.runsReplayed, 1, `round ${round}: the new run replayed`);
    assert.ok(
      added.report.runRowsRead > 0 && added.report.runRowsRead < total() - 256,
      `round ${round}: ${added.report.runRowsRead} of ${total()} runs rows read`,
    );
  }
  assertSameAnswers(path, index, runsOf(path), 85, 'quarzite', 'kalo');
  // the latest run's record changed (a row the tail reads again, not one its kept blocks cover), and a
  // new run: the first runs are not the list the index placed, so the list is read
  const latest = runsOf(path).at(-1)!.id;
  writeStore(path, "UPDATE runs SET agent_name = 'renamed-agent' WHERE run_id = ?", latest);
  continueConversation(path);
  const renamed = syncCounting(path, index);
  assert.ok(renamed.listed > 0, 'a changed record among the rows read again: the list was read');
  assertSameAnswers(path, index, runsOf(path), 85, 'quarzite', 'kalo');
  // a late run deleted, and a new run
  writeStore(path, 'DELETE FROM runs WHERE run_id = ?', 'bare-598');
  continueConversation(path);
  const deleted = syncCounting(path, index);
  assert.ok(deleted.listed > 0, 'a run gone: the list was read');
  assert.equal(deleted.report.runsRemoved, 1);
  assertSameAnswers(path, index, runsOf(path), 85, 'quarzite', 'kalo');
  // a new run that starts before the latest ones: its place is not at the end, the list is read
  writeStore(
    path,
    "INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) VALUES ('early-new', 'conv-1', NULL, NULL, '{}', '2026-06-01T00:05:30.5Z')",
  );
  const early = syncCounting(path, index);
  assert.ok(early.listed > 0, 'a run out of order: the list was read');
  assertSameAnswers(path, index, runsOf(path), 85, 'quarzite', 'kalo');
  // every page of the file rewritten (VACUUM), and a new run: the rows the pages no longer vouch for are read, the answers stay exact
  writeStore(path, 'VACUUM');
  continueConversation(path);
  const vacuumed = syncCounting(path, index);
  assert.equal(vacuumed.report.runsReplayed, 1);
  assertSameAnswers(path, index, runsOf(path), 85, 'quarzite', 'kalo');
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

test('the runs table blocks and the walk leaves are kept with the page map: read back, absent for a head without them, damage when malformed', () => {
  const db = new Database(':memory:');
  db.exec(INDEX_DDL);
  const t = new IndexTables(new SqliteIndexDb(db));
  const digests = Uint32Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
  const blocks = Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 37) & 0xff));
  const runsTable = { pages: 'fingerprint', digest: 'digest', blocks };
  t.putPageMap('content-1', 7, digests, null, null, runsTable);
  const walk = {
    root: 2,
    pageSize: 4096,
    usable: 4096,
    pages: Uint32Array.from([2, 5, 6, 9]),
    walked: 'w',
    leaves: Uint32Array.from([5, 6]),
  };
  t.putWalks('content-1', { media: null, runs: walk });
  const read = t.pageMap()!;
  assert.deepEqual(read.runsTable, runsTable);
  assert.deepEqual(read.walks?.runs, walk);
  t.putPageMap('content-2', 7, digests, null, null, { pages: 'fingerprint', digest: 'digest' });
  assert.equal(t.pageMap()!.runsTable?.blocks, undefined, 'a table kept without blocks has none');
  const empty = Buffer.alloc(0);
  for (const bad of [Buffer.alloc(10).toString('base64'), 'not base64!', 12]) {
    const head = JSON.stringify({ content: 'content-3', seed: 7, runs: { pages: 'fingerprint', digest: 'digest', blocks: bad } });
    db.prepare('UPDATE pages SET head = ?, digests = ?, sum = ? WHERE id = 1').run(head, empty, rowSum([1, head, empty]));
    assert.throws(() => t.pageMap(), IndexDamagedError, `blocks ${JSON.stringify(bad)}`);
  }
  db.close();
});

test('random changes to a runs table of 620 runs (new runs, at the end and before it, records edited in any block, deletions, rowids moved, a VACUUM; by one writer a time, or a live writer checkpointing now and then), an update after each: answers and listings equal --no-index (property)', () => {
  let tails = 0;
  for (const [seed, live] of [
    [87, false],
    [88, true],
  ] as const) {
    const path = manyRuns(seed);
    const index = join(tempDir(), 'idx.db');
    sync(path, index);
    const random = rng(seed * 17 + 3);
    const pick = <T>(a: readonly T[]): T => a[Math.floor(random() * a.length)]!;
    const writer = live ? liveWriter(path) : null;
    const write = (sql: string, ...params: unknown[]): void => {
      if (writer === null) writeStore(path, sql, ...params);
      else writer.prepare(sql).run(...params);
    };
    try {
      for (let round = 0; round < 10; round++) {
        const ids = runsOf(path).map((r) => r.id);
        const id = pick(ids);
        const kind = pick(['new run', 'new run', 'new run', 'bare run', 'early run', 'edit', 'edit latest', 'delete', 'rowid', 'vacuum']);
        if (kind === 'new run') continueConversation(path);
        else if (kind === 'bare run' || kind === 'early run')
          write(
            "INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) VALUES (?, ?, NULL, NULL, '{}', ?)",
            `added-${round}`,
            pick([null, 'conv-1', 'conv-2']),
            kind === 'bare run' ? `2099-01-01T00:00:${String(round).padStart(2, '0')}Z` : `2026-06-01T00:0${round % 10}:30.5Z`,
          );
        else if (kind === 'edit') write('UPDATE runs SET agent_name = ? WHERE run_id = ?', `agent-${round}`, id);
        else if (kind === 'edit latest') write('UPDATE runs SET agent_name = ? WHERE run_id = ?', `agent-${round}`, ids.at(-1));
        else if (kind === 'delete') write('DELETE FROM runs WHERE run_id = ?', id);
        else if (kind === 'rowid') write('UPDATE runs SET rowid = (SELECT max(rowid) FROM runs) + 1 WHERE run_id = ?', id);
        else write('VACUUM');
        if (writer !== null && random() < 0.3) writer.pragma(`wal_checkpoint(${pick(['PASSIVE', 'TRUNCATE', 'RESTART'])})`);
        const { report, listed } = syncCounting(path, index);
        if (listed === 0 && report.runRowsRead > 0) tails++;
        assertSameAnswers(path, index, runsOf(path), seed * 100 + round, 'quarzite', 'kalo');
      }
    } finally {
      writer?.close();
    }
  }
  // the draw above takes the tail read in some rounds (a new run after runs the index placed, none changed)
  assert.ok(tails >= 3, `${tails} updates read the runs table from a kept block on`);
});
