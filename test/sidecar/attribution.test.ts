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
import { appendRun, continueConversation } from '../../scripts/bench/mutations.js';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { KeyIds, PairSet } from '../../src/sidecar/attribution.js';
import { SqliteIndexDb } from '../../src/sidecar/index-db.js';
import { KeyFilter } from '../../src/sidecar/key-filter.js';
import { IndexTables } from '../../src/sidecar/tables.js';
import { assertFilterHoldsEveryKey, assertSameAnswers, sync } from '../helpers/index-answers.js';
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

/** The messages of the run's last complete snapshot that parses as a JSON array; null when it has none (a store may hold a broken one last). */
function lastMessages(db: Database.Database, runId: string): { step: number; conv: string | null; messages: unknown[] } | null {
  const rows = db
    .prepare(
      "SELECT step_index AS step, conversation_id AS conv, messages FROM snapshots WHERE run_id = ? AND state = 'complete' ORDER BY seq DESC",
    )
    .all(runId) as Array<{ step: number; conv: string | null; messages: string }>;
  for (const r of rows) {
    try {
      const messages = JSON.parse(r.messages) as unknown;
      if (Array.isArray(messages) && messages.length > 0) return { step: r.step, conv: r.conv, messages };
    } catch {
      // a broken snapshot: the one before it
    }
  }
  return null;
}

/** The runs (in corpus order) with a complete snapshot to go on from: a later step extends it. */
function growable(path: string, runs: ReadonlyArray<{ id: string; conv: string | null }>): Array<{ id: string; conv: string | null }> {
  const db = new Database(path, { readonly: true });
  try {
    return runs.filter((r) => lastMessages(db, r.id) !== null);
  } finally {
    db.close();
  }
}

/** A user prompt saying `text`, as the harness saves one. */
const prompt = (text: string): unknown => ({
  parts: [{ content: text, timestamp: '2027-01-01T00:00:00Z', part_kind: 'user-prompt' }],
  timestamp: '2027-01-01T00:00:00Z',
  instructions: null,
  kind: 'request',
});

/** A step of run `runId`: its last snapshot's messages, then `more`, saved as the next complete snapshot. */
function appendStep(path: string, runId: string, more: (db: Database.Database) => unknown[]): void {
  const db = new Database(path);
  try {
    const last = lastMessages(db, runId)!;
    db.prepare(
      "INSERT INTO snapshots (run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages) VALUES (?, ?, ?, NULL, NULL, '2027-01-01T00:00:00Z', 'complete', ?)",
    ).run(runId, last.step + 1, last.conv, JSON.stringify([...last.messages, ...more(db)]));
  } finally {
    db.close();
  }
}

/** Each run's starts in an index built from nothing over the store as it is now. */
const builtStarts = (path: string): Map<string, string> => {
  const index = join(tempDir(), 'fresh.db');
  sync(path, index);
  return starts(index);
};

test('steps appended to recent runs: attributed from the first of them on, every start as a build gives it; answers equal --no-index', () => {
  for (const seed of [61, 62, 63]) {
    const { path, runs } = threadedStore(seed, 20);
    const index = join(tempDir(), 'idx.db');
    sync(path, index);
    const grown = growable(path, runs);
    // the last run that can grow, then the last three: steps of new prompts (keys no run holds)
    for (const [round, back] of [1, 3].entries()) {
      const targets = grown.slice(-back);
      for (const [k, run] of targets.entries()) appendStep(path, run.id, () => [prompt(`quarzite step ${seed} ${round} ${k}`)]);
      const r = sync(path, index);
      assert.equal(r.runsResumed, back, `seed ${seed}, round ${round}: the runs were resumed`);
      assert.equal(r.runsReplayed, 0);
      const first = runs.findIndex((x) => x.id === targets[0]!.id);
      assert.ok(first >= runs.length / 2, `seed ${seed}: recent runs (from ${first} of ${runs.length})`);
      assert.equal(r.keysRead, runs.length - first, `seed ${seed}, round ${round}: key rows read from the first changed run on`);
      assert.deepEqual(starts(index), builtStarts(path), `seed ${seed}, round ${round}: starts as a build gives them`);
      assertSameAnswers(path, index, runs, seed, 'quarzite', 'step');
    }
  }
});

test('a step appended to a run holds what a later run starts its own record with: that start moves (the store-wide scan); answers equal --no-index', () => {
  let moved = 0;
  for (const seed of [65, 66, 67]) {
    const { path, runs } = threadedStore(seed, 20);
    const index = join(tempDir(), 'idx.db');
    sync(path, index);
    const before = starts(index);
    // of the runs that can grow, the second last is handed the last one's whole record
    const grown = growable(path, runs);
    const [earlier, last] = grown.slice(-2);
    appendStep(path, earlier!.id, (db) => lastMessages(db, last!.id)!.messages);
    const r = sync(path, index);
    assert.equal(r.runsResumed, 1, `seed ${seed}`);
    const after = starts(index);
    assert.deepEqual(after, builtStarts(path), `seed ${seed}: starts as a build gives them`);
    const movedNow = [...after].some(([id, s]) => id !== earlier!.id && before.get(id) !== s);
    if (movedNow) moved++;
    const first = runs.findIndex((x) => x.id === earlier!.id);
    assert.equal(
      r.keysRead,
      movedNow ? runs.length : runs.length - first,
      `seed ${seed}: a later start moved, or only the later runs were read`,
    );
    assertSameAnswers(path, index, runs, seed, 'quarzite');
  }
  assert.ok(moved > 0, 'some later run’s start moved');
});

