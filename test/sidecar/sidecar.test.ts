import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { copyFileSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonObject } from '../../scripts/lib/messages.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { summarizeConversations, summarizeRuns, withRecordCounts } from '../../src/api/listings.js';
import type { RecordCounts } from '../../src/history/counts.js';
import { openIndexedSource } from '../../src/sidecar/with-index.js';
import { HistorySource } from '../../src/history/source.js';
import { searchJson } from '../../src/output/json.js';
import { toolText } from '../../src/output/tool-text.js';
import type { SearchOptions } from '../../src/search/search.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { cli, runCliAsync } from '../helpers/cli.js';
import { randomOptions, writeRun } from '../helpers/random-stores.js';
import { searchReader, tempDir } from '../helpers/stores.js';

function sha(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Indexed and replayed searches must agree exactly, in the tool text and in the JSON document. */
function assertSame(dbPath: string, indexPath: string, options: SearchOptions, label: string): void {
  const store = openSqliteReader(dbPath);
  try {
    const indexed = searchReader(store, options, { path: indexPath });
    const replayed = searchReader(store, options, false);
    assert.equal(toolText(indexed), toolText(replayed), `${label}: ${JSON.stringify(options)}`);
    assert.deepEqual(searchJson(indexed), searchJson(replayed), `${label}: ${JSON.stringify(options)}`);
  } finally {
    store.close();
  }
}

/** `runs` and `conversations` read their counts from the index: the same numbers as a replay. */
function assertSameListings(dbPath: string, indexPath: string, label: string): void {
  const store = openSqliteReader(dbPath);
  try {
    const source = new HistorySource(store);
    const listing = (counts: RecordCounts) => ({
      runs: summarizeRuns(source, source.runs(), counts),
      conversations: summarizeConversations(counts),
      warnings: counts.warnings(source.runs().map((r) => r.runId)),
    });
    const indexed = withRecordCounts(source, { path: indexPath }, {}, listing);
    const replayed = withRecordCounts(source, false, {}, listing);
    assert.deepEqual(indexed, replayed, label);
  } finally {
    store.close();
  }
}

describe('persistent index', () => {
  test('indexed output equals a fresh replay through appends, prunes, rewrites and deletions (property)', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const random = rng(seed * 7919);
      const dir = tempDir();
      const dbPath = join(dir, 'sessions.db');
      const indexPath = join(tempDir(), 'idx.db');
      const w = new StepStoreWriter(dbPath);
      const runs: Array<{ id: string; conv: string | null }> = [];
      const histories = new Map<string, JsonObject[]>();
      let clock = Date.UTC(2026, 0, 1);
      let nextId = 0;
      const addRuns = (count: number): void => {
        for (let i = 0; i < count; i++) {
          const conv = random() < 0.1 ? null : `conv-${Math.floor(random() * 3)}`;
          const inherit = conv !== null && histories.has(conv) && random() < 0.6 ? histories.get(conv) : undefined;
          const id = `run-${seed}-${nextId++}`;
          clock += 60_000 * (1 + Math.floor(random() * 5));
          const h = writeRun(w, random, id, conv, new Date(clock), inherit);
          if (conv !== null) histories.set(conv, h);
          runs.push({ id, conv });
        }
      };
      const check = (label: string): void => {
        for (let q = 0; q < 12; q++) assertSame(dbPath, indexPath, randomOptions(random, runs), `seed ${seed} ${label}`);
        assertSameListings(dbPath, indexPath, `seed ${seed} ${label}`);
      };
      try {
        addRuns(4);
        check('initial build');
        addRuns(2);
        check('after appending runs');
        // new snapshots for an existing run: a copy of its last one with one more message
        const victim = runs[Math.floor(random() * runs.length)]!;
        const last = w.db
          .prepare(
            "SELECT step_index, timestamp, messages FROM snapshots WHERE run_id = ? AND state = 'complete' ORDER BY seq DESC LIMIT 1",
          )
          .get(victim.id) as { step_index: number; timestamp: string; messages: string } | undefined;
        if (last) {
          const extra = `{"parts": [{"content": "zzappended ${seed}", "timestamp": "2026-02-01T00:00:00Z", "part_kind": "user-prompt"}], "timestamp": null, "instructions": null, "kind": "request", "run_id": null, "conversation_id": null, "metadata": null, "state": "complete"}`;
          w.db
            .prepare("INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) VALUES (?, ?, ?, 'complete', ?)")
            .run(victim.id, last.step_index + 1, last.timestamp, last.messages.slice(0, -1) + ', ' + extra + ']');
          check('after appending snapshots');
        }
        // prune: keep only the newest snapshot of a run (max_snapshots_per_run)
        const pruned = runs[Math.floor(random() * runs.length)]!;
        w.db
          .prepare('DELETE FROM snapshots WHERE run_id = ? AND seq < (SELECT MAX(seq) FROM snapshots WHERE run_id = ?)')
          .run(pruned.id, pruned.id);
        check('after pruning a run');
        // rewrite: replace a run's snapshots with a different history
        const rewritten = runs[Math.floor(random() * runs.length)]!;
        w.db.prepare('DELETE FROM snapshots WHERE run_id = ?').run(rewritten.id);
        check("after deleting a run's snapshots");
        // delete a whole run
        const gone = runs.splice(Math.floor(random() * runs.length), 1)[0]!;
        w.db.prepare('DELETE FROM snapshots WHERE run_id = ?').run(gone.id);
        w.db.prepare('DELETE FROM runs WHERE run_id = ?').run(gone.id);
        check('after deleting a run');
        addRuns(2);
        check('after more threaded runs');
      } finally {
        w.close();
      }
    }
  });

  test('a sync touches only what changed', () => {
    const random = rng(11);
    const dbPath = join(tempDir(), 'sessions.db');
    const indexPath = join(tempDir(), 'idx.db');
    const w = new StepStoreWriter(dbPath);
    for (let i = 0; i < 5; i++) writeRun(w, random, `r${i}`, 'c', new Date(Date.UTC(2026, 0, 1, i)));
    const sync = (): ReturnType<typeof openIndexedSource>['report'] => {
      const store = openSqliteReader(dbPath);
      try {
        const o = openIndexedSource(store, { path: indexPath });
        o.db.close();
        return o.report;
      } finally {
        store.close();
      }
    };
    try {
      assert.equal(sync().runsReplayed, 5);
      const again = sync();
      assert.equal(again.upToDate, true);
      writeRun(w, random, 'r5', 'c', new Date(Date.UTC(2026, 0, 2)));
      const one = sync();
      assert.equal(one.runsReplayed, 1);
      assert.equal(one.runsResumed, 0);
      const s = w.db
        .prepare(
          "SELECT run_id, step_index, timestamp, messages FROM snapshots WHERE run_id != 'r5' AND state = 'complete' ORDER BY seq DESC LIMIT 1",
        )
        .get() as { run_id: string; step_index: number; timestamp: string; messages: string };
      w.db
        .prepare("INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) VALUES (?, ?, ?, 'complete', ?)")
        .run(s.run_id, s.step_index + 1, s.timestamp, s.messages);
      const resumed = sync();
      assert.equal(resumed.runsResumed, 1);
      assert.equal(resumed.runsReplayed, 0);
      assert.equal(resumed.snapshotsRead, 1);
    } finally {
      w.close();
    }
  });

  test('a store whose files are unchanged is not read again; every write to it is seen, in place or by a live writer', () => {
    const random = rng(12);
    const dbPath = join(tempDir(), 'sessions.db');
    const indexPath = join(tempDir(), 'idx.db');
    // another writer process: one connection, closed at the end (its last close checkpoints: the file itself changes)
    const write = (sql: string[]): void => {
      const db = new Database(dbPath);
      try {
        for (const q of sql) db.exec(q);
      } finally {
        db.close();
      }
    };
    const copyRun = (from: string, to: string, day: number): string[] => [
      `INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) SELECT '${to}', conversation_id, parent_run_id, agent_name, metadata, '2026-02-0${day}T00:00:00+00:00' FROM runs WHERE run_id = '${from}'`,
      `INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) SELECT '${to}', step_index, timestamp, state, messages FROM snapshots WHERE run_id = '${from}' ORDER BY seq`,
    ];
    const sync = (): { report: ReturnType<typeof openIndexedSource>['report']; stamp: string | null; recorded: unknown; mode: string } => {
      const store = openSqliteReader(dbPath);
      try {
        const o = openIndexedSource(store, { path: indexPath });
        const recorded = o.db.prepare("SELECT value FROM meta WHERE key = 'store_stamp'").pluck().get();
        o.db.close();
        return { report: o.report, stamp: store.stamp(), recorded, mode: store.mode };
      } finally {
        store.close();
      }
    };
    const w0 = new StepStoreWriter(dbPath);
    for (let i = 0; i < 3; i++) writeRun(w0, random, `r${i}`, 'c', new Date(Date.UTC(2026, 0, 1, i)));
    w0.close();
    const first = sync();
    assert.equal(first.report.runsReplayed, 3);
    assert.notEqual(first.stamp, null, 'a closed store is stamped');
    assert.equal(first.recorded, first.stamp);
    const again = sync();
    assert.equal(again.report.upToDate, true);
    assert.equal(again.report.contentChecked, false, 'an unchanged stamp: the store is not read');
    write(copyRun('r0', 'r3', 1));
    const added = sync();
    assert.equal(added.report.runsReplayed, 1);
    assert.notEqual(added.stamp, first.stamp);
    // a deletion that keeps the file's size (SQLite reuses the pages) still changes its times
    write(["DELETE FROM snapshots WHERE run_id = 'r3' AND seq < (SELECT MAX(seq) FROM snapshots WHERE run_id = 'r3')"]);
    const pruned = sync();
    assert.equal(pruned.report.upToDate, false);
    assert.equal(pruned.report.runsReplayed, 1);
    // a live writer: stamped too (the -wal's stamp with the file's); every commit is seen, and an idle one costs nothing
    const live = new Database(dbPath);
    try {
      for (const q of copyRun('r1', 'r4', 2)) live.exec(q);
      const seen = sync();
      assert.equal(seen.mode, 'wal-in-place');
      assert.equal(seen.report.runsReplayed, 1);
      assert.equal(seen.report.contentChecked, true);
      const idle = sync();
      assert.equal(idle.report.contentChecked, false, 'an idle live writer: nothing read');
      // a same-length rewrite in place by the live writer: only that run is rebuilt
      live.exec("UPDATE snapshots SET messages = replace(messages, 'e', 'E') WHERE run_id = 'r4'");
      const rewritten = sync();
      assert.equal(rewritten.report.runsReplayed, 1);
      assert.equal(rewritten.report.runsResumed, 0);
    } finally {
      live.close();
    }
    const after = sync();
    assert.equal(after.recorded, after.stamp);
    assert.equal(after.report.upToDate, true);
  });

  test('the index file is private, lives outside the store directory, and the store stays byte-identical', async () => {
    const random = rng(5);
    const storeDir = tempDir();
    const dbPath = join(storeDir, 'sessions.db');
    const w = new StepStoreWriter(dbPath);
    writeRun(w, random, 'r1', 'c', new Date(Date.UTC(2026, 0, 1)));
    w.close();
    const before = sha(dbPath);
    const cache = tempDir();
    const r = await cli(['search', 'user', '--db', dbPath, '--scope', 'all', '--format', 'tool'], {
      env: { XDG_CACHE_HOME: cache },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(sha(dbPath), before);
    assert.deepEqual(readdirSync(storeDir), ['sessions.db']);
    const files = readdirSync(join(cache, 'convsearch'));
    assert.equal(files.length, 1);
    assert.equal(statSync(join(cache, 'convsearch', files[0]!)).mode & 0o777, 0o600);
    assert.equal(statSync(join(cache, 'convsearch')).mode & 0o777, 0o700);
  });

  test('a corrupt or foreign index is rebuilt, never trusted', async () => {
    const random = rng(9);
    const a = join(tempDir(), 'a.db');
    const b = join(tempDir(), 'b.db');
    for (const [p, word] of [
      [a, 'alpha'],
      [b, 'beta'],
    ] as const) {
      const w = new StepStoreWriter(p);
      writeRun(w, random, `run-${word}`, 'c', new Date(Date.UTC(2026, 0, 1)));
      w.close();
    }
    const indexPath = join(tempDir(), 'shared.index.db');
    const args = (db: string): string[] => [
      'search',
      'user',
      'tool',
      '--db',
      db,
      '--scope',
      'all',
      '--format',
      'tool',
      '--index',
      indexPath,
    ];
    const expectA = await cli([...args(a).slice(0, -2), '--no-index']);
    const expectB = await cli([...args(b).slice(0, -2), '--no-index']);
    assert.equal((await cli(args(a))).stdout, expectA.stdout);
    // the same index path for another store: rebuilt for that store
    assert.equal((await cli(args(b))).stdout, expectB.stdout);
    // garbage over the index file: not ours any more (no signature), so refused and left alone
    writeFileSync(indexPath, Buffer.alloc(8192, 0x5a));
    const refused = await cli(args(a));
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /^convsearch: error: refusing --index .*not a convsearch index \(it is not an SQLite database\)/);
    assert.deepEqual(readFileSync(indexPath), Buffer.alloc(8192, 0x5a));
    rmSync(indexPath);
    const r = await cli(args(a));
    assert.equal(r.stdout, expectA.stdout);
    assert.equal(r.status, 0);
    // a valid SQLite header with corrupt pages
    const bytes = readFileSync(indexPath);
    for (let i = 4096; i < bytes.length; i += 97) bytes[i] = 0xff;
    writeFileSync(indexPath, bytes);
    const r2 = await cli(args(a));
    assert.equal(r2.stdout, expectA.stdout);
    assert.doesNotMatch(r2.stderr, /\n\s+at /);
    // sound SQLite, but postings cut short: decoding notices, the index is rebuilt
    const idx = new Database(indexPath);
    const cut = idx.prepare("UPDATE postings SET data = substr(data, 1, length(data) - 1) WHERE term IN ('user', 'tool')").run().changes;
    idx.close();
    assert.ok(cut >= 2, 'postings were cut');
    const r3 = await cli(args(a));
    assert.equal(r3.stdout, expectA.stdout);
    assert.equal(r3.status, 0);
    assert.match(r3.stderr, /^convsearch: warning: index .* was damaged \(.*\); rebuilt it\n$/);
  });

  test('an index that cannot be created falls back to a replay, with a warning and the same answer', async () => {
    const random = rng(33);
    const dbPath = join(tempDir(), 'sessions.db');
    const w = new StepStoreWriter(dbPath);
    writeRun(w, random, 'r1', 'c', new Date(Date.UTC(2026, 0, 1)));
    w.close();
    const notADirectory = join(tempDir(), 'file');
    writeFileSync(notADirectory, '');
    const args = ['search', 'user', '--db', dbPath, '--scope', 'all', '--format', 'tool'];
    const expected = await cli([...args, '--no-index']);
    // every default place under it: $XDG_CACHE_HOME, ~/.cache and the temporary directory
    const r = await cli(args, { env: { XDG_CACHE_HOME: notADirectory, HOME: notADirectory, TMPDIR: notADirectory } });
    assert.equal(r.status, expected.status);
    assert.equal(r.stdout, expected.stdout);
    assert.match(r.stderr, /^convsearch: warning: index unavailable, searching without it: .*ENOTDIR/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });

  test('two processes updating the same index at once do not corrupt it', async () => {
    const random = rng(21);
    const dbPath = join(tempDir(), 'sessions.db');
    const w = new StepStoreWriter(dbPath);
    for (let i = 0; i < 12; i++) writeRun(w, random, `r${i}`, `c${i % 3}`, new Date(Date.UTC(2026, 0, 1, i)));
    w.close();
    const indexPath = join(tempDir(), 'idx.db');
    const args = ['search', 'user', 'lookup', '--db', dbPath, '--scope', 'all', '--format', 'tool', '-m', '50'];
    const expected = await cli([...args, '--no-index']);
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all([0, 1, 2, 3].map(() => runCliAsync([...args, '--index', indexPath])));
      for (const r of results) {
        assert.equal(r.status, expected.status, r.stderr);
        assert.equal(r.stdout, expected.stdout);
      }
    }
    const check = await cli(['search', 'user', '--db', dbPath, '--scope', 'all', '--json', '--index', indexPath]);
    assert.equal(check.status, 0, check.stderr);
  });
});

