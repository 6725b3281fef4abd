/**
 * The page map's hashing pass shared with a helper thread (page-hash.ts): the map is the same whoever
 * hashed which chunk, a chunk the helper has not published is taken back and hashed by the main thread,
 * and nothing the helper finishes after that is written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync, writeSync } from 'node:fs';
import { type HashJob, hashAll, helpHash, newHashJob } from '../../../src/store/sqlite/page-hash.js';
import { ChunkedWords, type PageTree, treeValues } from '../../../src/store/content.js';
import {
  cellDigest,
  coreToSpare,
  type HelperPolicy,
  type PageMap,
  prestartPageHashing,
  ROW_CHANGED,
  readPageMap,
  RunTally,
} from '../../../src/store/sqlite/pages.js';
import { draws } from '../../helpers/draws.js';
import { ALONE, SHARED } from '../../helpers/page-hashing.js';
import { threadedStore } from '../../helpers/random-stores.js';
import { Worker } from 'node:worker_threads';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';

function layout(path: string): { root: number; runIdColumn: number } {
  const db = new Database(path, { readonly: true });
  try {
    const root = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'snapshots'").pluck().get() as number;
    const cols = db.prepare("SELECT name FROM pragma_table_info('snapshots') ORDER BY cid").pluck().all() as string[];
    return { root, runIdColumn: cols.indexOf('run_id') };
  } finally {
    db.close();
  }
}

test('a helper thread hashing a share of the chunks gives the map this thread alone gives', () => {
  // more than one chunk of 1 MiB, so that both threads have some to claim
  const { path } = threadedStore(41, 90);
  assert.ok(statSync(path).size > 2 << 20, `store of ${statSync(path).size} bytes`);
  const { root, runIdColumn } = layout(path);
  const alone = readPageMap(path, root, runIdColumn, 1234, null, ALONE);
  const shared = readPageMap(path, root, runIdColumn, 1234, null, SHARED);
  assert.ok(alone !== null && shared !== null);
  assert.deepEqual(Buffer.from(shared.digests.buffer), Buffer.from(alone.digests.buffer));
  assert.deepEqual(shared.runs, alone.runs);
  // another key: other digests
  assert.notDeepEqual(
    Buffer.from(readPageMap(path, root, runIdColumn, 1235, null, SHARED)!.digests.buffer),
    Buffer.from(alone.digests.buffer),
  );
});

const WORKER = new URL('../../../src/store/sqlite/page-hash-worker.js', import.meta.url);

/** A helper alone over a store's file (`run` starts it with the job and waits for its end): every chunk published, as this thread hashes it. */
async function helperAlone(storeSeed: number, run: (job: HashJob) => Promise<unknown>): Promise<void> {
  const { path } = threadedStore(storeSeed, 90);
  const fd = openSync(path, 'r');
  try {
    const pages = statSync(path).size / 4096;
    const mine = newHashJob(fd, 4096, pages, 99);
    assert.equal(hashAll(mine, 10), true);
    const theirs = newHashJob(fd, 4096, pages, 99);
    await run(theirs);
    const slots = new Int32Array(theirs.state).subarray(2);
    assert.ok(slots.length > 1);
    assert.deepEqual(
      [...slots],
      Array.from(slots, () => 2),
      'every chunk published by the helper',
    );
    assert.deepEqual(Buffer.from(theirs.digests), Buffer.from(mine.digests));
    assert.deepEqual(Buffer.from(theirs.next), Buffer.from(mine.next));
  } finally {
    closeSync(fd);
  }
}

test('the helper thread alone hashes and publishes every chunk as this thread does', async () => {
  await helperAlone(43, (job) => {
    const helper = new Worker(WORKER, { workerData: { job } });
    return new Promise((resolve) => helper.once('exit', resolve));
  });
});

