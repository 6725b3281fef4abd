import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { ParallelOptions } from '../../src/parallel/threads.js';
import { openIndexDatabase } from '../../src/sidecar/file.js';
import { readIndexMeta } from '../../src/sidecar/meta.js';
import { IndexSync, type SyncReport } from '../../src/sidecar/sync.js';
import { EMPTY_DIGEST, type StoreContent } from '../../src/store/content.js';
import { openSqliteReader, type SqliteReader } from '../../src/store/sqlite/reader.js';
import type { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { threadedStore } from '../helpers/random-stores.js';
import { addRawSnapshot, tempDir } from '../helpers/stores.js';
import { FIXTURES } from '../helpers/cli.js';
import { rng } from '../../scripts/bench/synthetic-store.js';

/** The digests a build recorded: the content it answers for, and each run's count, last seq and digest. */
interface Recorded {
  content: string;
  runs: Array<{ run_id: string; snap_count: number; snap_max_seq: number; content: string }>;
}

/** Builds an index of `path` from nothing; what it recorded, and what the store's content read returned meanwhile. */
function build(path: string, options: ParallelOptions): { recorded: Recorded; report: SyncReport; reads: StoreContent[] } {
  const store = openSqliteReader(path);
  const reads: StoreContent[] = [];
  const content = store.content.bind(store);
  store.content = (...args) => {
    const c = content(...args);
    reads.push(c);
    return c;
  };
  const index = join(tempDir(), 'idx.db');
  writeFileSync(index, '', { mode: 0o600 });
  const { db, tables } = openIndexDatabase(index, store.identity);
  try {
    const report = new IndexSync(tables, store, options).sync();
    const recorded = {
      content: readIndexMeta(tables.readMeta()).content,
      runs: db.prepare('SELECT run_id, snap_count, snap_max_seq, content FROM runs ORDER BY run_id').all() as Recorded['runs'],
    };
    return { recorded, report, reads };
  } finally {
    db.close();
    store.close();
  }
}

/** What the store's content read (every row read and digested, store/sqlite/content.ts) makes of `path`. */
function contentRead(path: string): Recorded {
  const store: SqliteReader = openSqliteReader(path);
  try {
    const c = store.content(new Map(), 0);
    const runs = store
      .runs()
      .map((r) => {
        const d = c.runs.get(r.runId);
        return { run_id: r.runId, snap_count: d?.count ?? 0, snap_max_seq: d?.maxSeq ?? 0, content: d?.digest ?? EMPTY_DIGEST };
      })
      .sort((a, b) => (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0));
    return { content: c.digest, runs };
  } finally {
    store.close();
  }
}

/** Rows written straight into an existing test store (addRawSnapshot's writer, over its file). */
function append(path: string, write: (w: StepStoreWriter) => void): void {
  const db = new Database(path);
  try {
    write({ db, shape: 'newest' } as unknown as StepStoreWriter);
  } finally {
    db.close();
  }
}

/** A threaded store (damaged rows among them) with interrupted rows and odd cells added: a BLOB, bytes that are not UTF-8, a number, odd steps and times. */
function oddStore(seed: number): string {
  const { path } = threadedStore(seed);
  append(path, (w) => {
    const ids = (w.db.prepare('SELECT run_id FROM runs ORDER BY rowid').pluck().all() as string[]).slice(0, 6);
    const random = rng(seed);
    for (const id of ids) {
      addRawSnapshot(w, id, '[{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "cut short"}]}]', {
        state: 'interrupted',
      });
      if (random() < 0.5) addRawSnapshot(w, id, Buffer.from('[{"kind": "request", "parts": []}]'), { stepIndex: 3 });
    }
    const [a, b, c] = ids;
    addRawSnapshot(w, a!, 42, { stepIndex: 7 });
    // text whose bytes are not UTF-8 (SQLite hands it out with U+FFFD)
    const seq = addRawSnapshot(w, b!, 'x', { stepIndex: 8 });
    w.db
      .prepare(
        "UPDATE snapshots SET messages = CAST(X'5b7b226b696e64223a2022ff227d5d' AS TEXT), step_index = 'two', timestamp = 12 WHERE seq = ?",
      )
      .run(seq);
    addRawSnapshot(w, c!, '[]', { state: 'interrupted', stepIndex: -1 });
  });
  return path;
}

describe('index build: each run digested from the rows its replay reads', () => {
  test('a build on worker threads reads no snapshot row for the content, and records the digests the content read makes, bit for bit', () => {
    const stores = [
      threadedStore(3).path,
      oddStore(5),
      oddStore(6),
      // the bundled copies of the reference's stores: the repository stands alone
      join(FIXTURES, 'parity', 'media.db'),
      join(FIXTURES, 'parity', 'unicode.db'),
    ];
    for (const path of stores) {
      const want = contentRead(path);
      const rows = want.runs.reduce((n, r) => n + r.snap_count, 0);
      // workers, or one thread with a few runs: the replay digests
      for (const [options, read] of [
        [{ threads: 2, minSnapshots: 0 }, 0],
        [{ threads: 1 }, 0],
      ] as const) {
        const { recorded, report, reads } = build(path, options);
        const label = `${path}, ${options.threads} thread(s)`;
        assert.deepEqual(recorded, want, label);
        assert.equal(reads.length, 1, label);
        assert.equal(reads[0]!.rowsDigested, read, label);
        assert.equal(report.rowsDigested, rows, label);
      }
    }
  });

  test('one thread with more than a few runs: the content read digests every row, and the replay none', () => {
    // 80 runs (over REPLAY_DIGESTS_RUNS), light ones: no worker starts
    const { path } = threadedStore(4, 80);
    const want = contentRead(path);
    const rows = want.runs.reduce((n, r) => n + r.snap_count, 0);
    for (const threads of [1, 2]) {
      const { recorded, report, reads } = build(path, { threads });
      assert.deepEqual(recorded, want);
      assert.equal(reads.length, 1);
      assert.equal(reads[0]!.rowsDigested, rows, `${threads} thread(s): the content read digested every row`);
      assert.equal(report.rowsDigested, rows);
    }
  });

  test('rows the runs do not account for (an orphan run id, a run id that is not UTF-8): the content read of the store gives the digests, as before', () => {
    const orphan = threadedStore(8).path;
    append(orphan, (w) => addRawSnapshot(w, 'run-nobody-listed', '[{"kind": "request", "parts": []}]'));
    const notUtf8 = threadedStore(10).path;
    append(notUtf8, (w) => {
      // a run id with a byte that is not UTF-8, in its runs row and its snapshot rows
      const [id] = w.db.prepare('SELECT run_id FROM runs ORDER BY rowid').pluck().all() as string[];
      const raw = Buffer.concat([Buffer.from(id!), Buffer.from([0xff])]);
      w.db.prepare('UPDATE runs SET run_id = CAST(? AS TEXT) WHERE run_id = ?').run(raw, id);
      w.db.prepare('UPDATE snapshots SET run_id = CAST(? AS TEXT) WHERE run_id = ?').run(raw, id);
    });
    for (const path of [orphan, notUtf8]) {
      const want = contentRead(path);
      // on worker threads, or on this one (a few runs)
      for (const options of [{ threads: 2, minSnapshots: 0 }, { threads: 1 }]) {
        const { recorded, reads } = build(path, options);
        assert.deepEqual(recorded, want, path);
        // read up front (a run id with U+FFFD), or after the build found rows no run accounts for
        assert.ok(reads.at(-1)!.rowsDigested! > 0, path);
      }
    }
  });

  test('a layout whose run index groups run ids its rows tell apart (COLLATE NOCASE): the build notices, and records the content read', () => {
    const path = join(tempDir(), 'nocase.db');
    copyFileSync(threadedStore(9).path, path);
    const db = new Database(path);
    try {
      // the same table, its run_id compared without case: `run_id = ?` finds the rows of both spellings
      const sql = db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'snapshots'").pluck().get() as string;
      const indexes = db
        .prepare("SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'snapshots' AND sql IS NOT NULL")
        .pluck()
        .all() as string[];
      db.exec('ALTER TABLE snapshots RENAME TO old_snapshots');
      for (const name of db
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'old_snapshots' AND sql IS NOT NULL")
        .pluck()
        .all() as string[])
        db.exec(`DROP INDEX "${name}"`);
      db.exec(sql.replace(/run_id\s+TEXT/i, 'run_id TEXT COLLATE NOCASE'));
      db.exec('INSERT INTO snapshots SELECT * FROM old_snapshots; DROP TABLE old_snapshots');
      for (const i of indexes) db.exec(i);
      const [first] = db.prepare('SELECT run_id, conversation_id, started_at FROM runs ORDER BY rowid').raw().all() as string[][];
      const upper = first![0]!.toUpperCase();
      db.prepare("INSERT INTO runs (run_id, conversation_id, metadata, started_at) VALUES (?, ?, '{}', ?)").run(
        upper,
        first![1],
        first![2],
      );
      db.prepare('UPDATE snapshots SET run_id = ? WHERE seq = (SELECT MAX(seq) FROM snapshots WHERE run_id = ?)').run(upper, first![0]);
    } finally {
      db.close();
    }
    const want = contentRead(path);
    const { recorded, reads } = build(path, { threads: 2, minSnapshots: 0 });
    assert.deepEqual(recorded, want);
    // the replay's digests, then the content read's
    assert.deepEqual(
      reads.map((r) => r.rowsDigested! > 0),
      [false, true],
    );
  });

  test("the build records each run's snapshots by state and last step as countsByRun and lastSteps give them, counted from the rows it digests: no pass of its own", () => {
    const path = oddStore(11);
    append(path, (w) => {
      const ids = w.db.prepare('SELECT run_id FROM runs ORDER BY rowid').pluck().all() as string[];
      // a run whose last step is a number that is not an integer, a state that is a BLOB, another state
      addRawSnapshot(w, ids[4]!, '[]', { stepIndex: 1 });
      w.db.prepare('UPDATE snapshots SET step_index = 99.5 WHERE seq = (SELECT MAX(seq) FROM snapshots WHERE run_id = ?)').run(ids[4]);
      w.db
        .prepare("UPDATE snapshots SET state = CAST('complete' AS BLOB) WHERE seq = (SELECT MIN(seq) FROM snapshots WHERE run_id = ?)")
        .run(ids[2]);
      w.db.prepare("UPDATE snapshots SET state = 'paused' WHERE seq = (SELECT MIN(seq) FROM snapshots WHERE run_id = ?)").run(ids[3]);
      // a run without snapshots
      w.db
        .prepare(
          "INSERT INTO runs (run_id, conversation_id, metadata, started_at) VALUES ('run-no-rows', NULL, '{}', '2027-01-01T00:00:00')",
        )
        .run();
    });
    const reader = openSqliteReader(path);
    const counts = reader.countsByRun();
    const steps = reader.lastSteps();
    const want = reader
      .runs()
      .map((r) => ({
        run_id: r.runId,
        complete_snaps: counts.get(r.runId)?.complete ?? 0,
        interrupted_snaps: counts.get(r.runId)?.interrupted ?? 0,
        last_step: steps.get(r.runId) ?? null,
      }))
      .sort((a, b) => (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0));
    reader.close();
    // the odd cells are there: a step that is not an integer, a text step, a run without rows
    assert.ok(want.some((r) => r.run_id === 'run-no-rows' && r.complete_snaps === 0 && r.last_step === null));
    assert.ok(want.filter((r) => r.last_step === null).length >= 3);
    for (const options of [{ threads: 2, minSnapshots: 0 }, { threads: 1 }]) {
      const store = openSqliteReader(path);
      const asked: string[] = [];
      for (const name of ['countsByRun', 'lastSteps', 'runSnapshotStats'] as const) {
        const own = (store[name] as (...a: unknown[]) => unknown).bind(store);
        (store as unknown as Record<string, unknown>)[name] = (...a: unknown[]) => {
          asked.push(name);
          return own(...a);
        };
      }
      const index = join(tempDir(), 'idx.db');
      writeFileSync(index, '', { mode: 0o600 });
      const { db, tables } = openIndexDatabase(index, store.identity);
      try {
        new IndexSync(tables, store, options).sync();
        const got = db.prepare('SELECT run_id, complete_snaps, interrupted_snaps, last_step FROM runs ORDER BY run_id').all();
        assert.deepEqual(got, want, `${options.threads} thread(s)`);
        assert.deepEqual(asked, [], `${options.threads} thread(s)`);
      } finally {
        db.close();
        store.close();
      }
    }
  });
});