describe('an index that is not exactly current is never used', () => {
  test('a same-length in-place rewrite, with the old mtime restored or moved in with mv, is seen at once and after later appends', async () => {
    const random = rng(41);
    const dir = tempDir();
    const dbPath = join(dir, 'sessions.db');
    const w = new StepStoreWriter(dbPath);
    for (let i = 0; i < 4; i++) writeRun(w, random, `r${i}`, `c${i % 2}`, new Date(Date.UTC(2026, 0, 1, i)));
    w.close();
    const indexPath = join(tempDir(), 'idx.db');
    const both = async (word: string): Promise<void> => {
      const args = ['search', word, '--db', dbPath, '--scope', 'all', '--json'];
      const [indexed, replayed] = [await cli([...args, '--index', indexPath]), await cli([...args, '--no-index'])];
      assert.equal(indexed.stdout, replayed.stdout, word);
      assert.equal(indexed.status, replayed.status, word);
      const runsArgs = ['runs', '--json', '--db', dbPath];
      assert.equal((await cli([...runsArgs, '--index', indexPath])).stdout, (await cli([...runsArgs, '--no-index'])).stdout);
    };
    await both('user');
    const edit = (sql: string, keepTimes: boolean): void => {
      const before = statSync(dbPath);
      const db = new Database(dbPath);
      db.exec(sql);
      db.close();
      assert.equal(statSync(dbPath).size, before.size, 'the file keeps its size');
      if (keepTimes) utimesSync(dbPath, before.atime, before.mtime);
    };
    const word = (
      new Database(dbPath, { readonly: true })
        .prepare("SELECT messages FROM snapshots WHERE run_id = 'r1' ORDER BY seq DESC LIMIT 1")
        .pluck()
        .get() as string
    ).match(/"content": "(\w{4,})/)![1]!;
    const swapped = word.replace(/^./, (c) => (c === 'q' ? 'z' : 'q'));
    edit(`UPDATE snapshots SET messages = replace(messages, '${word}', '${swapped}')`, true);
    await both(word);
    await both(swapped);
    // a run cut short in place: a later snapshot made identical to an earlier one (same length not needed: the count stays)
    edit(
      "UPDATE snapshots SET messages = (SELECT messages FROM snapshots s2 WHERE s2.run_id = 'r2' ORDER BY seq LIMIT 1) WHERE run_id = 'r2' AND seq = (SELECT MAX(seq) FROM snapshots WHERE run_id = 'r2')",
      true,
    );
    await both('user');
    // an edited copy moved over the store
    const copy = join(dir, 'edited.db');
    copyFileSync(dbPath, copy);
    const db = new Database(copy);
    db.exec(`UPDATE snapshots SET messages = replace(messages, '${swapped}', '${word}')`);
    db.close();
    renameSync(copy, dbPath);
    await both(word);
    await both(swapped);
    // and it stays right through later appends
    const db2 = new Database(dbPath);
    db2.exec(
      "INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) SELECT run_id, step_index + 1, timestamp, state, messages FROM snapshots WHERE run_id = 'r3' ORDER BY seq DESC LIMIT 1",
    );
    db2.close();
    await both(word);
    await both('user');
  });
});
