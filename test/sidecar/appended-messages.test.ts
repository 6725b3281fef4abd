/**
 * Issue 21: a run whose durable record only grew keeps the postings of the messages it had where they
 * are (its live segments run from `seg_from` to `seg`); an update tokenizes and writes its new messages
 * only. A later snapshot that restamps a message the record had rewrites the run whole. Every answer
 * stays that of `--no-index`, through tier and base merges.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { appendTo } from '../helpers/append.js';
import { assertSameAnswers, sync } from '../helpers/index-answers.js';
import { threadedStore } from '../helpers/random-stores.js';
import { tempDir } from '../helpers/stores.js';
import { SqliteIndexDb } from '../../src/sidecar/index-db.js';
import { readIndexMeta } from '../../src/sidecar/meta.js';
import { IndexTables } from '../../src/sidecar/tables.js';

/** A word the tokenizer keeps whole, one per `i`: `zqa`, `zqb`, … `zqba`, … */
const word = (i: number): string => {
  let s = '';
  for (let n = i; ; n = Math.floor(n / 26) - 1) {
    s = String.fromCharCode(97 + (n % 26)) + s;
    if (n < 26) break;
  }
  return `zq${s}`;
};

/** The index read-only: its newest tier segment's terms (null when no tier segment is listed), and a run's segments. */
function indexState(index: string, runId: string): { newestTerms: Set<string> | null; seg: number; segFrom: number } {
  const db = new Database(index, { readonly: true });
  try {
    const t = new IndexTables(new SqliteIndexDb(db));
    const tiers = readIndexMeta(t.readMeta()).tierSegments;
    const newest = tiers.length > 0 ? new Set(t.tierDirectory(tiers[tiers.length - 1]!).map(([term]) => term)) : null;
    const r = db.prepare('SELECT seg, seg_from FROM runs WHERE run_id = ?').get(runId) as { seg: number; seg_from: number };
    return { newestTerms: newest, seg: r.seg, segFrom: r.seg_from };
  } finally {
    db.close();
  }
}

/** A threaded store indexed, and one of its runs with a history of two complete snapshots or more. */
function indexedRun(seed: number): { path: string; index: string; runs: ReturnType<typeof threadedStore>['runs']; victim: string } {
  const { path, runs } = threadedStore(seed);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  const db = new Database(path, { readonly: true });
  const victim = db
    .prepare(
      "SELECT run_id FROM snapshots WHERE state = 'complete' GROUP BY run_id HAVING COUNT(*) >= 2 ORDER BY MIN(seq) LIMIT 1 OFFSET 1",
    )
    .pluck()
    .get() as string;
  db.close();
  return { path, index, runs, victim };
}

test("a run's record only grown: the update's segment holds the new messages' terms only, the earlier postings stay live in theirs; through tier and base merges every answer is that of --no-index", () => {
  const { path, index, runs, victim } = indexedRun(61);
  let unmerged = 0;
  let merges = 0;
  for (let i = 0; i < 30; i++) {
    appendTo(path, victim, `${word(i)} follow-up`);
    const r = sync(path, index);
    assert.equal(r.runsResumed, 1, `round ${i}`);
    const s = indexState(index, victim);
    if (r.merged || r.compacted) {
      merges++;
      continue;
    }
    unmerged++;
    assert.ok(s.newestTerms?.has(word(i)), `round ${i}: the new message's word is in the update's segment`);
    // (a term of the run's earlier messages only: were the run written again whole, it would be there too)
    if (i > 0) assert.ok(!s.newestTerms!.has(word(i - 1)), `round ${i}: the previous message's word is not written again`);
    assert.ok(s.segFrom < s.seg, `round ${i}: the run's postings span segments ${s.segFrom}..${s.seg}`);
    if (i % 6 === 5) assertSameAnswers(path, index, runs, 600 + i, word(i), word(i - 3), word(0), 'follow-up');
  }
  assert.ok(unmerged >= 20 && merges >= 2, `${unmerged} updates without a merge, ${merges} with one`);
  assertSameAnswers(path, index, runs, 700, word(29), word(15), word(0), 'follow-up');
  assert.equal(sync(path, index, true).upToDate, true, '--verify finds the index current');
});

test('a later snapshot that restamps a message the record had (a field the keys leave out): its row is the later copy, the run written again whole, answers as --no-index', () => {
  const { path, index, runs, victim } = indexedRun(62);
  appendTo(path, victim, `${word(1)} first`);
  assert.equal(sync(path, index).runsResumed, 1);
  assert.ok(indexState(index, victim).segFrom < indexState(index, victim).seg);
  // the last snapshot again with its first message's timestamp changed (the loose key leaves it out), and one more message
  const db = new Database(path);
  const last = db
    .prepare("SELECT step_index, messages FROM snapshots WHERE run_id = ? AND state = 'complete' ORDER BY seq DESC LIMIT 1")
    .get(victim) as { step_index: number; messages: string };
  const messages = JSON.parse(last.messages) as Array<Record<string, unknown>>;
  messages[0]!.timestamp = '2031-05-05T05:05:05Z';
  messages.push({
    parts: [{ content: `${word(2)} second`, timestamp: '2027-01-01T00:00:00Z', part_kind: 'user-prompt' }],
    timestamp: '2027-01-01T00:00:00Z',
    instructions: null,
    kind: 'request',
    run_id: null,
    conversation_id: null,
    metadata: null,
  });
  db.prepare("INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) VALUES (?, ?, ?, 'complete', ?)").run(
    victim,
    last.step_index + 1,
    '2027-01-01T00:00:00Z',
    JSON.stringify(messages),
  );
  db.close();
  const r = sync(path, index);
  assert.equal(r.runsResumed, 1);
  const s = indexState(index, victim);
  assert.equal(s.segFrom, s.seg, 'the run written again whole, in one segment');
  const idx = new Database(index, { readonly: true });
  const stamped = idx
    .prepare('SELECT m.timestamp FROM messages m JOIN runs r ON r.run_key = m.run_key WHERE r.run_id = ? AND m.pos = 0')
    .pluck()
    .get(victim) as string;
  idx.close();
  assert.match(stamped, /^2031-05-05/, 'the record holds the later copy');
  assertSameAnswers(path, index, runs, 62, word(1), word(2), 'second');
});