test('chunks the helper claimed and never published are taken back and hashed here; what it publishes late is dropped', () => {
  const { path } = threadedStore(42, 90);
  const fd = openSync(path, 'r');
  try {
    const pages = statSync(path).size / 4096;
    const whole = newHashJob(fd, 4096, pages, 7);
    assert.equal(hashAll(whole, 10), true);
    const job = newHashJob(fd, 4096, pages, 7);
    const state = new Int32Array(job.state);
    // a helper that claimed the first two chunks and stalled (descheduled, or failed)
    Atomics.add(state, 0, 2);
    assert.equal(hashAll(job, 10), true);
    assert.deepEqual(Buffer.from(job.digests), Buffer.from(whole.digests), 'taken back and hashed here');
    assert.deepEqual([state[2], state[3]], [3, 3], 'marked as taken back');
    // the stalled helper wakes up: it finds its chunks taken back and publishes nothing more
    const late = newHashJob(fd, 4096, pages, 8);
    const lateState = new Int32Array(late.state);
    lateState.set(state);
    Atomics.store(lateState, 0, 0);
    Atomics.store(lateState, 1, 0);
    helpHash(late);
    assert.equal(
      Buffer.from(late.digests)
        .subarray(0, 2 * 256 * 16)
        .every((b) => b === 0),
      true,
      'nothing written into taken-back chunks',
    );
    // a helper stopped in the middle of copying a chunk in: no map is vouched for
    const stuck = newHashJob(fd, 4096, pages, 7);
    const stuckState = new Int32Array(stuck.state);
    Atomics.add(stuckState, 0, 1);
    Atomics.store(stuckState, 2, 1);
    assert.equal(hashAll(stuck, 10), false);
  } finally {
    closeSync(fd);
  }
});

/** The helper's exit code; a helper still running after `ms` is stopped and the test fails. */
function exitWithin(helper: Worker, ms: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const late = setTimeout(() => {
      void helper.terminate();
      reject(new Error(`the helper was still running after ${ms} ms`));
    }, ms);
    helper.once('exit', (code) => {
      clearTimeout(late);
      resolve(code);
    });
  });
}

test('a helper started ahead of the pass takes its job as a message and publishes every chunk', async () => {
  await helperAlone(44, async (job) => {
    const helper = new Worker(WORKER, { workerData: { waitMs: 60_000 } });
    const exited = exitWithin(helper, 15_000);
    await new Promise((resolve) => helper.once('online', resolve));
    helper.postMessage(job);
    await exited;
  });
});

test('a helper started ahead that is given no job ends by itself', async () => {
  assert.equal(await exitWithin(new Worker(WORKER, { workerData: { waitMs: 50 } }), 10_000), 0);
});

test('a core is spare when the tasks runnable now (this one among them) leave one besides one for V8, whatever the minute average says', () => {
  assert.equal(coreToSpare('3.90 2.10 1.50 1/131 4330', 3), true);
  assert.equal(coreToSpare('0.10 0.20 0.30 2/131 4330', 3), false);
  assert.equal(coreToSpare('0.10 0.20 0.30 6/131 4330', 8), true);
  assert.equal(coreToSpare('0.10 0.20 0.30 7/131 4330', 8), false);
  // two CPUs: this thread's and V8's, none for a helper however idle the machine
  assert.equal(coreToSpare('0.00 0.00 0.00 1/131 4330', 2), false);
});

/** The threads of this process now (Linux), by id: a worker thread is one more. */
const threads = (): Set<string> => new Set(readdirSync('/proc/self/task'));
const started = (before: Set<string>): string[] => [...threads()].filter((t) => !before.has(t));

test('no helper thread starts, ahead or at the pass, when no core is spare; one started ahead when one is, and the map is the one this thread alone gives', () => {
  const { path } = threadedStore(46, 90);
  const { root, runIdColumn } = layout(path);
  const busy: HelperPolicy = { bytes: 0, spare: () => false };
  let before = threads();
  prestartPageHashing(Infinity, busy);
  const alone = readPageMap(path, root, runIdColumn, 4321, null, busy);
  assert.deepEqual(started(before), []);
  before = threads();
  prestartPageHashing(Infinity, SHARED);
  assert.equal(started(before).length, 1, 'a helper thread started ahead');
  const shared = readPageMap(path, root, runIdColumn, 4321, null, SHARED);
  assert.ok(alone !== null && shared !== null);
  assert.deepEqual(Buffer.from(shared.digests.buffer), Buffer.from(alone.digests.buffer));
  assert.deepEqual(shared.runs, alone.runs);
});

