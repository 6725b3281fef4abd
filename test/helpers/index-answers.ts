/** Index and store helpers for the tests that change a SQLite store and compare answers with `--no-index`. */
import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync, statSync, utimesSync, writeSync } from 'node:fs';
import Database from 'better-sqlite3';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { openSession } from '../../src/api/session.js';
import { conversationsJson, runsJson } from '../../src/output/listing-json.js';
import { searchJson } from '../../src/output/json.js';
import { SqliteIndexDb } from '../../src/sidecar/index-db.js';
import type { KeyFilter } from '../../src/sidecar/key-filter.js';
import type { SyncReport } from '../../src/sidecar/sync.js';
import { IndexTables } from '../../src/sidecar/tables.js';
import { type IndexChoice, openIndexedSource } from '../../src/sidecar/with-index.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { randomOptions } from './random-stores.js';
import { searchReader } from './stores.js';

/** Brings the index up to date with the store as it is now (`verify`: as `--verify` does); what the sync did. */
export function sync(path: string, index: string, verify = false): SyncReport {
  const store = openSqliteReader(path);
  try {
    const opened = openIndexedSource(store, { path: index, verify });
    opened.db.close();
    return opened.report;
  } finally {
    store.close();
  }
}

/** 25 random searches, and one for each of `words`: through the index exactly as without it. */
export function assertSameAnswers(
  path: string,
  index: string,
  runs: Array<{ id: string; conv: string | null }>,
  seed: number,
  ...words: string[]
): void {
  const random = rng(seed);
  const all = Array.from({ length: 25 }, () => randomOptions(random, runs));
  for (const query of words)
    all.push({ ...randomOptions(random, runs), query, scope: 'all', conversationId: null, runId: null, maxMatches: 5 });
  for (const options of all) {
    const store = openSqliteReader(path);
    try {
      const indexed = JSON.stringify(searchJson(searchReader(store, options, { path: index })));
      const replayed = JSON.stringify(searchJson(searchReader(store, options, false)));
      assert.equal(indexed, replayed, `query ${JSON.stringify(options.query)}`);
    } finally {
      store.close();
    }
  }
  // the listings too: through the index, they list the index's own runs, not the store's runs table
  const listings = (index: IndexChoice): string => {
    const session = openSession(path, { index });
    try {
      const runs = session.listRuns();
      const conversations = session.listConversations();
      return JSON.stringify([runsJson(runs.runs, runs.warnings), conversationsJson(conversations.conversations, conversations.warnings)]);
    } finally {
      session.close();
    }
  };
  assert.equal(listings({ path: index }), listings(false), 'runs and conversations');
}

/** Overwrites the first occurrence of `from` in the file with `to` (same length), bypassing SQLite, and puts the times back. */
export function patchFile(path: string, from: string, to: string): void {
  assert.equal(Buffer.byteLength(from), Buffer.byteLength(to));
  const before = statSync(path);
  const at = readFileSync(path).indexOf(from);
  assert.ok(at >= 0, `${from} is in the file`);
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, Buffer.from(to), 0, Buffer.byteLength(to), at);
  } finally {
    closeSync(fd);
  }
  utimesSync(path, before.atime, before.mtime);
}

/** The key filter the index keeps holds every key of every run it holds (it may hold more). */
export function assertFilterHoldsEveryKey(index: string, label: string): KeyFilter {
  const db = new Database(index, { readonly: true });
  try {
    const f = new IndexTables(new SqliteIndexDb(db)).keyFilter();
    assert.ok(f !== null, `${label}: the index keeps a key filter`);
    assert.ok(!f.full, `${label}: the filter is not full`);
    let keys = 0;
    for (const { run_id, keys: blob } of db.prepare('SELECT run_id, keys FROM runs').all() as Array<{ run_id: string; keys: Buffer }>) {
      for (let i = 0; i < blob.length; i += 20, keys++)
        assert.ok(f.mayHold(blob, i), `${label}: key ${i / 20} of ${run_id} is in the filter`);
    }
    assert.ok(keys > 0);
    return f;
  } finally {
    db.close();
  }
}