/**
 * Adds run 'copied' (in `conv`, started last) whose snapshots are those of the first run that can grow:
 * every message of its record is held before it. Returns that run's id.
 */
function addCopiedRun(path: string, runs: Array<{ id: string; conv: string | null }>, conv: string | null): string {
  const donor = growable(path, runs)[0]!.id;
  const db = new Database(path);
  try {
    db.prepare(
      "INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) VALUES ('copied', ?, NULL, NULL, '{}', '2099-01-01T00:00:00Z')",
    ).run(conv);
    db.prepare(
      "INSERT INTO snapshots (run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages) SELECT 'copied', step_index, ?, NULL, NULL, timestamp, state, messages FROM snapshots WHERE run_id = ? ORDER BY seq",
    ).run(conv, donor);
    runs.push({ id: 'copied', conv });
  } finally {
    db.close();
  }
  return donor;
}

test('a step appended to a run whose record earlier runs held whole: its new message, held too, moves its start (the store-wide scan)', () => {
  const { path, runs } = threadedStore(68, 20);
  const donor = addCopiedRun(path, runs, null);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  const was = starts(index).get('copied');
  // a message another run holds: held before this run too, so its start goes past it
  const other = growable(path, runs).find((r) => r.id !== donor && r.id !== 'copied')!.id;
  appendStep(path, 'copied', (d) => lastMessages(d, other)!.messages.slice(-1));
  const r = sync(path, index);
  assert.equal(r.runsResumed, 1);
  assert.equal(r.keysRead, runs.length, 'every key row read');
  const after = starts(index);
  assert.deepEqual(after, builtStarts(path));
  assert.notEqual(after.get('copied'), was, 'its start moved');
  assertSameAnswers(path, index, runs, 68, 'quarzite');
});

test('a step appended to a run whose record earlier runs held whole: a new message no run holds leaves its start where it was, which the key filter tells (no store-wide scan)', () => {
  for (const conv of [null, 'conv-1']) {
    const { path, runs } = threadedStore(69, 20);
    addCopiedRun(path, runs, conv);
    const index = join(tempDir(), 'idx.db');
    sync(path, index);
    const was = starts(index).get('copied');
    appendStep(path, 'copied', () => [prompt(`quarzite said once, ${conv}`)]);
    const r = sync(path, index);
    assert.equal(r.runsResumed, 1);
    assert.equal(r.keysRead, 1, `${conv}: the key row of the run stepped alone`);
    const after = starts(index);
    assert.deepEqual(after, builtStarts(path));
    assert.equal(after.get('copied'), was, `${conv}: its start stayed`);
    assertSameAnswers(path, index, runs, 69, 'quarzite', 'once');
  }
});

test('a step appended to a run holds what a later run of its conversation inherited from another: only conversation starts move (the store-wide scan)', () => {
  let cases = 0;
  // (seeds whose stores hold such a pair, and one that does not)
  for (const seed of [77, 80, 84]) {
    const { path, runs } = threadedStore(seed, 20);
    const index = join(tempDir(), 'idx.db');
    sync(path, index);
    const before = starts(index);
    const at = (m: Map<string, string>, id: string): number[] => m.get(id)!.split('/').map(Number);
    const ord = (id: string): number => runs.findIndex((x) => x.id === id);
    const grown = growable(path, runs);
    // a later run whose record begins with history held store-wide but not in its conversation (forked
    // from another), and the last run of its conversation before it, in the later half
    let pair: [string, string, number] | null = null;
    for (const late of grown) {
      const [all, conv] = at(before, late.id);
      if (late.conv === null || !(conv! < all!)) continue;
      const mate = grown.filter((r) => r.conv === late.conv && ord(r.id) < ord(late.id)).pop();
      if (mate !== undefined && ord(mate.id) >= runs.length / 2) pair = [mate.id, late.id, all!];
    }
    if (pair === null) continue;
    const [mate, late, heldAll] = pair;
    // the mate is handed the later run's inherited messages only (those held store-wide already)
    appendStep(path, mate, (db) => lastMessages(db, late)!.messages.slice(0, heldAll));
    const r = sync(path, index);
    const after = starts(index);
    assert.deepEqual(after, builtStarts(path), `seed ${seed}: starts as a build gives them`);
    const others = runs.map((x) => x.id).filter((id) => id !== mate);
    if (others.every((id) => at(after, id)[0] === at(before, id)[0]) && others.some((id) => at(after, id)[1] !== at(before, id)[1])) {
      cases++;
      assert.equal(r.runsResumed, 1, `seed ${seed}`);
      assert.equal(r.keysRead, runs.length, `seed ${seed}: a conversation start moved: every key row read`);
    }
    assertSameAnswers(path, index, runs, seed, 'quarzite');
  }
  assert.ok(cases > 0, 'only conversation starts moved, in some store');
});