/** A tree as one array of values (its pieces joined), to be compared. */
const flatTree = (tree: PageTree): { runIds: readonly string[]; values: Float64Array } => ({
  runIds: tree.runIds,
  values: treeValues(tree),
});

/** `words` cut into chunks of 2^shift (as the index hands a previous map over, part by part). */
function inChunks<T extends Uint32Array | Float64Array>(words: T, shift: number): ChunkedWords<T> {
  const chunks: T[] = [];
  for (let i = 0; i < words.length; i += 2 ** shift) chunks.push(words.subarray(i, i + 2 ** shift) as T);
  return new ChunkedWords(chunks, shift);
}

test('chunked words read as the one array they cut: at() and copies across chunk boundaries; chunks of unequal sizes are refused', () => {
  const all = Float64Array.from({ length: 37 }, (_, i) => i * 1.5);
  for (const shift of [0, 2, 3, 6]) {
    const c = inChunks(all, shift);
    assert.equal(c.length, 37);
    assert.deepEqual(
      Array.from({ length: 37 }, (_, i) => c.at(i)),
      [...all],
      `shift ${shift}`,
    );
    for (const [from, to] of [
      [0, 37],
      [3, 29],
      [8, 16],
      [5, 5],
      [36, 37],
    ] as const) {
      const into = new Float64Array(to - from + 2);
      c.copyTo(into, 1, from, to);
      assert.deepEqual([...into.subarray(1, 1 + to - from)], [...all.subarray(from, to)], `shift ${shift}: ${from}..${to}`);
      assert.equal(into[0], 0);
    }
  }
  assert.deepEqual([...ChunkedWords.of(all).chunks], [all]);
  assert.throws(() => new ChunkedWords([all.subarray(0, 4), all.subarray(4, 7), all.subarray(7, 9)], 2), RangeError);
});

/**
 * A page tree's values (per page: page, kind, n, then n children or n cells of CELL values, the last a
 * cell's digest) with every cell digest put to `as` (a first map's, -1), and those that were given (not -1) apart.
 */
function cellDigestsApart(values: Float64Array, as = -1): { values: Float64Array; given: Map<number, number> } {
  const out = values.slice();
  const given = new Map<number, number>();
  for (let i = 0; i < out.length; ) {
    const n = out[i + 2]!;
    if (out[i + 1] !== 1) {
      i += 3 + n;
      continue;
    }
    for (let c = i + 3; c < i + 3 + n * 5; c += 5) {
      if (out[c + 4] !== -1) given.set(out[c + 1]!, out[c + 4]!);
      out[c + 4] = as;
    }
    i += 3 + n * 5;
  }
  return { values: out, given };
}

