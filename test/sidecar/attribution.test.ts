/**
 * Issue 21: cross-run attribution after an update reads the key rows of the runs it must (attribution.ts):
 * a run appended to its conversation, holding only what earlier runs of that conversation hold, is
 * attributed from that conversation's runs alone; any other run takes the store-wide scan. Every
 * answer stays that of `--no-index`; the key rows read are counted (never timed).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { appendRun } from '../../scripts/bench/mutations.js';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { KeyIds, PairSet } from '../../src/sidecar/attribution.js';
import { assertSameAnswers, sync } from '../helpers/index-answers.js';
import { threadedStore } from '../helpers/random-stores.js';
import { tempDir } from '../helpers/stores.js';

function lastRun(path: string): { id: string; conv: string | null } {
  const db = new Database(path, { readonly: true });
  try {
    const r = db.prepare('SELECT run_id, conversation_id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1').get() as {
      run_id: string;
      conversation_id: string | null;
    };
    return { id: r.run_id, conv: r.conversation_id };
  } finally {
    db.close();
  }
}

test('a run appended to its conversation is attributed from the runs of that conversation only; answers equal --no-index', () => {
  let local = 0;
  for (const seed of [51, 52, 53, 54, 55, 56]) {
    const { path, runs } = threadedStore(seed);
    const index = join(tempDir(), 'idx.db');
    sync(path, index);
    appendRun(path);
    const added = lastRun(path);
    runs.push(added);
    const r = sync(path, index);
    assert.equal(r.runsReplayed, 1);
    const mates = runs.filter((x) => x.conv !== null && x.conv === added.conv).length;
    if (added.conv !== null) {
      local++;
      assert.ok(r.keysRead <= mates, `seed ${seed}: read the keys of ${r.keysRead} runs, the conversation has ${mates}`);
      assert.ok(r.keysRead < runs.length);
    } else assert.ok(r.keysRead >= runs.length, `seed ${seed}: a run without a conversation takes the store-wide scan`);
    assertSameAnswers(path, index, runs, seed, 'quarzite');
  }
  assert.ok(local > 0, 'some appended run had a conversation');
});

test('an appended run holding a message only another conversation holds takes the store-wide scan; answers equal --no-index', () => {
  const { path, runs } = threadedStore(57);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  const db = new Database(path);
  try {
    // a new run in conversation A whose snapshots are those of a run of conversation B: its record is
    // held store-wide (its section under --scope all is empty) but not within A
    const [a, b] = db
      .prepare('SELECT DISTINCT conversation_id FROM runs WHERE conversation_id IS NOT NULL ORDER BY conversation_id LIMIT 2')
      .pluck()
      .all() as string[];
    const from = db.prepare('SELECT run_id FROM runs WHERE conversation_id = ? ORDER BY started_at DESC LIMIT 1').pluck().get(b) as string;
    db.prepare(
      "INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) VALUES ('forked', ?, NULL, NULL, '{}', '2099-01-01T00:00:00Z')",
    ).run(a);
    db.prepare(
      "INSERT INTO snapshots (run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages) SELECT 'forked', step_index, ?, NULL, NULL, timestamp, state, messages FROM snapshots WHERE run_id = ? ORDER BY seq",
    ).run(a, from);
    runs.push({ id: 'forked', conv: a! });
  } finally {
    db.close();
  }
  const r = sync(path, index);
  assert.equal(r.runsReplayed, 1);
  assert.ok(r.keysRead >= runs.length, `read the keys of ${r.keysRead} runs`);
  assertSameAnswers(path, index, runs, 57, 'quarzite');
});

test('the key table and the (conversation, key) pairs tell every key apart, whatever bytes two keys share (against a Set of their texts)', () => {
  const random = rng(2106);
  // 20-byte keys in families that share their first 4 bytes (one slot, then probing) and differ in any
  // one later byte, or in none (the same key again, from another offset of another buffer)
  const keys: Buffer[] = [];
  for (let f = 0; f < 300; f++) {
    const head = Buffer.from([f & 0xff, f >> 8, 7, 9]);
    for (let k = 0; k < 20; k++) {
      const key = Buffer.concat([head, Buffer.alloc(16)]);
      key[4 + Math.floor(random() * 16)] = Math.floor(random() * 256);
      keys.push(key);
    }
  }
  const ids = new KeyIds();
  const pairs = new PairSet();
  const texts = new Map<string, number>();
  const pairTexts = new Set<string>();
  for (let i = 0; i < keys.length; i++) {
    // each key read where it lies in a buffer of its own, at an odd offset
    const at = 1 + (i % 5);
    const src = Buffer.concat([Buffer.alloc(at), keys[i]!, Buffer.alloc(3)]);
    const text = keys[i]!.toString('latin1');
    const conv = i % 3;
    assert.equal(ids.find(src, at) !== -1, texts.has(text), `key ${i} found`);
    const id = ids.add(src, at);
    if (!texts.has(text)) texts.set(text, id);
    assert.equal(id, texts.get(text), `key ${i} numbered as before`);
    assert.equal(pairs.has(conv, id), pairTexts.has(`${conv} ${text}`), `pair ${i}`);
    pairs.add(conv, id);
    pairTexts.add(`${conv} ${text}`);
  }
  assert.equal(ids.size, texts.size);
  for (const [text, id] of texts) {
    assert.equal(ids.find(Buffer.from(text, 'latin1'), 0), id);
    for (let conv = 0; conv < 4; conv++) assert.equal(pairs.has(conv, id), pairTexts.has(`${conv} ${text}`));
  }
});

/** Each run's starts as the index holds them, by run id. */
function starts(index: string): Map<string, string> {
  const db = new Database(index, { readonly: true });
  try {
    const rows = db.prepare('SELECT run_id, start_all, start_conv FROM runs').all() as Array<{
      run_id: string;
      start_all: number;
      start_conv: number;
    }>;
    return new Map(rows.map((r) => [r.run_id, `${r.start_all}/${r.start_conv}`]));
  } finally {
    db.close();
  }
}

