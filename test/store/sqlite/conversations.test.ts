import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteReader } from '../../../src/store/sqlite/reader.js';
import { addRun, buildStore } from '../../helpers/stores.js';
import { sha } from '../../helpers/evidence.js';
import { existsSync } from 'node:fs';

test('the conversation catalog: rows by id or all, unreadable rows told once each, the file untouched', () => {
  const db = buildStore((w) => {
    addRun(w, 'r1', 'c1');
    w.saveConversation({ id: 'c1', summary: { title: 'One', tags: ['a'], outcome: 'completed' } });
    w.saveConversation({ id: 'c2', summary: { title: 'Two' } });
    w.saveConversation({ id: 'bad', rawMetadata: '{"outcome": "exploded"}' });
    w.db.prepare("INSERT INTO conversations VALUES (NULL, 1, '{}', '[]', '', '2026-01-12T00:00:00+00:00')").run();
  });
  const before = sha(db);
  const r = openSqliteReader(db);
  try {
    assert.deepEqual([...r.conversationMeta(['c1', 'c1', 'missing'])], [['c1', { title: 'One', tags: ['a'], outcome: 'completed' }]]);
    assert.deepEqual(r.notices(), [], 'nothing unreadable was asked for');
    // many ids (a listing) read the table in one pass: still only the rows asked for, and their problems
    const many = ['c2', ...Array.from({ length: 100 }, (_, i) => `absent-${i}`)];
    assert.deepEqual([...r.conversationMeta(many).keys()], ['c2']);
    assert.deepEqual(r.notices(), [], 'the unreadable rows were not asked for');
    const all = r.conversationMeta(null);
    assert.deepEqual([...all.keys()].sort(), ['c1', 'c2']);
    assert.deepEqual(all.get('c2'), { title: 'Two', tags: [], outcome: 'ready' });
    r.conversationMeta(null);
    assert.deepEqual(
      r.notices().map((n) => [n.kind, n.detail]),
      [
        ['unreadable-conversation-metadata', 'conversation bad: outcome "exploded" is not one upstream writes'],
        ['unreadable-conversation-metadata', 'a row whose id is NULL'],
      ],
    );
  } finally {
    r.close();
  }
  assert.equal(sha(db), before);
  assert.ok(!existsSync(`${db}-wal`) && !existsSync(`${db}-shm`));
});

test('no catalog table: no metadata and no notice; a table of another shape: one notice', () => {
  const plain = buildStore((w) => addRun(w, 'r1', 'c1'));
  const r = openSqliteReader(plain);
  try {
    assert.equal(r.conversationMeta(null).size, 0);
    assert.equal(r.conversationMeta(['c1']).size, 0);
    assert.deepEqual(r.notices(), []);
  } finally {
    r.close();
  }
  const other = buildStore((w) => {
    addRun(w, 'r1', 'c1');
    w.db.exec('CREATE TABLE conversations (key TEXT, body TEXT)');
  });
  const o = openSqliteReader(other);
  try {
    assert.equal(o.conversationMeta(['c1']).size, 0);
    o.conversationMeta(null);
    assert.deepEqual(
      o.notices().map((n) => n.detail),
      ['the conversations table has no id and metadata columns'],
    );
  } finally {
    o.close();
  }
});
