import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { closeIndexDatabase, openIndexDatabase } from '../../src/sidecar/file.js';
import { INDEX_FORMAT } from '../../src/sidecar/schema.js';
import { tempDir } from '../helpers/stores.js';

describe('sidecar/file: the index file', () => {
  test('a new index is laid out in 16 KiB pages; an index with pages keeps its own when laid out again', () => {
    const path = join(tempDir(), 'idx.db');
    writeFileSync(path, '', { mode: 0o600 });
    const fresh = openIndexDatabase(path, '/store/a.db');
    assert.equal(fresh.fresh, true);
    assert.equal(fresh.db.pragma('page_size', { simple: true }), 16384);
    assert.equal(fresh.db.pragma('journal_mode', { simple: true }), 'wal');
    closeIndexDatabase(fresh.db, path);

    // an index of 4 KiB pages (as earlier versions made them), laid out again for another store
    const older = join(tempDir(), 'older.db');
    writeFileSync(older, '', { mode: 0o600 });
    const made = new Database(older);
    made.pragma('page_size = 4096');
    made.exec(
      "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL, sum INTEGER NOT NULL); INSERT INTO meta VALUES ('format', 'convsearch-index-7', 0)",
    );
    made.close();
    const again = openIndexDatabase(older, '/store/b.db');
    assert.equal(again.fresh, true);
    assert.equal(again.db.pragma('page_size', { simple: true }), 4096);
    assert.equal(again.tables.readMeta().get('format'), INDEX_FORMAT);
    closeIndexDatabase(again.db, older);
  });
});
