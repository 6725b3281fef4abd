/**
 * The index sync writes from the state it reads under the write lock (issue 19, point 5). A sync reads
 * the index, then the store (slow, unlocked), then takes the lock: meanwhile other processes may commit,
 * and one whose view of the store is older takes the index back to an earlier content digest. Here that
 * interleaving is made to happen exactly: while one sync reads the store, two others move the index to
 * another state and back. The first sync must then build on what is in the index, not on what it read
 * before (segment numbers, run keys and the compaction mark of another commit).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { openIndexDatabase, type OpenedIndex } from '../../src/sidecar/file.js';
import { IndexedCorpusSource } from '../../src/sidecar/indexed-source.js';
import { readIndexMeta } from '../../src/sidecar/meta.js';
import { IndexSync } from '../../src/sidecar/sync.js';
import { searchJson } from '../../src/output/json.js';
import { search } from '../../src/search/search.js';
import type { StoreReader } from '../../src/store/reader.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { randomOptions, threadedStore } from '../helpers/random-stores.js';
import { searchReader, tempDir } from '../helpers/stores.js';

test('a sync that read the index before another process moved it away and back builds on what the index holds now', () => {
  const { path: newer, runs } = threadedStore(5);
  // the store a moment earlier: without its last run
  const older = join(tempDir(), 'sessions.db');
  copyFileSync(newer, older);
  const last = runs.at(-1)!.id;
  const db = new Database(older);
  db.prepare('DELETE FROM snapshots WHERE run_id = ?').run(last);
  db.prepare('DELETE FROM runs WHERE run_id = ?').run(last);
  db.close();

  const olderStore = openSqliteReader(older);
  const olderStore2 = openSqliteReader(older);
  const newerStore = openSqliteReader(newer);
  const newerStore2 = openSqliteReader(newer);
  const indexPath = join(tempDir(), 'idx.db');
  writeFileSync(indexPath, '', { mode: 0o600 });
  // one index, one connection per "process"; all of them index the same store (seen at two moments)
  const open = (): OpenedIndex => openIndexDatabase(indexPath, olderStore.identity);
  const [first, slow, other, back] = [open(), open(), open(), open()];
  try {
    new IndexSync(first.tables, newerStore).sync();
    // while the slow sync reads the store, the index goes to the older state and back to the newer one
    let moved = false;
    const slowStore: StoreReader = Object.assign(Object.create(olderStore) as StoreReader, {
      content(cuts: Parameters<StoreReader['content']>[0], mediaCut: number) {
        if (!moved) {
          moved = true;
          new IndexSync(other.tables, olderStore2).sync();
          new IndexSync(back.tables, newerStore2).sync();
        }
        return olderStore.content(cuts, mediaCut);
      },
    });
    const report = new IndexSync(slow.tables, slowStore).sync();
    assert.ok(moved);
    assert.equal(report.upToDate, false);

    // the index now answers for the older store, exactly as a replay of it does
    const t = slow.tables;
    t.begin();
    const source = new IndexedCorpusSource(t, readIndexMeta(t.readMeta()));
    const random = rng(5);
    for (let q = 0; q < 12; q++) {
      const o = randomOptions(random, runs);
      assert.deepEqual(searchJson(search(source, o)), searchJson(searchReader(olderStore, o, false)), JSON.stringify(o));
    }
    t.commit();
  } finally {
    for (const i of [first, slow, other, back]) i.db.close();
    for (const s of [olderStore, olderStore2, newerStore, newerStore2]) s.close();
  }
});