test('a new run that continues its conversation with messages no run holds reads the keys of that conversation’s runs only (the key filter says no run holds the new ones); starts as a build gives them; answers equal --no-index', () => {
  let local = 0;
  for (const seed of [71, 72, 73, 74, 75, 76]) {
    const { path, runs } = threadedStore(seed);
    const index = join(tempDir(), 'idx.db');
    sync(path, index);
    for (let round = 0; round < 2; round++) {
      const id = continueConversation(path);
      const added = lastRun(path);
      assert.equal(added.id, id);
      runs.push(added);
      const r = sync(path, index);
      assert.equal(r.runsReplayed, 1);
      if (added.conv !== null) {
        local++;
        const mates = runs.filter((x) => x.conv === added.conv).length;
        assert.ok(r.keysRead <= mates, `seed ${seed}, round ${round}: read the keys of ${r.keysRead} runs, the conversation has ${mates}`);
        assert.ok(r.keysRead < runs.length);
      }
      assert.deepEqual(starts(index), builtStarts(path), `seed ${seed}, round ${round}: starts as a build gives them`);
      assertSameAnswers(path, index, runs, seed, 'quarzite', 'kalo');
    }
    assertFilterHoldsEveryKey(index, `seed ${seed}`);
  }
  assert.ok(local >= 6, `new runs with a conversation: ${local}`);
});

test('the key filter holds every key of every run through new runs, copied runs, steps, an edit in place, a deletion and a VACUUM; starts as a build gives them; answers equal --no-index', () => {
  const seed = 81;
  const { path, runs } = threadedStore(seed, 20);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  assertFilterHoldsEveryKey(index, 'built');
  const sql = (f: (db: Database.Database) => void): void => {
    const db = new Database(path);
    try {
      f(db);
    } finally {
      db.close();
    }
  };
  const changes: Array<[string, () => void]> = [
    ['a new run', () => runs.push({ id: continueConversation(path), conv: lastRun(path).conv })],
    [
      'a copied run',
      () => {
        appendRun(path);
        runs.push(lastRun(path));
      },
    ],
    ['a step', () => appendStep(path, growable(path, runs).at(-1)!.id, () => [prompt('quarzite step of the filter test')])],
    [
      'an edit in place of an early run',
      () =>
        sql((db) =>
          db
            .prepare(`UPDATE snapshots SET messages = replace(messages, '"content": "', '"content": "Q') WHERE run_id = ?`)
            .run(runs[1]!.id),
        ),
    ],
    [
      'a run deleted',
      () => {
        const gone = runs.splice(2, 1)[0]!;
        sql((db) => {
          db.prepare('DELETE FROM snapshots WHERE run_id = ?').run(gone.id);
          db.prepare('DELETE FROM runs WHERE run_id = ?').run(gone.id);
        });
      },
    ],
    ['a VACUUM', () => sql((db) => db.exec('VACUUM'))],
    ['another new run', () => runs.push({ id: continueConversation(path), conv: lastRun(path).conv })],
  ];
  for (const [what, change] of changes) {
    change();
    sync(path, index);
    assertFilterHoldsEveryKey(index, what);
    assert.deepEqual(starts(index), builtStarts(path), `${what}: starts as a build gives them`);
    assertSameAnswers(path, index, runs, seed, 'quarzite', 'kalo', 'Qu');
  }
});

test('with no key filter kept, or a full one, a new run takes the store-wide scan, which keeps a filter of every key; the next new run reads its conversation only; answers equal --no-index', () => {
  for (const variant of ['dropped', 'full'] as const) {
    // a store whose latest run has a conversation (the new runs continue it)
    const [seed, { path, runs }] = [91, 92, 93, 94, 95, 96]
      .map((s) => [s, threadedStore(s)] as const)
      .find(([, store]) => lastRun(store.path).conv !== null)!;
    const index = join(tempDir(), 'idx.db');
    sync(path, index);
    const db = new Database(index);
    try {
      const t = new IndexTables(new SqliteIndexDb(db));
      t.beginImmediate();
      // an empty filter that says it took a billion keys: one that answered would find no key anywhere
      if (variant === 'full') {
        t.keyFilter();
        t.putKeyFilter(new KeyFilter(new Uint8Array(8192), 1e9));
      } else db.prepare('DELETE FROM pages WHERE id = 8').run();
      t.commit();
    } finally {
      db.close();
    }
    for (const round of [0, 1]) {
      runs.push({ id: continueConversation(path), conv: lastRun(path).conv });
      const r = sync(path, index);
      if (round === 0) assert.ok(r.keysRead >= runs.length, `${variant}: the store-wide scan reads every run's keys (${r.keysRead} rows)`);
      else assert.ok(r.keysRead <= runs.filter((x) => x.conv === runs.at(-1)!.conv).length, `${variant}: ${r.keysRead} runs' keys read`);
      assertFilterHoldsEveryKey(index, `${variant}, round ${round}`);
      assertSameAnswers(path, index, runs, seed, 'quarzite', 'kalo');
    }
  }
});
