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
import { appendRun, appendSnapshots, liveWriter } from '../../scripts/bench/mutations.js';
import { BIN, runCliAsync } from '../helpers/cli.js';
import { assertSameAnswers, sync } from '../helpers/index-answers.js';
import { threadedStore } from '../helpers/random-stores.js';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { tempDir, writeStore } from '../helpers/stores.js';
import { rowSum } from '../../src/sidecar/checksum.js';
import { IndexDamagedError } from '../../src/sidecar/errors.js';
import { SqliteIndexDb } from '../../src/sidecar/index-db.js';
import { INDEX_DDL } from '../../src/sidecar/schema.js';
import { type KnownRuns, type KnownRunsToWrite, IndexTables, type RunMarks } from '../../src/sidecar/tables.js';
import { changedMarks } from '../../src/sidecar/known-runs.js';
import { RunListHash, runListDigests } from '../../src/store/run-list.js';
import type { IndexMeta } from '../../src/sidecar/meta.js';
import { isCounted, OverlaidMap, type RunContent } from '../../src/store/content.js';
import type { StoreRun } from '../../src/store/reader.js';

function indexedStore(seed: number): { path: string; index: string; runs: Array<{ id: string; conv: string | null }> } {
  const { path, runs } = threadedStore(seed);
  const index = join(tempDir(), 'idx.db');
  assert.equal(sync(path, index).marksRead, 0, 'a build has no marks to read');
  return { path, index, runs };
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
  writeStore(path, 'UPDATE runs SET conversation_id = ? WHERE run_id = ?', to, moved.id);
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

test("a run's agent and conversation edited after a NUL, no snapshot touched: the index notices each edit, answers equal --no-index", () => {
  const { path, index, runs } = indexedStore(44);
  const run = runs.find((r) => r.conv !== null)!;
  // (SQLite's quote() ends a text at a NUL: a digest of quoted values saw none of these edits)
  for (const [column, value] of [
    ['agent_name', 'agent\u0000one'],
    ['agent_name', 'agent\u0000two'],
    ['conversation_id', `${run.conv}\u0000a`],
    ['conversation_id', `${run.conv}\u0000b`],
  ] as const) {
    writeStore(path, `UPDATE runs SET ${column} = ? WHERE run_id = ?`, value, run.id);
    if (column === 'conversation_id') run.conv = value;
    const r = sync(path, index);
    assert.equal(r.upToDate, false, `${column} = ${JSON.stringify(value)}: the index was updated`);
    assertSameAnswers(path, index, runs, 20);
  }
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
    () => writeStore(path, 'UPDATE runs SET conversation_id = ? WHERE run_id = ?', to, moved.id),
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

test('runListDigests hashes the run list in blocks of 256 lines: the prefix and whole digests of one hash per block, at every cut, and the same going on from kept blocks', async () => {
  const { createHash } = await import('node:crypto');
  const runs = Array.from({ length: 2500 }, (_, i) => ({
    runId: `run-${i}${i % 7 === 0 ? '\uD800' : ''}-${'y'.repeat(i % 50)}`,
    rowid: i + 1,
    conversationId: i % 3 === 0 ? null : `conv-${i % 11}`,
    parentRunId: null,
    agentName: i % 5 === 0 ? 'agent' : null,
    startedAt: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`,
  }));
  // the head, then each block of 256 lines' SHA-256, the last block as long as it is
  const line = (r: (typeof runs)[number]): string =>
    `${JSON.stringify([r.rowid, r.runId, r.conversationId, r.parentRunId, r.agentName, r.startedAt])}\n`;
  const blockDigest = (lines: string[]): Buffer => {
    const h = createHash('sha256');
    for (const l of lines) h.update(l);
    return h.digest();
  };
  const digestOf = (n: number): string => {
    const h = createHash('sha256').update('runs/json/blocks\n');
    for (let at = 0; at < n; at += 256) h.update(blockDigest(runs.slice(at, Math.min(n, at + 256)).map(line)));
    return h.digest('base64');
  };
  const fullBlocks = Buffer.concat(
    Array.from({ length: Math.floor(runs.length / 256) }, (_, b) => blockDigest(runs.slice(b * 256, (b + 1) * 256).map(line))),
  );
  const all = digestOf(runs.length);
  for (const n of [0, 1, 255, 256, 257, 999, 1700, 2499, 2500, 3000])
    assert.deepEqual(runListDigests(runs, n), { prefix: n <= runs.length ? digestOf(n) : all, all, blocks: fullBlocks }, `cut at ${n}`);
  // going on from kept blocks gives what one pass gives
  for (const kept of [0, 1, 4, 6]) {
    const h = new RunListHash(1700, fullBlocks.subarray(0, kept * 32));
    for (const r of runs.slice(kept * 256)) h.add(line(r));
    assert.deepEqual(h.finish(), runListDigests(runs, 1700), `from ${kept} kept blocks`);
  }
});

/** Ids and digests whose text a byte encoding could get wrong: Latin-1, wider chars, lone surrogates, NUL, empty, long. */
function oddRuns(n: number): KnownRunsToWrite {
  const odd = ['', 'caf\u00e9', '\u5bfe\u8a71-\u{1F600}', 'lone-\uD800', '\uDFFF', 'nul\u0000x', 'x'.repeat(5000)];
  const runs = new Map<string, { count: number; maxSeq: number; digest: string }>();
  for (let i = 0; i < n; i++) {
    const id = i < odd.length ? odd[i]! : `run-${i}-${'y'.repeat(i % 40)}`;
    runs.set(id, { count: i % 9, maxSeq: i === 3 ? Number.MAX_SAFE_INTEGER : i * 7, digest: i % 5 === 0 ? `d\u0101${i}` : `digest-${i}=` });
  }
  return { content: `content-${n}`, runList: `list-${n}`, runCount: n, runs };
}

test('the known runs row (5) gives back every id, digest, count and last seq exactly, in order; an appended run rewrites the last part of each block; row 3 of an older convsearch is not read and is dropped', () => {
  const db = new Database(':memory:');
  db.exec(INDEX_DDL);
  const t = new IndexTables(new SqliteIndexDb(db));
  const partsWritten = (): number[] =>
    db
      .prepare('SELECT id FROM pages WHERE id >= ? AND id < ? ORDER BY id')
      .pluck()
      .all(5 * 2 ** 24, 6 * 2 ** 24) as number[];
  const check = (k: KnownRunsToWrite): void => {
    const got = t.knownRuns()!;
    assert.deepEqual([got.content, got.runList, got.runCount], [k.content, k.runList, k.runCount]);
    assert.deepEqual(got.buckets, k.buckets === undefined ? undefined : Buffer.from(k.buckets), 'the bucket digests');
    const want = [...k.runs].map(([id, r]): [string, RunContent] => [id, { ...r, prefix: r.digest }]);
    assert.deepEqual([...got.runs], want);
    // every way of asking the map read (its entries are made from the row when asked for) gives the same
    assert.equal(got.runs.size, want.length);
    assert.deepEqual([...got.runs.keys()], [...k.runs.keys()]);
    assert.deepEqual([...got.runs.values()], [...want.map(([, r]) => r)]);
    const seen: Array<[string, RunContent]> = [];
    got.runs.forEach((r, id, m) => {
      assert.equal(m, got.runs);
      seen.push([id, r]);
    });
    assert.deepEqual(seen, want);
    assert.ok(isCounted(got.runs), 'it gives the count and last seq alone');
    const marks = new Float64Array(2);
    for (const [id, r] of want) {
      assert.ok(got.runs.has(id));
      assert.deepEqual(got.runs.get(id), r);
      assert.ok(got.runs.marksInto(id, marks));
      assert.deepEqual([...marks], [r.count, r.maxSeq]);
    }
    for (const id of ['absent', `${want[0]?.[0] ?? ''}\u0000`]) {
      assert.ok(!got.runs.has(id) && got.runs.get(id) === undefined && !got.runs.marksInto(id, marks), id);
    }
  };
  // an older convsearch's row 3 (JSON) is not taken for row 5
  const old = JSON.stringify({ content: 'old', runList: 'l', runCount: 0 });
  const none = Buffer.alloc(0);
  db.prepare('INSERT INTO pages (id, head, digests, sum) VALUES (3, ?, ?, ?)').run(old, none, rowSum([3, old, none]));
  assert.equal(t.knownRuns(), null);
  // wide ids (one block in UTF-16) and Latin-1 digests, across several parts, with the content's bucket digests
  const buckets = Uint8Array.from({ length: 256 * 32 }, (_, i) => (i * 31) & 0xff);
  const k = { ...oddRuns(4000), buckets };
  t.putKnownRuns(k);
  check(k);
  assert.equal(db.prepare('SELECT COUNT(*) FROM pages WHERE id = 3').pluck().get(), 0, 'row 3 is dropped');
  const before = new Map(
    db
      .prepare('SELECT id, digests FROM pages WHERE id > ? AND id < ?')
      .raw()
      .all(5 * 2 ** 24 - 1, 6 * 2 ** 24) as Array<[number, Buffer]>,
  );
  assert.ok(before.size >= 6, `${before.size} parts`);
  // one more run: the last part of each block changes, every other part keeps its bytes
  const more = { ...oddRuns(4001), buckets: buckets.map((b) => b ^ 1) };
  t.knownRuns();
  t.putKnownRuns(more, true);
  check(more);
  const changed = partsWritten().filter(
    (id) => !before.get(id)?.equals(db.prepare('SELECT digests FROM pages WHERE id = ?').pluck().get(id) as Buffer),
  );
  assert.equal(changed.length, 3, `changed parts ${changed.join(', ')}`);
  // Latin-1 only, and no runs at all
  const narrow: KnownRunsToWrite = {
    content: 'c',
    runList: 'l',
    runCount: 2,
    runs: new Map([['a\u00ff', { count: 1, maxSeq: 2, digest: 'x' }]]),
  };
  t.putKnownRuns(narrow);
  check(narrow);
  const empty: KnownRunsToWrite = { content: 'e', runList: 'l', runCount: 0, runs: new Map() };
  t.putKnownRuns(empty);
  check(empty);
});

/** Row 5 and its parts as stored: head and bytes, in id order. */
const knownRunsRows = (db: Database.Database): unknown[] =>
  db
    .prepare('SELECT id, head, digests FROM pages WHERE id = 5 OR (id >= ? AND id < ?) ORDER BY id')
    .raw()
    .all(5 * 2 ** 24, 6 * 2 ** 24);

test('known runs written over those read (entries put in place, runs added) are the very rows a layout of every run writes, without one; a run removed, a digest of another length or an id wider than the block lays every run out', () => {
  /** Runs of 44-character digests (as the content's), some ids wide when `wide`. */
  const runsOf = (n: number, wide: boolean): Map<string, RunContent> => {
    const runs = new Map<string, RunContent>();
    for (let i = 0; i < n; i++) {
      const digest = `${String(i).padStart(8, '0')}${'d'.repeat(35)}=`;
      runs.set(wide && i % 7 === 0 ? `\u5bfe\u8a71-${i}` : `run-${i}-${'y'.repeat(i % 30)}`, {
        count: i % 9,
        maxSeq: i * 7,
        digest,
        prefix: digest,
      });
    }
    return runs;
  };
  const entry = (count: number, digestChar: string): RunContent => {
    const digest = `${digestChar.repeat(43)}=`;
    return { count, maxSeq: count * 10 + 3, digest, prefix: digest };
  };
  const cases: Array<{ what: string; wide?: boolean; laidOut: boolean; changes: Array<[number | string, RunContent]>; gone?: number[] }> = [
    { what: 'one run put in place', laidOut: false, changes: [[1234, entry(50, 'a')]] },
    {
      what: 'the first and the last put in place, two added',
      laidOut: false,
      changes: [
        [0, entry(1, 'b')],
        [2999, entry(2, 'c')],
        ['new-1', entry(3, 'd')],
        ['new-2', entry(4, 'e')],
      ],
    },
    { what: 'one run added', laidOut: false, changes: [['new-run', entry(5, 'f')]] },
    {
      what: 'runs added past a part boundary of the records',
      laidOut: false,
      changes: Array.from({ length: 1400 }, (_, i): [string, RunContent] => [`more-${i}`, entry(i, 'g')]),
    },
    {
      what: 'wide ids: one put in place, one wide added',
      wide: true,
      laidOut: false,
      changes: [
        [700, entry(6, 'h')],
        ['\u5bfe-new', entry(7, 'i')],
      ],
    },
    { what: 'a run removed', laidOut: true, changes: [[5, entry(8, 'j')]], gone: [10] },
    { what: 'a digest of another length', laidOut: true, changes: [[5, { count: 1, maxSeq: 2, digest: 'short', prefix: 'short' }]] },
    { what: 'an added id wider than the Latin-1 block', laidOut: true, changes: [['\u5bfe-wide', entry(9, 'k')]] },
  ];
  for (const c of cases) {
    const db = new Database(':memory:');
    db.exec(INDEX_DDL);
    const t = new IndexTables(new SqliteIndexDb(db));
    const base = runsOf(3000, c.wide === true);
    t.putKnownRuns({ content: 'c1', runList: 'l1', runCount: 3000, runs: base });
    const read = t.knownRuns()!;
    const ids = [...read.runs.keys()];
    const changes = new Map(c.changes.map(([at, e]): [string, RunContent] => [typeof at === 'number' ? ids[at]! : at, e]));
    const overlaid = new OverlaidMap(read.runs, changes, new Set((c.gone ?? []).map((i) => ids[i]!)));
    let laidOut = 0;
    const forEach = overlaid.forEach.bind(overlaid);
    overlaid.forEach = (f, thisArg) => {
      laidOut++;
      forEach(f, thisArg);
    };
    const k: KnownRunsToWrite = { content: 'c2', runList: 'l2', runCount: overlaid.size, runs: overlaid };
    t.putKnownRuns(k, true);
    assert.equal(laidOut > 0, c.laidOut, `${c.what}: every run laid out`);
    // the same runs laid out from nothing, in another index
    const db2 = new Database(':memory:');
    db2.exec(INDEX_DDL);
    new IndexTables(new SqliteIndexDb(db2)).putKnownRuns({ ...k, runs: new Map([...overlaid]) });
    assert.deepEqual(knownRunsRows(db), knownRunsRows(db2), `${c.what}: the same rows`);
    assert.deepEqual(
      [...t.knownRuns()!.runs],
      [...overlaid].map(([id, r]) => [id, { ...r, prefix: r.digest }]),
      c.what,
    );
  }
});

test('a known runs row whose records, lengths or head do not add up is damage, never a shorter list', () => {
  const db = new Database(':memory:');
  db.exec(INDEX_DDL);
  const t = new IndexTables(new SqliteIndexDb(db));
  const k = oddRuns(50);
  const part = (p: number): Buffer =>
    db
      .prepare('SELECT digests FROM pages WHERE id = ?')
      .pluck()
      .get(5 * 2 ** 24 + p) as Buffer;
  const putPart = (p: number, bytes: Buffer): void => {
    db.prepare('UPDATE pages SET digests = ?, sum = ? WHERE id = ?').run(bytes, rowSum([5 * 2 ** 24 + p, '', bytes]), 5 * 2 ** 24 + p);
  };
  const records = (edit: (nums: Float64Array, lengths: Uint32Array) => void): void => {
    t.putKnownRuns(k);
    const bytes = Buffer.from(part(0));
    const nums = new Float64Array(bytes.buffer, bytes.byteOffset, bytes.length / 8);
    edit(nums, new Uint32Array(nums.buffer, nums.byteOffset, nums.length * 2));
    putPart(0, bytes);
    assert.throws(() => t.knownRuns(), IndexDamagedError);
  };
  records((nums) => {
    nums[3 * 10] = 1.5; // a count that is no integer
  });
  records((nums) => {
    nums[3 * 11 + 1] = 2 ** 60; // a last seq past the safe integers
  });
  records((_, lengths) => {
    lengths[6 * 12 + 4]! += 1; // an id longer than its block leaves: every later one shifted
  });
  records((_, lengths) => {
    lengths[6 * 49 + 5]! -= 1; // the last digest short: its block not used up
  });
  records((_, lengths) => {
    lengths[6 * 2 + 4] = 0; // two ids that come out the same
    lengths[6 * 3 + 4]! += '\u5bfe\u8a71-\u{1F600}'.length;
  });
  // a head whose sizes do not fit its bytes
  for (const change of [
    { runs: 1500 },
    { runs: -1 },
    { ids: { bytes: 3, wide: true } },
    { digests: { bytes: 1, wide: 'no' } },
    // bucket digests that are not 256 whole ones, or not base64
    { buckets: Buffer.alloc(255 * 32).toString('base64') },
    { buckets: 'not base64!' },
    { buckets: 7 },
  ]) {
    t.putKnownRuns(k);
    const head = { ...JSON.parse(db.prepare('SELECT head FROM pages WHERE id = 5').pluck().get() as string), ...change };
    const text = JSON.stringify(head);
    const none = Buffer.alloc(0);
    db.prepare('UPDATE pages SET head = ?, sum = ? WHERE id = 5').run(text, rowSum([5, text, none]));
    assert.throws(() => t.knownRuns(), IndexDamagedError, JSON.stringify(change));
  }
});

test('an index whose known runs are gone (as an older convsearch leaves it) reads every mark once, keeps them again, and answers equal --no-index', () => {
  const { path, index, runs } = indexedStore(46);
  const idx = new Database(index);
  const kept = idx.prepare('DELETE FROM pages WHERE id = 5 OR (id >= ? AND id < ?)').run(5 * 2 ** 24, 6 * 2 ** 24).changes;
  idx.close();
  assert.ok(kept >= 4, 'row 5 was kept with the build');
  appendRun(path);
  assert.equal(sync(path, index).marksRead, runs.length, "every run's marks");
  assertSameAnswers(path, index, runs, 50);
  appendRun(path);
  assert.equal(sync(path, index).marksRead, 0, 'vouched for again');
  assertSameAnswers(path, index, runs, 51);
});

test('random edits of every column of runs and snapshots (NULs, ties, types, rowids, deletions), by one writer a time or a live writer that checkpoints now and then: after each sync, answers equal --no-index', () => {
  const kinds = new Map<string, number>();
  // (seed, whether the edits go through one connection kept open in WAL mode, as an agent's)
  for (const [seed, live] of [
    [5, false],
    [9, false],
    [13, true],
  ] as const) {
    const { path, index, runs } = indexedStore(seed);
    const random = rng(seed * 31 + 7);
    const pick = <T>(a: readonly T[]): T => a[Math.floor(random() * a.length)]!;
    const writer = live ? liveWriter(path) : null;
    for (let round = 0; round < 25; round++) {
      const db = writer ?? new Database(path);
      if (writer !== null && random() < 0.2) writer.pragma(`wal_checkpoint(${pick(['PASSIVE', 'TRUNCATE', 'RESTART'])})`);
      const ids = db.prepare('SELECT run_id FROM runs').pluck().all() as string[];
      const seqs = db.prepare('SELECT seq FROM snapshots').pluck().all() as number[];
      const id = pick(ids);
      const seq = pick(seqs);
      const edits: Array<[kind: string, sql: string, ...params: unknown[]]> = [
        // text after a NUL: what a digest of quote()d values could not see (two edits, a sync between them)
        ['agent after a NUL', 'UPDATE runs SET agent_name = ? WHERE run_id = ?', `agent\u0000${round}`, id],
        ['agent', 'UPDATE runs SET agent_name = ? WHERE run_id = ?', pick(['', 'é', '\u{1F600}', "q'q", 'a'.repeat(600), null]), id],
        ['start tied', 'UPDATE runs SET started_at = (SELECT started_at FROM runs WHERE run_id = ?) WHERE run_id = ?', pick(ids), id],
        [
          'start',
          'UPDATE runs SET started_at = ? WHERE run_id = ?',
          pick(['2020-01-01T00:00:00Z', '2099-01-01T00:00:00Z', 'zzz', 't\u0000x']),
          id,
        ],
        ['parent', 'UPDATE runs SET parent_run_id = ? WHERE run_id = ?', pick([...ids, null, 'ghost']), id],
        ['metadata', 'UPDATE runs SET metadata = ? WHERE run_id = ?', pick(['{}', '{"a": "b"}', 'not json']), id],
        ['rowid', 'UPDATE runs SET rowid = (SELECT max(rowid) FROM runs) + ? WHERE run_id = ?', 1 + Math.floor(random() * 5), id],
        ['state', 'UPDATE snapshots SET state = ? WHERE seq = ?', pick(['interrupted', 'complete', 'Complete', 'complete\u0000x']), seq],
        ['snapshot deleted', 'DELETE FROM snapshots WHERE seq = ?', seq],
        ['step', 'UPDATE snapshots SET step_index = ? WHERE seq = ?', pick([0, 7, -1, 2.5, '3']), seq],
        [
          'timestamp',
          'UPDATE snapshots SET timestamp = ? WHERE seq = ?',
          pick(['2020-01-01T00:00:00Z', '2020-01-01T00:00:00\u0000Z', 'junk']),
          seq,
        ],
        [
          'messages of another',
          'UPDATE snapshots SET messages = (SELECT messages FROM snapshots WHERE seq = ?) WHERE seq = ?',
          pick(seqs),
          seq,
        ],
        ['messages', 'UPDATE snapshots SET messages = ? WHERE seq = ?', pick(['[', '[]', 'null']), seq],
      ];
      // every kind in turn (the rows and values it takes are drawn)
      const [kind, sql, ...params] = edits[(round + seed) % edits.length]!;
      try {
        db.prepare(sql).run(...params);
        if (kind === 'agent after a NUL') {
          // indexed with that value, then changed after the NUL only
          sync(path, index);
          db.prepare(sql).run(`agent\u0000${round}!`, id);
        }
      } finally {
        if (writer === null) db.close();
      }
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      sync(path, index);
      assertSameAnswers(path, index, runs, seed * 100 + round);
    }
    writer?.close();
  }
  assert.equal(kinds.size, 13, `kinds met: ${[...kinds.keys()].join(', ')}`);
});

test('content read over the kept entries: only the runs laid over them are compared, and the marks looked up are those a comparison of every settled run gives', () => {
  /** A map that counts the entries asked of it. */
  class Counted extends Map<string, RunContent> {
    gets = 0;
    override get(key: string): RunContent | undefined {
      this.gets++;
      return super.get(key);
    }
  }
  const entry = (i: number, d = 'd'): RunContent => ({ count: i, maxSeq: i, digest: `${d}${i}`, prefix: `${d}${i}` });
  const kept = new Counted();
  for (let i = 0; i < 1000; i++) kept.set(`r${i}`, entry(i));
  const runs: StoreRun[] = [...kept.keys(), 'new'].map((runId, i) => ({
    runId,
    rowid: i + 1,
    conversationId: null,
    parentRunId: null,
    agentName: null,
    startedAt: `2026-01-01T00:00:${String(i).padStart(4, '0')}`,
  }));
  const listed = runListDigests(runs, 1000).prefix;
  const known: KnownRuns = { content: 'c', runList: listed, runCount: 1000, runs: kept };
  const media: RunContent = { count: 0, maxSeq: 0, digest: 'm', prefix: 'm' };
  const meta = { content: 'c', runCount: 1000, mediaDigest: 'm', mediaCount: 0 } as IndexMeta;
  // r5 changed, r7 read again with the same entry, r9 lost its rows, `new` follows the settled runs
  const overlay = new OverlaidMap<string, RunContent>(
    kept,
    new Map([
      ['r5', entry(5, 'x')],
      ['r7', entry(7)],
      ['new', entry(1)],
    ]),
    new Set(['r9']),
  );
  // every run the index placed has marks
  const t = { marksOf: (id: string) => ({ run_id: id }) as RunMarks } as unknown as IndexTables;
  const over = changedMarks(t, known, meta, runs, listed, { runs: overlay, media, runsTable: '', digest: 'd', pages: null });
  assert.deepEqual(over?.rows.map((m) => m.run_id).sort(), ['new', 'r5', 'r9']);
  assert.equal(over?.settled, 1000);
  assert.ok(kept.gets < 10, `${kept.gets} kept entries asked for`);
  // the same content as a map of its own: every settled run compared, the same marks
  kept.gets = 0;
  const copy = changedMarks(t, known, meta, runs, listed, { runs: new Map(overlay), media, runsTable: '', digest: 'd', pages: null });
  assert.deepEqual(copy?.rows.map((m) => m.run_id).sort(), ['new', 'r5', 'r9']);
  assert.ok(kept.gets >= 1000);
});