test("a table's walk kept with the previous map is taken as it is while every page it met keeps its digest (a step appended), and walked anew otherwise (a run added, a byte of a runs page changed, another root), to the fingerprint a walk from nothing gives", () => {
  const { path } = threadedStore(49, 60);
  const { root, runIdColumn } = layout(path);
  const runsRoot = (): number => {
    const db = new Database(path, { readonly: true });
    try {
      return db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'runs'").pluck().get() as number;
    } finally {
      db.close();
    }
  };
  const map = (previous: PageMap | null, runs = previous?.runsTable ?? null): PageMap => {
    const m = readPageMap(
      path,
      root,
      runIdColumn,
      99,
      previous && { digests: previous.digests, tree: previous.tree },
      ALONE,
      null,
      null,
      null,
      runsRoot(),
      previous && { media: null, runs },
    );
    assert.ok(m !== null && m.runsTable !== null);
    return m;
  };
  const fresh = (): PageMap => map(null);
  const write = (sql: string): void => {
    const db = new Database(path);
    db.exec(sql);
    db.close();
  };
  // runs with no snapshots, enough for a runs table of several pages
  write(
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) SELECT 'filler-' || i, NULL, NULL, 'agent', '{}', '2020-01-01' FROM n",
  );
  const first = fresh();
  assert.ok(first.runsTable!.pages.length > 2, `a runs table of ${first.runsTable!.pages.length} pages`);
  // a step: the runs table's pages keep their digests
  write(
    'INSERT INTO snapshots (run_id, step_index, conversation_id, timestamp, state, messages) SELECT run_id, step_index + 1, conversation_id, timestamp, state, messages FROM snapshots ORDER BY seq DESC LIMIT 1',
  );
  const step = map(first);
  assert.equal(step.runsTable, first.runsTable, 'after a step: the walk kept is taken as it is');
  assert.deepEqual(step.runsTable, fresh().runsTable, 'after a step: the walk a map from nothing takes');
  // a run added: its page changed
  write(
    "INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) VALUES ('run-new', NULL, NULL, NULL, '{}', '2030-01-01')",
  );
  const added = map(step);
  assert.notEqual(added.runsTable, step.runsTable);
  assert.notEqual(added.runsTable!.walked, step.runsTable!.walked, 'a run added: another fingerprint');
  assert.deepEqual(added.runsTable, fresh().runsTable, 'a run added: the walk a map from nothing takes');
  // the last byte of the runs table's last page (the end of a row's text), changed in place
  const pageSize = readFileSync(path).readUInt16BE(16);
  const last = added.runsTable!.pages[added.runsTable!.pages.length - 1]!;
  const fd = openSync(path, 'r+');
  const byte = Buffer.alloc(1);
  readSync(fd, byte, 0, 1, last * pageSize - 1);
  byte[0] = byte[0]! ^ 0x01;
  writeSync(fd, byte, 0, 1, last * pageSize - 1);
  closeSync(fd);
  const patched = map(added);
  assert.notEqual(patched.runsTable!.walked, added.runsTable!.walked, 'a byte changed: another fingerprint');
  assert.deepEqual(patched.runsTable, fresh().runsTable, 'a byte changed: the walk a map from nothing takes');
  // a walk kept of another root, or read with another usable size (the header's reserved bytes), is not taken
  for (const other of [{ root: patched.runsTable!.root + 1 }, { usable: patched.runsTable!.usable - 20 }]) {
    const again = map(patched, { ...patched.runsTable!, ...other });
    assert.notEqual(again.runsTable, patched.runsTable, JSON.stringify(other));
    assert.deepEqual(again.runsTable, patched.runsTable, JSON.stringify(other));
  }
});

test("a table's walk meets every page SQLite holds the table in: rows whole on their leaf, at the edge of overflowing, and spilling over one or more overflow pages", () => {
  const { path } = threadedStore(51, 20);
  const { root, runIdColumn } = layout(path);
  const db = new Database(path);
  const usable = db.pragma('page_size', { simple: true }) as number; // (no bytes reserved)
  // metadata of sizes around the largest payload a leaf cell keeps whole (usable - 35), and far past it
  const sizes = [0, 10, usable - 120, usable - 80, usable - 75, usable - 70, usable - 60, usable, 2 * usable, 5 * usable + 7, 300];
  const put = db.prepare(
    "INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) VALUES (?, NULL, NULL, 'agent', ?, '2020-01-01')",
  );
  for (let round = 0; round < 6; round++) for (const [i, n] of sizes.entries()) put.run(`sized-${round}-${i}`, `{"m":"${'x'.repeat(n)}"}`);
  const pagesOf = (name: string): number[] =>
    (db.prepare('SELECT pageno FROM dbstat WHERE name = ? ORDER BY pageno').pluck().all(name) as number[]).sort((a, b) => a - b);
  const held = pagesOf('runs');
  const runsRoot = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'runs'").pluck().get() as number;
  const kinds = db.prepare("SELECT pagetype, COUNT(*) FROM dbstat WHERE name = 'runs' GROUP BY pagetype").raw().all() as Array<
    [string, number]
  >;
  db.close();
  assert.ok(
    kinds.some(([k]) => k === 'overflow'),
    JSON.stringify(kinds),
  );
  const map = readPageMap(path, root, runIdColumn, 7, null, ALONE, null, null, null, runsRoot);
  assert.ok(map?.runsTable, 'the runs table is walked');
  assert.deepEqual(
    [...map.runsTable.pages].sort((a, b) => a - b),
    held,
  );
});

