/**
 * Issue 21: postings merges follow what changed. Past MAX_SEGMENTS live segments an update merges the
 * segments written since the base into one (the base's rows are neither read nor rewritten), and
 * rewrites the base only once those grow comparable to it. Many consecutive updates (appends, an edit,
 * a deletion) keep every answer that of `--no-index` through both kinds of merge.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { assertSameAnswers, patchFile, sync } from '../helpers/index-answers.js';
import { assertListedFromIndex } from '../helpers/run-listing.js';
import { randomOptions, writeRun } from '../helpers/random-stores.js';
import { addRawSnapshot, searchReader, tempDir } from '../helpers/stores.js';
import { IndexDamagedError } from '../../src/sidecar/errors.js';
import { SqliteIndexDb, type IndexStatement } from '../../src/sidecar/index-db.js';
import { readIndexMeta } from '../../src/sidecar/meta.js';
import { merge } from '../../src/sidecar/segments.js';
import { IndexTables, POSTING_IDS_A_STATEMENT, TERM_BUCKETS, TIER_PARTS } from '../../src/sidecar/tables.js';
import { searchJson } from '../../src/output/json.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';

type Runs = Array<{ id: string; conv: string | null }>;

/**
 * A store of `count` small random runs in 10 conversations (run 2 holds the word `zzedithere`), and
 * `add`, which appends the next of `extra` more runs, written ahead into a donor store and copied over.
 */
function store(count: number, extra: number, seed: number): { path: string; runs: Runs; add: () => void } {
  const random = rng(seed);
  const dir = tempDir();
  const path = join(dir, 'sessions.db');
  const donor = join(dir, 'donor.db');
  const all: Runs = [];
  const w = new StepStoreWriter(donor);
  try {
    let clock = Date.UTC(2026, 0, 1);
    for (let i = 0; i < count + extra; i++) {
      const id = `run-${i}`;
      const conv = i % 7 === 0 ? null : `conv-${i % 10}`;
      clock += 60_000;
      writeRun(w, random, id, conv, new Date(clock));
      if (i === 2)
        addRawSnapshot(w, id, '[{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "zzedithere"}]}]', { stepIndex: 50 });
      all.push({ id, conv });
    }
  } finally {
    w.close();
  }
  copyFileSync(donor, path);
  const db = new Database(path);
  for (const r of all.slice(count)) {
    db.prepare('DELETE FROM snapshots WHERE run_id = ?').run(r.id);
    db.prepare('DELETE FROM runs WHERE run_id = ?').run(r.id);
  }
  db.close();
  const runs = all.slice(0, count);
  const add = (): void => {
    const next = all[count++]!;
    const db = new Database(path);
    db.prepare('ATTACH DATABASE ? AS donor').run(donor);
    db.prepare('INSERT INTO runs SELECT * FROM donor.runs WHERE run_id = ?').run(next.id);
    db.prepare('INSERT INTO snapshots SELECT * FROM donor.snapshots WHERE run_id = ? ORDER BY seq').run(next.id);
    db.close();
    runs.push(next);
  };
  return { path, runs, add };
}

/** Every postings row of the index: id, its segment and its bytes. */
function postings(index: string): Map<number, { seg: number; data: Buffer }> {
  const db = new Database(index, { readonly: true });
  try {
    const rows = db.prepare('SELECT id, seg, data FROM postings').all() as Array<{ id: number; seg: number; data: Buffer }>;
    return new Map(rows.map((r) => [r.id, { seg: r.seg, data: r.data }]));
  } finally {
    db.close();
  }
}

/** Every entry of the term directory: the main buckets', then each tier segment's own directory's. */
function directory(t: IndexTables): Array<[term: string, ids: number[]]> {
  const out: Array<[string, number[]]> = [];
  for (let b = 0; b < TERM_BUCKETS; b++) out.push(...t.bucket(b));
  for (const seg of readIndexMeta(t.readMeta()).tierSegments) out.push(...t.tierDirectory(seg));
  return out;
}

/** The ids the term directory lists against the postings rows there are (a merge leaves neither a row unlisted nor a listed id without its row). */
function directoryAndRows(index: string): { listed: number[]; rows: number[] } {
  const db = new Database(index, { readonly: true });
  try {
    const t = new IndexTables(new SqliteIndexDb(db));
    const listed: number[] = [];
    for (const [, ids] of directory(t)) listed.push(...ids);
    const rows = db.prepare('SELECT id FROM postings ORDER BY id').pluck().all() as number[];
    return { listed: listed.sort((a, b) => a - b), rows };
  } finally {
    db.close();
  }
}

