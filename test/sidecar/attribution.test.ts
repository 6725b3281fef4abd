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
