import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { writeHugeMessageStore } from '../../scripts/bench/huge-message.js';
import { rng } from '../../scripts/bench/synthetic-store.js';
import type { ClipRule } from '../../src/render/message.js';
import { searchText } from '../../src/render/message.js';
import { IndexDamagedError } from '../../src/sidecar/errors.js';
import { fieldsJson, PIECE_CHARS, searchPieces, type StoredField } from '../../src/sidecar/fields.js';
import { SqliteIndexDb } from '../../src/sidecar/index-db.js';
import { INDEX_DDL } from '../../src/sidecar/schema.js';
import { IndexTables } from '../../src/sidecar/tables.js';
import { tokenize } from '../../src/text/tokenize.js';
import { BIN, cli } from '../helpers/cli.js';
import { addRun, addSnapshot, assistantMsg, buildStore, tempDir, userMsg } from '../helpers/stores.js';

const CLIPS: ClipRule[] = ['tail500', 'tail200', 'head200', 'none'];
/** Characters that JSON escapes, surrogate pairs and lone halves, words, a label's usual ends. */
const ALPHABET = ['a', 'Z', '9', '_', ' ', ':', ']', '"', '\\', '\n', '\u0001', 'é', 'İ', '中', '😀', '\ud83d', '\ude00', '\u2028'];

function randomString(random: () => number, max: number): string {
  let s = '';
  for (let n = Math.floor(random() * max); n > 0; n--) s += ALPHABET[Math.floor(random() * ALPHABET.length)]!;
  return s;
}

function randomFields(random: () => number, max: number): StoredField[] {
  return Array.from({ length: 1 + Math.floor(random() * 3) }, () => [
    randomString(random, 8),
    randomString(random, max),
    CLIPS[Math.floor(random() * CLIPS.length)]!,
  ]);
}

function indexTables(): IndexTables {
  const db = new Database(':memory:');
  db.exec(INDEX_DDL);
  return new IndexTables(new SqliteIndexDb(db));
}

const message = {
  run_key: 1,
  pos: 0,
  loose_key: 'l',
  strict_key: 's',
  kind: 'request',
  timestamp: null,
  first_seq: 1,
  first_step: 1,
  dl: 3,
  unknown_parts: null,
  roles: '[["user",null]]',
};