test('forty updates (appends, an in-place edit, a deletion): every answer is that of --no-index, through tier and base merges', () => {
  const { path, runs, add } = store(30, 40, 2101);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  assertSameAnswers(path, index, runs, 0, 'zzedithere');
  let tierMerges = 0;
  let baseMerges = 0;
  for (let i = 0; i < 40; i++) {
    if (i === 13) {
      patchFile(path, 'zzedithere', 'zzeditdone');
    } else if (i === 27) {
      const db = new Database(path);
      db.prepare('DELETE FROM snapshots WHERE run_id = ?').run('run-5');
      db.prepare('DELETE FROM runs WHERE run_id = ?').run('run-5');
      db.close();
      runs.splice(
        runs.findIndex((r) => r.id === 'run-5'),
        1,
      );
    } else {
      add();
    }
    const report = sync(path, index);
    if (report.merged) tierMerges++;
    if (report.compacted) {
      baseMerges++;
      // a base merge deletes every row it read at its end, in one statement: exactly the merged rows stay
      const { listed, rows } = directoryAndRows(index);
      assert.deepEqual(rows, listed, `update ${i + 1}: postings rows against the term directory`);
    }
    assertSameAnswers(path, index, runs, i + 1, 'zzedithere', 'zzeditdone');
  }
  assertListedFromIndex(path, index, 'forty updates');
  assert.ok(tierMerges >= 1, `${tierMerges} tier merges`);
  assert.ok(baseMerges >= 1, `${baseMerges} base merges`);
});

test('a merge after a few small appends leaves every postings row of the base as it was', () => {
  const { path, add } = store(80, 10, 2102);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  const base = postings(index);
  // one segment per append: past MAX_SEGMENTS (8) live segments, a merge
  for (let i = 0; i < 10; i++) {
    add();
    sync(path, index);
  }
  const after = postings(index);
  const gone = [...base.keys()].filter((id) => !after.get(id)?.data.equals(base.get(id)!.data));
  assert.deepEqual(gone.length, 0, `${gone.length} of the base's ${base.size} postings rows rewritten`);
  // the appends' segments were merged: the base's segment and one or two more, not ten
  assert.ok(new Set([...after.values()].map((r) => r.seg)).size <= 3);
});

test('a tier merge reads the run rows of the runs written since the base only, not every run (counted), and answers stay those of --no-index', () => {
  const { path, runs, add } = store(120, 12, 2103);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  let tier: number | null = null;
  for (let i = 0; i < 12 && tier === null; i++) {
    add();
    const report = sync(path, index);
    assert.ok(!report.compacted, 'a few small appends do not rewrite the base');
    if (report.merged) tier = report.mergeRunsRead;
  }
  assert.notEqual(tier, null, 'a tier merge within 12 appends');
  // the runs appended since the build (one segment each), not the 120 of the base
  assert.ok(tier! >= 1 && tier! <= 12, `the tier merge read ${tier} run rows`);
  assertSameAnswers(path, index, runs, 0);
});

test('a tier merge whose postings name a run whose row says it was written before the base: the index is damaged, not silently merged', () => {
  const { path, add } = store(120, 16, 2104);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  for (let i = 0; i < 2; i++) {
    add();
    sync(path, index);
  }
  // an appended run's row (one with postings after the base), rewritten (checksum included) as if it were one of the base's
  const db = new Database(index);
  try {
    const t = new IndexTables(new SqliteIndexDb(db));
    const base = Number(db.prepare("SELECT value FROM meta WHERE key = 'base'").pluck().get());
    // (an earlier run of that segment may have no postings: an empty run leaves the segment open)
    const last = db
      .prepare('SELECT run_key FROM runs WHERE seg = (SELECT max(seg) FROM postings) ORDER BY run_key DESC')
      .pluck()
      .get() as number;
    const row = t.run(last);
    assert.ok(row.seg > base);
    db.transaction(() => t.putRun({ ...row, seg: base }))();
  } finally {
    db.close();
  }
  let error: unknown = null;
  for (let i = 0; i < 11 && error === null; i++) {
    add();
    try {
      sync(path, index);
    } catch (e) {
      error = e;
    }
  }
  assert.ok(error instanceof IndexDamagedError, `a merge noticed: ${String(error)}`);
});

