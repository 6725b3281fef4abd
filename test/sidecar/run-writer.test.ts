import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openIndexDatabase } from '../../src/sidecar/file.js';
import type { IndexDb, IndexStatement } from '../../src/sidecar/index-db.js';
import { IndexTables, ROWS_A_STATEMENT } from '../../src/sidecar/tables.js';
import { readIndexMeta } from '../../src/sidecar/meta.js';
import { IndexSync } from '../../src/sidecar/sync.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { addRawSnapshot, addRun, assistantMsg, buildStore, dumps, tempDir, userMsg } from '../helpers/stores.js';

/** `db` with every statement's runs counted by its SQL. */
function counted(db: IndexDb): { db: IndexDb; runs: Map<string, number> } {
  const runs = new Map<string, number>();
  const wrapped = Object.create(db) as IndexDb;
  wrapped.prepare = (sql: string): IndexStatement => {
    const s = db.prepare(sql);
    return {
      run: (...args) => {
        runs.set(sql, (runs.get(sql) ?? 0) + 1);
        s.run(...args);
      },
      get: (...args) => s.get(...args),
      all: (...args) => s.all(...args),
      iterate: (...args) => s.iterate(...args),
    };
  };
  return { db: wrapped, runs };
}

const VALUES_ROWS = (sql: string): number => sql.split('), (').length;

describe('sidecar/run-writer: rows of a build', () => {
  test('postings and messages go in ROWS_A_STATEMENT rows a statement, in order, a huge message (fields in pieces) in its place', () => {
    // runs of 50 small messages, and one whose third message is too long for one piece of fields JSON
    const path = buildStore((w) => {
      for (let r = 0; r < 6; r++) {
        addRun(w, `run-${r}`, `conv-${r % 2}`, r * 100);
        const history = [];
        for (let k = 0; k < 50; k++)
          history.push(
            k % 2 ? assistantMsg(`reply ${r} ${k} word${k * 7}`, r * 100 + k) : userMsg(`ask ${r} ${k} term${k * 3}`, r * 100 + k),
          );
        addRawSnapshot(w, `run-${r}`, dumps(history));
      }
      addRun(w, 'run-huge', 'conv-huge', 1000);
      const history = [
        userMsg('alpha one', 1001),
        assistantMsg('beta two', 1002),
        userMsg(`gamma ${'lorem ipsum '.repeat(100_000)}`, 1003),
      ];
      for (let k = 0; k < 40; k++) history.push(k % 2 ? assistantMsg(`reply ${k}`, 1004 + k) : userMsg(`ask ${k}`, 1004 + k));
      addRawSnapshot(w, 'run-huge', dumps(history));
    });
    const store = openSqliteReader(path);
    const index = join(tempDir(), 'idx.db');
    writeFileSync(index, '', { mode: 0o600 });
    const opened = openIndexDatabase(index, store.identity);
    try {
      const { db, runs } = counted(opened.tables.db);
      const tables = new IndexTables(db);
      new IndexSync(tables, store, { threads: 1 }).sync();
      const raw = opened.db;
      const messages = Number((raw.prepare('SELECT count(*) AS n FROM messages').get() as { n: number }).n);
      const postings = Number((raw.prepare('SELECT count(*) AS n FROM postings').get() as { n: number }).n);
      const statementRows = (table: string): { many: number; one: number } => {
        let many = 0;
        let one = 0;
        for (const [sql, n] of runs) {
          if (!/^INSERT (OR FAIL )?INTO /.test(sql) || !sql.includes(` INTO ${table} `)) continue;
          if (VALUES_ROWS(sql) === ROWS_A_STATEMENT) many += n;
          else one += n;
        }
        return { many, one };
      };
      const m = statementRows('messages');
      const p = statementRows('postings');
      assert.ok(m.many > 0 && p.many > 0, JSON.stringify({ m, p }));
      assert.equal(m.many * ROWS_A_STATEMENT + m.one, messages);
      assert.equal(p.many * ROWS_A_STATEMENT + p.one, postings);
      // fewer than a statement's worth one by one per run (or per segment), plus the huge message
      const runCount = readIndexMeta(tables.readMeta()).runCount;
      assert.ok(m.one < runCount * ROWS_A_STATEMENT, JSON.stringify(m));
      // inserted in order: rowid order is (run, position) order, every row sound (checked as read)
      const order = raw.prepare('SELECT run_key, pos FROM messages ORDER BY rowid').all() as Array<{ run_key: number; pos: number }>;
      const sorted = [...order].sort((a, b) => a.run_key - b.run_key || a.pos - b.pos);
      assert.deepEqual(order, sorted);
      for (const r of raw.prepare('SELECT run_key, len FROM runs').all() as Array<{ run_key: number; len: number }>) {
        assert.equal([...tables.messages(r.run_key, 0, r.len)].length, r.len);
      }
      const huge = raw.prepare("SELECT run_key FROM runs WHERE run_id = 'run-huge'").get() as { run_key: number };
      const texts = [...tables.messages(huge.run_key, 0, 43)].map((x) => x.fields);
      assert.equal(texts.length, 43);
      assert.ok(texts[2]!.includes('gamma lorem ipsum'), 'the huge message, read back whole');
      assert.ok(Number((raw.prepare('SELECT count(*) AS n FROM field_pieces').get() as { n: number }).n) > 0);
      // postings ids one after another from 1, as one insert after another gives them
      const ids = (raw.prepare('SELECT id FROM postings ORDER BY id').all() as Array<{ id: number }>).map((r) => r.id);
      assert.deepEqual(
        ids,
        ids.map((_, i) => i + 1),
      );
      // every term found through its directory bucket
      for (const { term } of raw.prepare('SELECT DISTINCT term FROM postings').all() as Array<{ term: string }>) {
        assert.ok(tables.termRows(term, readIndexMeta(tables.readMeta()).tierSegments).length > 0, term);
      }
    } finally {
      opened.db.close();
      store.close();
    }
  });
});