test("a map taken with the previous one keeps the leading chunks of its tree that held still, as they are (not copied): with nothing changed all, after an append all but the right edge's, after an edit of the first leaf none; either way the tree is the one taken from nothing", () => {
  const { path } = threadedStore(48, 60);
  const { root, runIdColumn } = layout(path);
  const first = readPageMap(path, root, runIdColumn, 99, null, ALONE)!;
  /** A map taken now with `previous`'s tree in chunks of 16 values (as the index hands it over, in parts), and how many of them it kept. */
  const next = (previous: PageMap, what: string): { map: PageMap; kept: number; chunks: number } => {
    const chunks = inChunks(treeValues(previous.tree), 4);
    const map = readPageMap(
      path,
      root,
      runIdColumn,
      99,
      { digests: previous.digests, tree: { runIds: previous.tree.runIds, values: chunks } },
      ALONE,
    )!;
    const fresh = readPageMap(path, root, runIdColumn, 99, null, ALONE)!;
    assert.ok(map !== null && fresh !== null, what);
    // (a first map digests its last leaf's cells only: compared without the cells' digests)
    assert.deepEqual(
      cellDigestsApart(treeValues(map.tree)).values,
      cellDigestsApart(treeValues(fresh.tree)).values,
      `${what}: the tree taken from nothing`,
    );
    assert.deepEqual(map.tree.runIds, fresh.tree.runIds, what);
    let kept = 0;
    while (kept < map.tree.pieces.length && map.tree.pieces[kept] === chunks.chunks[kept]) kept++;
    return { map, kept, chunks: chunks.chunks.length };
  };
  const same = next(first, 'nothing changed');
  assert.equal(same.kept, same.chunks, 'nothing changed: every chunk kept');
  const db = new Database(path);
  const last = db.prepare('SELECT run_id FROM snapshots ORDER BY seq DESC LIMIT 1').pluck().get() as string;
  db.prepare(
    'INSERT INTO snapshots (run_id, step_index, conversation_id, timestamp, state, messages) SELECT run_id, step_index + 1, conversation_id, timestamp, state, messages FROM snapshots WHERE run_id = ? ORDER BY seq DESC LIMIT 1',
  ).run(last);
  db.close();
  const appended = next(first, 'append');
  assert.ok(appended.chunks > 40, `a tree of ${appended.chunks} chunks`);
  // the append rewrote the last leaf and the interior pages above it, which end the tree (its post-order):
  // every chunk before the last leaf's entry is kept
  const values = treeValues(first.tree);
  let lastLeafAt = -1;
  for (let i = 0; i < values.length; i += 3 + values[i + 2]! * (values[i + 1] === 1 ? 5 : 1)) if (values[i + 1] === 1) lastLeafAt = i;
  assert.ok(lastLeafAt > values.length / 2);
  assert.ok(
    appended.kept >= Math.floor(lastLeafAt / 16),
    `after an append: ${appended.kept} of ${appended.chunks} chunks kept, the last leaf's entry at ${lastLeafAt}`,
  );
  assert.ok(appended.kept < appended.chunks, 'the chunks of the right edge are written anew');
  const db2 = new Database(path);
  db2.prepare("UPDATE snapshots SET messages = replace(messages, 'a', 'b') WHERE seq = (SELECT MIN(seq) FROM snapshots)").run();
  db2.close();
  assert.equal(next(appended.map, 'an edit of the first leaf').kept, 0, 'after an edit of the first leaf: no chunk kept');
});