/** An index home that counts the statements run that read postings rows (SELECT … FROM postings, rows fetched). */
class CountingDb extends SqliteIndexDb {
  postingReads = 0;
  override prepare(sql: string): IndexStatement {
    const s = super.prepare(sql);
    if (!/^SELECT .* FROM postings WHERE id (=|IN)/.test(sql)) return s;
    const count = <T>(f: () => T): T => {
      this.postingReads++;
      return f();
    };
    return {
      run: (...a) => s.run(...a),
      get: (...a) => count(() => s.get(...a)),
      all: (...a) => count(() => s.all(...a)),
      iterate: (...a) => count(() => s.iterate(...a)),
    };
  }
}

/** Per term, its postings rows' bytes one after another in id order (what it holds, whatever its rows). */
function termBytes(t: IndexTables): Map<string, Buffer> {
  const ids = new Map<string, number[]>();
  for (const [term, list] of directory(t)) ids.set(term, [...(ids.get(term) ?? []), ...list]);
  return new Map([...ids].map(([term, list]) => [term, Buffer.concat(list.map((id) => t.posting(id, term).data))]));
}

test('a merge reads the rows it merges a few hundred a statement, not one lookup per row (counted), and each term keeps its bytes', () => {
  const { path, add } = store(150, 28, 2105);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  // the build's segment, then one per update (of 4 appended runs): 8 live segments, one short of a merge
  for (let i = 0; i < 7; i++) {
    for (let k = 0; k < 4; k++) add();
    assert.ok(!sync(path, index).merged);
  }
  for (const full of [true, false]) {
    const copy = join(tempDir(), 'copy.db');
    copyFileSync(index, copy);
    const db = new Database(copy);
    try {
      const home = new CountingDb(db);
      const t = new IndexTables(home);
      const before = termBytes(t);
      const meta = readIndexMeta(t.readMeta());
      const rows = Number(
        db
          .prepare(`SELECT count(*) FROM postings ${full ? '' : 'WHERE id >= ?'}`)
          .pluck()
          .get(...(full ? [] : [meta.tierFrom])),
      );
      assert.ok(rows > POSTING_IDS_A_STATEMENT, `${rows} rows to merge`);
      home.postingReads = 0;
      db.transaction(() => {
        merge(t, meta.runCount, meta, meta.nextSegment, full);
        // as sync records it: the merged tier has a directory of its own, a full merge leaves none
        t.putMeta('tier_segments', full ? '' : String(meta.nextSegment));
      })();
      // ids in order, POSTING_IDS_A_STATEMENT a statement (main looked up each row: `rows` statements)
      assert.ok(home.postingReads <= Math.ceil(rows / POSTING_IDS_A_STATEMENT) + 2, `${home.postingReads} reads for ${rows} rows`);
      // only appends: every run's groups are live, so each term holds the same bytes as before
      const after = termBytes(t);
      assert.deepEqual([...after.keys()].sort(), [...before.keys()].sort());
      for (const [term, data] of before) assert.ok(after.get(term)!.equals(data), term);
      const { listed, rows: left } = directoryAndRows(copy);
      assert.deepEqual(left, listed);
    } finally {
      db.close();
    }
  }
  // a row the directory lists that is not there: the index is damaged, whichever statement would have read it
  const copy = join(tempDir(), 'copy.db');
  copyFileSync(index, copy);
  const db = new Database(copy);
  try {
    const t = new IndexTables(new SqliteIndexDb(db));
    const meta = readIndexMeta(t.readMeta());
    db.prepare('DELETE FROM postings WHERE id = (SELECT max(id) FROM postings) - 300').run();
    assert.throws(
      () => db.transaction(() => merge(t, meta.runCount, meta, meta.nextSegment, true))(),
      (e: unknown) => {
        return e instanceof IndexDamagedError && /postings row \d+ of .* is missing/.test(e.message);
      },
    );
  } finally {
    db.close();
  }
});

/** The index's `terms` rows, bucket → bytes. */
function termRowsOf(index: string): Map<number, Buffer> {
  const db = new Database(index, { readonly: true });
  try {
    const rows = db.prepare('SELECT bucket, data FROM terms').all() as Array<{ bucket: number; data: Buffer }>;
    return new Map(rows.map((r) => [r.bucket, r.data]));
  } finally {
    db.close();
  }
}

