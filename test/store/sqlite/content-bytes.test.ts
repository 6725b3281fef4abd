/**
 * sqlite/content.ts reads a text `messages` as its bytes and digests an ASCII one as bytes
 * (ContentDigester.addAscii), any other as the string made of its bytes: every run's digest must be the
 * one its rows give read as strings by SQLite's reader, whatever the texts hold (accents, emoji, bytes
 * that are not UTF-8, NULs, 17 MB) and whatever else the column holds; and the same from a UTF-16 database,
 * whose texts are read as strings.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { schemaStatements } from '../../../scripts/lib/store-writer.js';
import { tempDir } from '../../helpers/stores.js';
import { ContentDigester } from '../../../src/store/content.js';
import { openSqliteReader } from '../../../src/store/sqlite/reader.js';

/** A text of `n` copies of `c` (SQL), so that texts past 128 KiB (the shortest read as bytes) stay short here. */
const rep = (n: number, c: string): string => `printf('%.*c', ${n}, '${c}')`;
const BIG = 140_000;

/**
 * Each run's rows: SQL expressions for `messages` (hex literals cast to TEXT make bytes that are not
 * UTF-8). Texts from 128 KiB to 16 MiB are read as bytes, the others as strings: each run mixes both.
 */
const RUNS: Record<string, readonly string[]> = {
  ascii: [
    "'[1]'",
    `'[1, "' || ${rep(BIG, 'x')} || '"]'`,
    `'[1, "' || ${rep(BIG, 'x')} || '", 3]'`,
    "'[0]'",
    `'[0' || ${rep(BIG, ' ')} || ']'`,
    "''",
  ],
  accents: [
    '\'["é"]\'',
    `'["é", "' || ${rep(BIG, 'y')} || '"]'`,
    `'["é", "' || ${rep(BIG, 'y')} || '", "😀"]'`,
    '\'["é", "😀", 3]\'',
    `'[1, "' || ${rep(BIG, 'y')} || '"]'`,
  ],
  invalid: [
    "CAST(x'5b22c3' AS TEXT)",
    `CAST(CAST('["' || ${rep(BIG, 'z')} AS BLOB) || x'c3' AS TEXT)`,
    `CAST(CAST('["' || ${rep(BIG, 'z')} AS BLOB) || x'c3a9225d' AS TEXT)`,
    `CAST(CAST('["' || ${rep(BIG, 'z')} AS BLOB) || x'eda080225d' AS TEXT)`,
    "CAST(x'ff5b5d' AS TEXT)",
    "'[]'",
  ],
  nul: ["CAST(x'5b00225d' AS TEXT)", `CAST(x'5b0022' || CAST(${rep(BIG, 'n')} AS BLOB) || x'225d' AS TEXT)`, "'[1]'"],
  mixed: ["'[1]'", "x'5b315d'", '42', `'[1, ' || ${rep(BIG, '2')} || ']'`, '1.5', "'[1, 2, 3]'"],
  // past the longest text read as bytes (16 MiB): read as a string, beside texts read as bytes (UTF-8 only)
  huge: [
    `'[1, "' || ${rep(BIG, 'h')} || '"]'`,
    `'[' || ${rep(17_000_000, 'x')} || ']'`,
    `'[' || ${rep(17_000_000, 'x')} || ', 2]'`,
    "'[1, 2]'",
  ],
};

/** The runs of a store in `encoding` (a UTF-16 one reads every text as a string: no huge run needed). */
const runsOf = (encoding: string): Array<[string, readonly string[]]> =>
  Object.entries(RUNS).filter(([runId]) => encoding === 'UTF-8' || runId !== 'huge');

function store(encoding: 'UTF-8' | 'UTF-16le'): string {
  const path = join(tempDir('content-bytes'), 'sessions.db');
  const db = new Database(path);
  try {
    db.pragma(`encoding = '${encoding}'`);
    for (const sql of schemaStatements('newest')) db.exec(sql);
    let clock = Date.parse('2026-04-01T08:00:00Z');
    for (const [runId, texts] of runsOf(encoding)) {
      const at = new Date((clock += 1000)).toISOString();
      db.prepare("INSERT INTO runs (run_id, conversation_id, metadata, started_at) VALUES (?, ?, '{}', ?)").run(runId, `c-${runId}`, at);
      for (const [i, t] of texts.entries()) {
        const state = i % 3 === 2 ? 'interrupted' : 'complete';
        db.exec(
          `INSERT INTO snapshots (run_id, step_index, conversation_id, timestamp, state, messages) VALUES ('${runId}', ${i}, 'c-${runId}', '${at}', '${state}', ${t})`,
        );
      }
    }
  } finally {
    db.close();
  }
  return path;
}

for (const encoding of ['UTF-8', 'UTF-16le'] as const) {
  test(`every run's digest is the one its rows read as strings give (${encoding})`, () => {
    const path = store(encoding);
    const db = new Database(path, { readonly: true });
    const expected = new Map<string, unknown>();
    try {
      assert.equal(db.pragma('encoding', { simple: true }), encoding);
      const rows = db
        .prepare('SELECT seq, step_index, timestamp, state, typeof(messages), messages FROM snapshots WHERE run_id = ? ORDER BY seq')
        .raw();
      for (const [runId] of runsOf(encoding)) {
        const d = new ContentDigester(0, true);
        for (const r of rows.iterate(runId) as IterableIterator<unknown[]>) d.add(Number(r[0]), r);
        expected.set(runId, d.finish());
      }
    } finally {
      db.close();
    }
    const reader = openSqliteReader(path);
    try {
      const content = reader.content(new Map(), 0);
      assert.equal(content.runs.size, runsOf(encoding).length);
      for (const [runId, c] of expected) assert.deepEqual(content.runs.get(runId), c, runId);
    } finally {
      reader.close();
    }
  });
}