test('a map taken with the previous one (unchanged leaves copied from its tree) is the map taken from nothing: after an append, an in-place edit, a deletion, every row of a run deleted (each later run renumbered)', () => {
  const { path } = threadedStore(47, 60);
  const { root, runIdColumn } = layout(path);
  let previous = readPageMap(path, root, runIdColumn, 99, null, ALONE)!;
  const edits: Array<[string, (db: Database.Database) => string]> = [
    [
      'append',
      (db) => {
        const last = db.prepare('SELECT run_id FROM snapshots ORDER BY seq DESC LIMIT 1').pluck().get() as string;
        db.prepare(
          'INSERT INTO snapshots (run_id, step_index, conversation_id, timestamp, state, messages) SELECT run_id, step_index + 1, conversation_id, timestamp, state, messages FROM snapshots WHERE run_id = ? ORDER BY seq DESC LIMIT 1',
        ).run(last);
        return last;
      },
    ],
    [
      'in-place edit',
      (db) => {
        const r = db.prepare('SELECT seq, run_id FROM snapshots ORDER BY seq LIMIT 1 OFFSET 7').get() as { seq: number; run_id: string };
        db.prepare("UPDATE snapshots SET messages = replace(messages, 'a', 'b') WHERE seq = ?").run(r.seq);
        return r.run_id;
      },
    ],
    [
      'deletion',
      (db) => {
        const r = db.prepare('SELECT seq, run_id FROM snapshots ORDER BY seq LIMIT 1 OFFSET 3').get() as { seq: number; run_id: string };
        db.prepare('DELETE FROM snapshots WHERE seq = ?').run(r.seq);
        return r.run_id;
      },
    ],
    [
      // the first run met gone: every later run numbered one less than in the previous tree
      'the first run deleted',
      (db) => {
        const first = db.prepare('SELECT run_id FROM snapshots ORDER BY seq LIMIT 1').pluck().get() as string;
        db.prepare('DELETE FROM snapshots WHERE run_id = ?').run(first);
        return db.prepare('SELECT run_id FROM snapshots ORDER BY seq LIMIT 1').pluck().get() as string;
      },
    ],
  ];
  for (const [what, edit] of edits) {
    const db = new Database(path);
    const touched = edit(db);
    db.close();
    const fresh = readPageMap(path, root, runIdColumn, 99, null, ALONE)!;
    const next = readPageMap(path, root, runIdColumn, 99, previous, ALONE)!;
    // every leaf decoded with an empty previous tree: each cell's digest from the bytes it has now
    const digested = readPageMap(
      path,
      root,
      runIdColumn,
      99,
      { digests: new Uint32Array(0), tree: { runIds: [], pieces: [new Float64Array(0)] } },
      ALONE,
    )!;
    assert.ok(fresh !== null && next !== null && digested !== null, what);
    // the same tree but for the cells' digests: a first map digests its last leaf's (where rows are
    // appended), a later one those it decodes, and those it copies are still the digests of the cells' bytes now
    const apart = cellDigestsApart(treeValues(next.tree));
    const first = cellDigestsApart(treeValues(fresh.tree));
    assert.deepEqual(
      { runIds: next.tree.runIds, values: apart.values },
      { runIds: fresh.tree.runIds, values: first.values },
      `${what}: the same tree`,
    );
    assert.deepEqual(cellDigestsApart(treeValues(digested.tree)).values, first.values);
    assert.ok(apart.given.size > 0, `${what}: the cells decoded are digested`);
    const now = cellDigestsApart(treeValues(digested.tree)).given;
    for (const [seq, d] of apart.given) assert.equal(d, now.get(seq), `${what}: the digest of the cell of row ${seq}`);
    const lastSeqs = [...now.keys()].sort((x, y) => x - y).slice(-first.given.size);
    assert.ok(first.given.size > 0, `${what}: a first map digests its last leaf's cells`);
    assert.deepEqual(
      [...first.given].sort((x, y) => x[0] - y[0]),
      lastSeqs.map((seq) => [seq, now.get(seq)]),
      `${what}: a first map's digests are those of the last rows' cells, the bytes they have now`,
    );
    assert.deepEqual(Buffer.from(next.digests.buffer), Buffer.from(fresh.digests.buffer), `${what}: the same digests`);
    assert.deepEqual([next.runs.ids, next.runs.counts, next.runs.maxSeqs], [fresh.runs.ids, fresh.runs.counts, fresh.runs.maxSeqs], what);
    // the previous map in small chunks (a page's digests each; a page's entry in the tree cut across
    // chunks), as the index hands it over in parts: the very same map
    const fromChunks = readPageMap(
      path,
      root,
      runIdColumn,
      99,
      {
        digests: inChunks(previous.digests, 2),
        tree: previous.tree && { runIds: previous.tree.runIds, values: inChunks(treeValues(previous.tree), 3) },
      },
      ALONE,
    )!;
    assert.deepEqual(flatTree(fromChunks.tree), flatTree(next.tree), `${what}: the same tree from chunks`);
    assert.deepEqual(Buffer.from(fromChunks.digests.buffer), Buffer.from(next.digests.buffer), `${what}: the same digests from chunks`);
    assert.deepEqual(fromChunks.runs, next.runs, `${what}: the same runs, the same marked changed, from chunks`);
    const changed = next.runs.ids.filter((_, i) => next.runs.changed[i]);
    assert.ok(changed.includes(touched), `${what}: the run touched is marked changed`);
    // the rows an append or an edit wrote are marked in their run
    if (what === 'append' || what === 'in-place edit') {
      const i = next.runs.ids.indexOf(touched);
      assert.equal(next.runs.changed[i]! & ROW_CHANGED, ROW_CHANGED, what);
    }
    assert.ok(changed.length < next.runs.ids.length / 2, `${what}: ${changed.length} of ${next.runs.ids.length} runs marked changed`);
    previous = next;
  }
});