test('one appended run rewrites no bucket of the main directory: its rows are listed in TIER_PARTS rows of their own, and answers stay those of --no-index', () => {
  const { path, runs, add } = store(60, 6, 2106);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  let withRows = 0;
  for (let i = 0; i < 6; i++) {
    const before = termRowsOf(index);
    add();
    const report = sync(path, index);
    assert.ok(!report.merged && !report.compacted);
    const after = termRowsOf(index);
    const changed = [...before].filter(([b, data]) => !after.get(b)?.equals(data)).map(([b]) => b);
    const added = [...after.keys()].filter((b) => !before.has(b));
    // (main rewrote the bucket of every term of the run: dozens to hundreds here)
    assert.deepEqual(changed, [], `update ${i + 1}: main directory buckets rewritten`);
    // (a run interrupted before its first complete snapshot writes no postings)
    if (added.length > 0) withRows++;
    assert.ok(added.length === 0 || added.length === TIER_PARTS, `update ${i + 1}: ${added.length} rows added`);
    assert.ok(
      added.every((b) => b >= TERM_BUCKETS),
      `update ${i + 1}: the rows added are after the main buckets`,
    );
    assertSameAnswers(path, index, runs, 50 + i);
  }
  assert.ok(withRows >= 3, `${withRows} of 6 appended runs wrote postings`);
});

test('tier directories through merges: a tier merge folds them into its own, a base merge into the main buckets; nothing listed twice or left', () => {
  const { path, runs, add } = store(40, 40, 2107);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  let sawTier = false;
  let sawBase = false;
  for (let i = 0; i < 40 && !(sawTier && sawBase); i++) {
    add();
    const report = sync(path, index);
    const db = new Database(index, { readonly: true });
    let tiers: readonly number[];
    try {
      const t = new IndexTables(new SqliteIndexDb(db));
      tiers = readIndexMeta(t.readMeta()).tierSegments;
      // exactly the listed tier segments' rows are there, after the main buckets
      const extra = (db.prepare('SELECT bucket FROM terms WHERE bucket >= ? ORDER BY bucket').pluck().all(TERM_BUCKETS) as number[]).map(
        (b) => Math.floor((b - TERM_BUCKETS) / TIER_PARTS),
      );
      assert.deepEqual([...new Set(extra)], tiers, `update ${i + 1}: tier rows`);
      assert.equal(extra.length, tiers.length * TIER_PARTS);
    } finally {
      db.close();
    }
    if (report.merged) {
      sawTier = true;
      assert.equal(tiers.length, 1, 'a tier merge leaves one tier segment: its own');
    }
    if (report.compacted) {
      sawBase = true;
      assert.deepEqual(tiers, [], 'a base merge leaves none');
    }
    const { listed, rows } = directoryAndRows(index);
    assert.deepEqual(rows, listed, `update ${i + 1}: postings rows against the term directory`);
    assertSameAnswers(path, index, runs, 100 + i);
  }
  assert.ok(sawTier && sawBase, `both merges seen (tier ${sawTier}, base ${sawBase})`);
});

test("a tier segment's directory row missing is damage: the index is rebuilt and the answer is that of --no-index", () => {
  const { path, runs, add } = store(40, 2, 2108);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  add();
  sync(path, index);
  const db = new Database(index);
  try {
    assert.equal(db.prepare('DELETE FROM terms WHERE bucket >= ?').run(TERM_BUCKETS).changes, TIER_PARTS);
  } finally {
    db.close();
  }
  const store2 = openSqliteReader(path);
  try {
    const notes: string[] = [];
    const options = { ...randomOptions(rng(7), runs), scope: 'all' as const, conversationId: null, runId: null };
    const indexed = searchReader(store2, options, { path: index }, { onWarning: (m: string) => notes.push(m) });
    assert.deepEqual(searchJson(indexed), searchJson(searchReader(store2, options, false)));
    assert.equal(notes.length, 1, notes.join(' | '));
    assert.match(notes[0]!, /damaged \(term directory bucket \d+ is missing\); rebuilt it/);
  } finally {
    store2.close();
  }
  assertSameAnswers(path, index, runs, 7);
});

test('an index of format 12 (tier segments in the main directory, no tier_segments) is rebuilt on first use', () => {
  const { path, runs, add } = store(30, 2, 2109);
  const index = join(tempDir(), 'idx.db');
  sync(path, index);
  const db = new Database(index);
  try {
    new IndexTables(new SqliteIndexDb(db)).putMeta('format', 'convsearch-index-12');
    db.prepare("DELETE FROM meta WHERE key = 'tier_segments'").run();
  } finally {
    db.close();
  }
  add();
  const report = sync(path, index);
  assert.equal(report.runsReplayed, runs.length, 'every run replayed: a build');
  assertSameAnswers(path, index, runs, 9);
});
