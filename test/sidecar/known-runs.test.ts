/**
 * Issue 21: an update reads the marks of the runs that changed only (sidecar/known-runs.ts), the
 * index's row of what its content was made of vouching for the others, and every answer stays that of
 * `--no-index`. Each test changes a store in one way a shortcut could miss (a run record changed, a run
 * placed before the others, a run's snapshots gone), then compares searches through the index with a
 * replay, and counts the marks read (never times).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { appendRun, appendSnapshots } from '../../scripts/bench/mutations.js';
import { BIN, runCliAsync } from '../helpers/cli.js';
import { assertSameAnswers, sync } from '../helpers/index-answers.js';
import { threadedStore } from '../helpers/random-stores.js';
import { tempDir } from '../helpers/stores.js';

function indexedStore(seed: number): { path: string; index: string; runs: Array<{ id: string; conv: string | null }> } {
  const { path, runs } = threadedStore(seed);
  const index = join(tempDir(), 'idx.db');
  assert.equal(sync(path, index).marksRead, 0, 'a build has no marks to read');
  return { path, index, runs };
}

function write(path: string, sql: string, ...params: unknown[]): void {
  const db = new Database(path);
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

test('appended runs and snapshots: the marks of the unchanged runs are not read, and answers equal --no-index', () => {
  const { path, index, runs } = indexedStore(41);
  appendRun(path);
  let r = sync(path, index);
  assert.equal(r.runsReplayed, 1);
  assert.equal(r.marksRead, 0, 'a new run has no marks; the others are vouched for');
  assertSameAnswers(path, index, runs, 1);
  appendRun(path);
  assert.equal(sync(path, index).marksRead, 0);
  assertSameAnswers(path, index, runs, 2);
  appendSnapshots(path, 3);
  r = sync(path, index);
  assert.ok(r.runsResumed >= 1);
  assert.ok(r.marksRead >= r.runsResumed && r.marksRead < runs.length, `read the marks of ${r.marksRead} runs`);
  assertSameAnswers(path, index, runs, 3, 'quarzite');
});

test("an old run's record changed, with a run appended: the run list no longer vouches, answers equal --no-index", () => {
  const { path, index, runs } = indexedStore(42);
  // a run moved to another conversation: its contents (and pages of snapshots) untouched
  const moved = runs.find((r) => r.conv !== null)!;
  const to = runs.find((r) => r.conv !== null && r.conv !== moved.conv)!.conv!;
  write(path, 'UPDATE runs SET conversation_id = ? WHERE run_id = ?', to, moved.id);
  moved.conv = to;
  appendRun(path);
  const r = sync(path, index);
  assert.equal(r.marksRead, runs.length, "every run's marks were read");
  for (let seed = 10; seed < 14; seed++) assertSameAnswers(path, index, runs, seed);
  // and the next append is vouched for again
  appendRun(path);
  assert.equal(sync(path, index).marksRead, 0);
  assertSameAnswers(path, index, runs, 14);
});

test('a run placed before the others in corpus order (an earlier started_at): every run moves, answers equal --no-index', () => {
  const { path, index, runs } = indexedStore(43);
  const db = new Database(path);
  const first = db.prepare('SELECT run_id, conversation_id FROM runs ORDER BY started_at, rowid LIMIT 1').get() as {
    run_id: string;
    conversation_id: string | null;
  };
  const id = `${first.run_id}-earlier`;
  db.prepare(
    "INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) VALUES (?, ?, NULL, NULL, '{}', ?)",
  ).run(id, first.conversation_id, '2000-01-01T00:00:00Z');
  db.prepare(
    'INSERT INTO snapshots (run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages) SELECT ?, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages FROM snapshots WHERE run_id = ? ORDER BY seq',
  ).run(id, first.run_id);
  db.close();
  runs.push({ id, conv: first.conversation_id });
  const r = sync(path, index);
  assert.equal(r.marksRead, runs.length - 1, "every run's marks were read");
  for (let seed = 20; seed < 24; seed++) assertSameAnswers(path, index, runs, seed);
});

test('a run that lost all its snapshots, then got them back: answers equal --no-index after each', () => {
  const { path, index, runs } = indexedStore(44);
  const victim = runs[4]!.id;
  const db = new Database(path);
  db.exec('CREATE TABLE kept AS SELECT * FROM snapshots WHERE 0');
  db.prepare('INSERT INTO kept SELECT * FROM snapshots WHERE run_id = ?').run(victim);
  db.prepare('DELETE FROM snapshots WHERE run_id = ?').run(victim);
  db.close();
  appendRun(path);
  let r = sync(path, index);
  assert.ok(r.runsReplayed >= 2, 'the emptied run and the new one');
  assert.ok(r.marksRead >= 1 && r.marksRead < runs.length, `read the marks of ${r.marksRead} runs`);
  assertSameAnswers(path, index, runs, 30);
  const back = new Database(path);
  back.exec(
    'INSERT INTO snapshots (run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages) SELECT run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages FROM kept ORDER BY seq',
  );
  back.exec('DROP TABLE kept');
  back.close();
  r = sync(path, index);
  assert.ok(r.runsReplayed >= 1);
  assertSameAnswers(path, index, runs, 31);
});

test('8 searches at once, 2 more killed, after each change (appends, a run moved to another conversation, new snapshots): every answer that of --no-index', async () => {
  const { path, runs } = threadedStore(45);
  const index = join(tempDir(), 'shared.idx');
  // a run moved into another conversation (below): a search of that conversation finds its words
  const moved = runs.find((r) => r.conv !== null)!;
  const to = runs.find((r) => r.conv !== null && r.conv !== moved.conv)!.conv!;
  const text = new Database(path, { readonly: true })
    .prepare('SELECT messages FROM snapshots WHERE run_id = ? ORDER BY seq LIMIT 1')
    .pluck()
    .get(moved.id) as string;
  const word = /"content": "([a-z]{5,})/.exec(text)![1]!;
  const args = ['search', word, '--db', path, '--conversation', to, '--json', '-m', '20'];
  const killed = (ms: number): Promise<unknown> => {
    const p = spawn(process.execPath, [BIN, ...args, '--index', index], { stdio: 'ignore' });
    const timer = setTimeout(() => p.kill('SIGKILL'), ms);
    return new Promise((resolve) => p.on('close', resolve)).finally(() => clearTimeout(timer));
  };
  const changes: Array<() => void> = [
    () => appendRun(path),
    () => appendRun(path),
    () => write(path, 'UPDATE runs SET conversation_id = ? WHERE run_id = ?', to, moved.id),
    () => appendSnapshots(path, 2),
    () => appendRun(path),
  ];
  await runCliAsync([...args, '--index', index]); // the index and its page map
  for (const [round, change] of changes.entries()) {
    change();
    const want = await runCliAsync([...args, '--no-index']);
    assert.equal(want.status, 0, want.stderr);
    const kills = [killed(60 + round * 40), killed(150 + round * 50)];
    const answers = await Promise.all(Array.from({ length: 8 }, () => runCliAsync([...args, '--index', index])));
    await Promise.all(kills);
    for (const [i, r] of answers.entries()) {
      assert.equal(r.stderr, want.stderr, `round ${round} search ${i}`);
      assert.equal(r.stdout, want.stdout, `round ${round} search ${i}`);
    }
  }
  const last = await runCliAsync([...args, '--no-index']);
  assert.equal((await runCliAsync([...args, '--index', index])).stdout, last.stdout);
});

test('runListDigests hashes the run list in batches: the same prefix and whole digests as one update per run, at every cut', async () => {
  const { createHash } = await import('node:crypto');
  const { runListDigests } = await import('../../src/sidecar/known-runs.js');
  const runs = Array.from({ length: 2500 }, (_, i) => ({
    runId: `run-${i}${i % 7 === 0 ? '\uD800' : ''}-${'y'.repeat(i % 50)}`,
    rowid: i + 1,
    conversationId: i % 3 === 0 ? null : `conv-${i % 11}`,
    parentRunId: null,
    agentName: i % 5 === 0 ? 'agent' : null,
    startedAt: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`,
  }));
  const oneByOne = (n: number): { prefix: string; all: string } => {
    const h = createHash('sha256');
    let prefix: string | null = null;
    runs.forEach((r, i) => {
      if (i === n) prefix = h.copy().digest('base64');
      h.update(`${JSON.stringify([r.runId, r.rowid, r.conversationId, r.parentRunId, r.agentName, r.startedAt])}\n`);
    });
    const all = h.digest('base64');
    return { prefix: prefix ?? all, all };
  };
  for (const n of [0, 1, 999, 1700, 2499, 2500, 3000]) assert.deepEqual(runListDigests(runs, n), oneByOne(n), `cut at ${n}`);
});