test('an in-place edit of an early run whose messages later runs repeat: their starts move, each key row is read once; answers equal --no-index', () => {
  let moved = 0;
  for (const seed of [58, 59, 60]) {
    const { path, runs } = threadedStore(seed, 24);
    const index = join(tempDir(), 'idx.db');
    sync(path, index);
    const before = starts(index);
    const db = new Database(path);
    let edited: string;
    try {
      // the earliest run whose first user text a later run repeats: that text, changed in every snapshot of
      // that run (same length, no row added), is no longer held before the later run
      const first = db
        .prepare(
          `SELECT r.run_id AS run_id, substr(s.messages, instr(s.messages, '"content": "') + 12, 6) AS word
           FROM runs r JOIN snapshots s ON s.run_id = r.run_id
           WHERE instr(s.messages, '"content": "') > 0
             AND EXISTS (SELECT 1 FROM snapshots t JOIN runs q ON q.run_id = t.run_id
                         WHERE q.started_at > r.started_at AND instr(t.messages, substr(s.messages, instr(s.messages, '"content": "'), 40)) > 0)
           ORDER BY r.started_at, s.seq LIMIT 1`,
        )
        .get() as { run_id: string; word: string };
      edited = first.run_id;
      db.prepare('UPDATE snapshots SET messages = replace(messages, ?, ?) WHERE run_id = ?').run(
        `"content": "${first.word}`,
        `"content": "${'q'.repeat(first.word.length)}`,
        edited,
      );
    } finally {
      db.close();
    }
    const r = sync(path, index);
    assert.equal(r.runsReplayed, 1, `seed ${seed}: the edited run alone is rebuilt`);
    const position = runs.findIndex((x) => x.id === edited);
    assert.ok(position < runs.length / 2, `seed ${seed}: an early run (${position} of ${runs.length}) was edited`);
    // the store-wide scan reads every run's key row once (earlier runs, then the later ones)
    assert.equal(r.keysRead, runs.length, `seed ${seed}: key rows read`);
    const after = starts(index);
    moved += [...after].filter(([id, s]) => id !== edited && before.get(id) !== s).length;
    assertSameAnswers(path, index, runs, seed, 'quarzite', 'qqqqqq');
  }
  assert.ok(moved > 0, 'a later run’s starts moved with the edit');
});