describe('sidecar/fields: a message stored and tokenized in pieces', () => {
  test('the pieces of the fields JSON join to JSON.stringify exactly, surrogate pairs at every piece edge included', () => {
    const random = rng(5);
    for (let i = 0; i < 400; i++) {
      const fields = randomFields(random, 700);
      const size = 1 + Math.floor(random() * 300);
      const pieces = [...fieldsJson(fields, size)];
      // a pair's halves escaped apart (\\ud83d\\ude00) would not be the text JSON.stringify writes
      assert.equal(pieces.join(''), JSON.stringify(fields), `case ${i}, pieces of ${size}`);
    }
    // a pair straddling every possible cut of a long text
    for (let at = 60; at < 70; at++) {
      const text = 'x'.repeat(at) + '😀'.repeat(200);
      const fields: StoredField[] = [['User: ', text, 'tail500']];
      assert.equal([...fieldsJson(fields, 64)].join(''), JSON.stringify(fields));
    }
  });

  test('the search pieces tokenize as the search text does, whatever the labels end with', () => {
    const random = rng(6);
    for (let i = 0; i < 400; i++) {
      const fields = randomFields(random, 40);
      const want = tokenize(searchText(fields.map(([label, text]) => ({ label, text }))));
      assert.deepEqual(searchPieces(fields).flatMap(tokenize), want, JSON.stringify(fields));
    }
    // a label ending in a word character runs into its text: one piece
    assert.deepEqual(searchPieces([['Tool [ab', 'cd]: x', 'none']]), ['Tool [abcd]: x']);
    assert.deepEqual(searchPieces([['User: ', 'hello', 'tail500']]), ['User: ', 'hello']);
  });

  test('a field longer than a piece is stored in pieces and read back exactly, by every read', () => {
    const t = indexTables();
    const text = `${'word '.repeat(PIECE_CHARS / 5 - 1)}ab😀${'😀 é"\\\n'.repeat(PIECE_CHARS / 3)}end`;
    const fields: StoredField[] = [
      ['User: ', text, 'tail500'],
      ['System: ', 'short', 'head200'],
    ];
    t.putMessage(message, fieldsJson(fields));
    const want = JSON.stringify(fields);
    const [row] = [...t.messages(1, 0, 1)];
    assert.ok(row!.pieces >= 2, `${row!.pieces} pieces`);
    assert.equal(row!.fields, want);
    assert.equal(t.message(1, 0).fields, want);
    assert.equal(t.messageRange(1, 0, 1)[0]!.fields, want);
    // a short one keeps its whole JSON in its row
    t.putMessage({ ...message, pos: 1 }, fieldsJson([['User: ', 'hi', 'tail500']]));
    assert.deepEqual(
      { fields: t.message(1, 1).fields, pieces: t.message(1, 1).pieces },
      { fields: '[["User: ","hi","tail500"]]', pieces: 0 },
    );
    // deleting the messages deletes their pieces
    t.deleteMessages(1, 0);
    assert.equal((t.db as SqliteIndexDb).db.prepare('SELECT COUNT(*) FROM field_pieces').pluck().get(), 0);
  });

  test('a piece lost, changed, moved or added is damage, never a shorter text', () => {
    const fields: StoredField[] = [['User: ', 'abc '.repeat(PIECE_CHARS), 'tail500']];
    const damages: Array<[string, string]> = [
      ['lost', 'DELETE FROM field_pieces WHERE k = 2'],
      ['last lost', 'DELETE FROM field_pieces WHERE k = (SELECT MAX(k) FROM field_pieces)'],
      ['changed', "UPDATE field_pieces SET data = replace(data, 'abc', 'abd') WHERE k = 1"],
      ['moved', 'UPDATE field_pieces SET k = 9 WHERE k = 2'],
      ['swapped', 'UPDATE field_pieces SET pos = 1 - pos'],
      ['added', 'INSERT INTO field_pieces SELECT run_key, pos, k + 100, data, sum FROM field_pieces WHERE k = 1'],
    ];
    for (const [what, sql] of damages) {
      const t = indexTables();
      t.putMessage(message, fieldsJson(fields));
      (t.db as SqliteIndexDb).db.exec(sql);
      assert.throws(() => t.message(1, 0), IndexDamagedError, what);
      assert.throws(() => [...t.messages(1, 0, 1)], IndexDamagedError, what);
    }
  });

  test('through the CLI: a message of several pieces is found and shown as without the index; a lost piece is noticed and rebuilt', async () => {
    const big = `${'lorem ipsum '.repeat(120_000)}needle 😀${'😀'.repeat(PIECE_CHARS / 2)} tail`;
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [userMsg(big, 1), assistantMsg('found the needle', 2)]);
    });
    const index = join(tempDir(), 'idx.db');
    const args = ['search', 'needle', '--db', path, '--scope', 'all', '--json'];
    const want = await cli([...args, '--no-index']);
    assert.equal(want.status, 0, want.stderr);
    const built = await cli([...args, '--index', index]);
    assert.equal(built.stdout, want.stdout);
    const db = new Database(index);
    assert.ok((db.prepare('SELECT COUNT(*) FROM field_pieces').pluck().get() as number) >= 2);
    db.exec('DELETE FROM field_pieces WHERE k = 2');
    db.close();
    const r = await cli([...args, '--index', index]);
    assert.equal(r.stdout, want.stdout);
    assert.match(r.stderr, /was damaged \(.*pieces.*\); rebuilt it/);
  });

  test('an index build over one 48 MB message fits a V8 heap of three times its size', {
    skip: process.env.CONVSEARCH_SKIP_SLOW === '1',
    timeout: 180_000,
  }, () => {
    // before the pieces: the fields JSON, the flattened search text and the checksum's copy on the heap too (it needed more than 160 MB)
    const mb = 48;
    const store = join(tempDir(), 'huge.db');
    writeHugeMessageStore(store, mb);
    const index = join(tempDir(), 'idx.db');
    const args = [
      `--max-old-space-size=${3 * mb}`,
      BIN,
      'search',
      'hugeneedle',
      '--db',
      store,
      '--index',
      index,
      '--scope',
      'all',
      '--count',
    ];
    const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr.slice(-400));
    assert.equal(r.stdout.trim(), '1');
  });
});
