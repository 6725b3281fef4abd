/**
 * Issue 21: an update's cost follows what changed, so no statement of the index reads every row of a
 * table to find the few it asks for. At 50,000 runs a tier merge's "runs written since the base" read
 * every run row (~79 ms of the update that merged) until `runs_seg` let it find them by their segment.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { SqliteIndexDb } from '../../src/sidecar/index-db.js';
import { INDEX_DDL } from '../../src/sidecar/schema.js';
import { IndexTables } from '../../src/sidecar/tables.js';

/** Every statement the index tables prepare, on an index laid out as this format lays it out. */
function preparedStatements(db: Database.Database): string[] {
  const index = new SqliteIndexDb(db);
  const seen: string[] = [];
  const prepare = index.prepare.bind(index);
  index.prepare = (sql) => {
    seen.push(sql);
    return prepare(sql);
  };
  new IndexTables(index);
  return seen;
}

/** SQLite's plan for `sql`, one step a line (each `?` bound to 0: the plan does not depend on the values). */
function planOf(db: Database.Database, sql: string): string {
  const params = (sql.match(/\?/g) ?? []).map(() => 0);
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join('\n');
}

test('every statement of the index that picks rows by a condition finds them through a key, never by reading the whole table', () => {
  const db = new Database(':memory:');
  try {
    db.exec(INDEX_DDL);
    const statements = preparedStatements(db);
    const conditional = statements.filter((sql) => /^\s*(SELECT|UPDATE|DELETE)\b[\s\S]*\bWHERE\b/i.test(sql));
    // the statements a sync, a merge and a search use to pick rows: a regex that matched none would prove nothing
    assert.ok(conditional.length >= 20, `${conditional.length} statements with a condition`);
    assert.ok(
      conditional.some((sql) => /WHERE seg > \?/.test(sql)),
      'the tier merge finds the runs written since the base with a condition on seg',
    );
    const scans = conditional.map((sql) => ({ sql, plan: planOf(db, sql) })).filter(({ plan }) => /^SCAN /m.test(plan));
    assert.deepEqual(
      scans.map(({ sql, plan }) => `${plan} <= ${sql.slice(0, 120)}`),
      [],
      'a statement with a condition reads the whole table',
    );
  } finally {
    db.close();
  }
});