/** The table hash RunTally keys its slots by (FNV-1a over UTF-16 units), to craft ids that collide. */
function fnv(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h;
}

/** Numbers a Map gives the ids, in the order first met (what RunTally must give). */
function firstMet(ids: readonly string[]): number[] {
  const m = new Map<string, number>();
  return ids.map((id) => {
    let i = m.get(id);
    if (i === undefined) m.set(id, (i = m.size));
    return i;
  });
}

test('run numbers are the order the runs were first met, whatever the table does: grown several times, and ids made to pile up on one slot', () => {
  // many ids, each met twice, in the order of their hashes: the table (2,048 slots at first) doubles five times
  const ids = Array.from({ length: 20_000 }, (_, i) => `run-${i.toString(36)}-${'é'.repeat(i % 3)}`);
  const met = [...ids, ...ids].sort((a, b) => fnv(a) - fnv(b) || (a < b ? -1 : 1));
  const tally = new RunTally(1);
  assert.deepEqual(
    met.map((id) => tally.indexOf(id)),
    firstMet(met),
  );
  assert.deepEqual(tally.ids, [...new Set(met)]);
  // 200 ids whose hashes share their low 12 bits: past 64 probes the table gives way to a Map, same numbers
  const clash: string[] = [];
  const home = fnv('x') & 4095;
  while (clash.length < 200) {
    const id = randomBytes(6).toString('base64');
    if ((fnv(id) & 4095) === home) clash.push(id);
  }
  const piled = new RunTally(1000);
  const order = [...clash, 'plain', ...clash.slice(0, 50), 'other', 'plain'];
  assert.deepEqual(
    order.map((id) => piled.indexOf(id)),
    firstMet(order),
  );
  // the tallies follow the numbers, grown with them
  const runs = tally.runs();
  assert.equal(runs.counts.length, 20_000);
  assert.equal(runs.changed.length, 20_000);
  assert.deepEqual(piled.runs().ids, [...new Set(order)]);
});

test("cellDigest: a cell's bytes and the key both count, a byte changed anywhere (or one more) gives another digest, and it is a safe integer", () => {
  const random = draws(5);
  for (let trial = 0; trial < 200; trial++) {
    const page = Buffer.from(Array.from({ length: 64 + random(4000) }, () => random(256)));
    const from = random(16);
    const to = from + 1 + random(page.length - from - 1);
    const d = cellDigest(page, from, to, 7);
    assert.ok(Number.isSafeInteger(d) && d >= 0);
    assert.equal(cellDigest(Buffer.concat([Buffer.alloc(5), page]), from + 5, to + 5, 7), d, 'where the cell lies does not count');
    assert.notEqual(cellDigest(page, from, to, 8), d, 'the key counts');
    const at = from + random(to - from);
    const edited = Buffer.from(page);
    edited[at] = (edited[at]! + 1 + random(255)) & 0xff;
    assert.notEqual(cellDigest(edited, from, to, 7), d, `trial ${trial}: byte ${at - from} of ${to - from}`);
    if (to < page.length) assert.notEqual(cellDigest(page, from, to + 1, 7), d, 'a byte more');
  }
});
