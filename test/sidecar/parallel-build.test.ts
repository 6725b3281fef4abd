import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { rng } from '../../scripts/bench/synthetic-store.js';
import type { ParallelOptions } from '../../src/parallel/threads.js';
import { IndexedCorpusSource } from '../../src/sidecar/indexed-source.js';
import { openIndexDatabase } from '../../src/sidecar/file.js';
import { decodePostings } from '../../src/sidecar/postings.js';
import { readIndexMeta } from '../../src/sidecar/meta.js';
import { IndexSync } from '../../src/sidecar/sync.js';
import { searchJson } from '../../src/output/json.js';
import { toolText } from '../../src/output/tool-text.js';
import { search } from '../../src/search/search.js';
import { openSqliteReader, type SqliteReader } from '../../src/store/sqlite/reader.js';
import { randomOptions, threadedStore } from '../helpers/random-stores.js';
import { searchReader, tempDir } from '../helpers/stores.js';

/** Everything an index holds about the store, postings decoded (so the comparison ignores blob layout only). */
function indexContent(db: BetterSqlite3.Database): unknown {
  const postings = new Map<string, Array<[number, number, number]>>();
  for (const row of db.prepare('SELECT term, data FROM postings ORDER BY term, seg').iterate() as IterableIterator<{
    term: string;
    data: Buffer;
  }>) {
    const list = postings.get(row.term) ?? postings.set(row.term, []).get(row.term)!;
    decodePostings(row.data, (runKey, pos, tf) => list.push([runKey, pos, tf]));
  }
  return {
    runs: db.prepare('SELECT * FROM runs ORDER BY run_key').all(),
    messages: db.prepare('SELECT * FROM messages ORDER BY run_key, pos').all(),
    cache: db.prepare('SELECT * FROM corpus_cache').all(),
    postings: [...postings].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  };
}

function build(
  store: SqliteReader,
  options: ParallelOptions,
): { db: BetterSqlite3.Database; source: IndexedCorpusSource; replayed: number } {
  const path = join(tempDir(), 'idx.db');
  writeFileSync(path, '', { mode: 0o600 });
  const { db, tables } = openIndexDatabase(path, store.identity);
  const report = new IndexSync(tables, store, options).sync();
  return { db, source: new IndexedCorpusSource(tables, readIndexMeta(tables.readMeta())), replayed: report.runsReplayed };
}

describe('index build on several threads', () => {
  test('builds the same index as one thread, and searches through it give the replay answers (property)', () => {
    for (let seed = 1; seed <= 4; seed++) {
      const { path, runs } = threadedStore(seed);
      const store = openSqliteReader(path);
      try {
        const serial = build(store, { threads: 1 });
        const want = indexContent(serial.db);
        for (const threads of [2, 3]) {
          const parallel = build(store, { threads, minSnapshots: 0 });
          try {
            assert.equal(parallel.replayed, runs.length);
            assert.deepEqual(indexContent(parallel.db), want, `seed ${seed}, ${threads} threads`);
            const random = rng(seed);
            for (let q = 0; q < 6; q++) {
              const o = randomOptions(random, runs);
              const indexed = search(parallel.source, o);
              const replayed = searchReader(store, o, false);
              assert.equal(toolText(indexed), toolText(replayed), JSON.stringify(o));
              assert.deepEqual(searchJson(indexed), searchJson(replayed), JSON.stringify(o));
            }
          } finally {
            parallel.db.close();
          }
        }
        serial.db.close();
      } finally {
        store.close();
      }
    }
  });

  test('a worker posting its runs one at a time, or cut by their text, builds the same index as one thread', () => {
    for (const seed of [2, 3]) {
      const { path } = threadedStore(seed);
      const store = openSqliteReader(path);
      try {
        const serial = build(store, { threads: 1 });
        const want = indexContent(serial.db);
        serial.db.close();
        // 1: every run is a batch of its own; 2,000: a batch ends at its first run past that much text
        for (const batchChars of [1, 2_000]) {
          const parallel = build(store, { threads: 2, minSnapshots: 0, batchChars });
          try {
            assert.deepEqual(indexContent(parallel.db), want, `seed ${seed}, batches cut at ${batchChars} characters`);
          } finally {
            parallel.db.close();
          }
        }
      } finally {
        store.close();
      }
    }
  });

  test('runs a worker cannot deliver are replayed by the writer: same index', () => {
    const { path } = threadedStore(7);
    const store = openSqliteReader(path);
    try {
      const serial = build(store, { threads: 1 });
      // its workers are told to open a file that is not there
      const missing = { ...store.share()!, location: `immutable file:${join(tempDir(), 'missing.db')}?mode=ro` };
      const broken: SqliteReader = Object.assign(Object.create(store) as SqliteReader, { share: () => missing });
      const parallel = build(broken, { threads: 3, minSnapshots: 0 });
      assert.deepEqual(indexContent(parallel.db), indexContent(serial.db));
      serial.db.close();
      parallel.db.close();
    } finally {
      store.close();
    }
  });
  test("a build of many light runs (the writer replays them itself) counts its runs' snapshots from the rows its content read digested: no scan of its own", () => {
    const { path, runs } = threadedStore(5, 80);
    const store = openSqliteReader(path);
    try {
      const serial = build(store, { threads: 1 });
      const want = indexContent(serial.db);
      serial.db.close();
      // neither weighing the runs for worker threads nor the snapshot stats scan the table for them
      const counts = store.countsByRun.bind(store);
      let scans = 0;
      store.countsByRun = () => {
        scans++;
        return counts();
      };
      const parallel = build(store, { threads: 2 });
      try {
        assert.equal(parallel.replayed, runs.length);
        assert.equal(scans, 0);
        assert.deepEqual(indexContent(parallel.db), want);
      } finally {
        parallel.db.close();
      }
    } finally {
      store.close();
    }
  });
});
