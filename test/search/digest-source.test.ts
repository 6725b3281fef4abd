import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { JsonObject } from '../../scripts/lib/messages.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { HistorySource } from '../../src/history/source.js';
import { GlobSet } from '../../src/text/glob.js';
import { searchJson } from '../../src/output/json.js';
import { toolText } from '../../src/output/tool-text.js';
import { ReplayCorpusSource } from '../../src/search/replay-source.js';
import type { ParallelOptions } from '../../src/parallel/threads.js';
import { DigestCorpusSource } from '../../src/search/digest-source.js';
import { search, type SearchOptions, type SearchOutcome } from '../../src/search/search.js';
import { queryTokens } from '../../src/text/tokenize.js';
import { openSqliteReader, type SqliteReader } from '../../src/store/sqlite/reader.js';
import { cli } from '../helpers/cli.js';
import { randomOptions, threadedStore, writeRun } from '../helpers/random-stores.js';
import { tempDir } from '../helpers/stores.js';

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function withFilter(random: () => number, o: SearchOptions): SearchOptions {
  const r = random();
  if (r < 0.6) return o;
  const roles = new Set(r < 0.75 ? (['assistant'] as const) : r < 0.9 ? (['tool-return', 'user'] as const) : ([] as const));
  return { ...o, filter: { roles, tools: new GlobSet(r > 0.85 ? ['lookup'] : []), minScore: random() < 0.5 ? null : random() * 2 } };
}

function serial(store: SqliteReader, o: SearchOptions): SearchOutcome {
  return search(new ReplayCorpusSource(new HistorySource(store)), o);
}

function parallel(store: SqliteReader, o: SearchOptions, options: ParallelOptions): SearchOutcome {
  return search(new DigestCorpusSource(new HistorySource(store), queryTokens(o.query), options), o);
}

function assertSameOutcome(got: SearchOutcome, want: SearchOutcome, label: string): void {
  assert.equal(toolText(got), toolText(want), label);
  assert.deepEqual(searchJson(got), searchJson(want), label);
  assert.deepEqual(got.warnings, want.warnings, label);
  assert.deepEqual(got.matches, want.matches, label);
  if (got.kind === 'found' && want.kind === 'found') {
    assert.deepEqual(got.ranking, want.ranking, label);
    assertCountsMatchRanking(got, label);
  }
}

/** The match counts are the eligible entries of the whole ranking, shown or not, grouped by run in corpus order. */
function assertCountsMatchRanking(o: Extract<SearchOutcome, { kind: 'found' }>, label: string): void {
  const eligible = o.ranking.filter((r) => r.eligible);
  assert.equal(o.matches.total, eligible.length, label);
  assert.equal(o.matches.unfiltered, o.ranking.length, label);
  const perRun = new Map<string, number>();
  for (const r of eligible) perRun.set(r.run.runId, (perRun.get(r.run.runId) ?? 0) + 1);
  assert.deepEqual(
    o.matches.byRun.map((m) => [m.run.runId, m.count]),
    o.runs.filter((r) => perRun.has(r.runId)).map((r) => [r.runId, perRun.get(r.runId)]),
    label,
  );
  assert.ok(o.hits.length <= o.matches.total, label);
}

describe('parallel replay (--no-index on several threads)', () => {
  test('gives what the one-thread replay gives: text, JSON, whole ranking and warnings (property)', () => {
    let compared = 0;
    let found = 0;
    for (let seed = 1; seed <= 5; seed++) {
      const random = rng(seed);
      const { path, runs } = threadedStore(seed);
      const store = openSqliteReader(path);
      try {
        assert.notEqual(store.share(), null, 'a closed store can be read by other threads');
        for (let q = 0; q < 10; q++) {
          const o = withFilter(random, randomOptions(random, runs));
          const want = serial(store, o);
          for (const threads of [1, 2, 3]) {
            assertSameOutcome(
              parallel(store, o, { threads, minSnapshots: 0 }),
              want,
              `seed ${seed} threads ${threads}: ${JSON.stringify(o)}`,
            );
            compared++;
          }
          if (want.kind === 'found') found++;
        }
        // the damaged snapshots are reported the same way
        const all = randomOptions(random, runs);
        const o: SearchOptions = { ...all, query: 'zzhologram', scope: 'all', conversationId: null, runId: null };
        const want = serial(store, o);
        assert.ok(want.warnings.length > 0 || seed > 1, 'some store has warnings');
        assertSameOutcome(parallel(store, o, { threads: 2, minSnapshots: 0 }), want, `seed ${seed} warnings`);
      } finally {
        store.close();
      }
    }
    assert.equal(compared, 150);
    assert.ok(found >= 20, `enough searches found something (${found})`);
  });

  test('a thread that cannot read the store leaves its share to the main thread: same answer', () => {
    const { path, runs } = threadedStore(9);
    const store = openSqliteReader(path);
    try {
      // its workers are told to open a file that is not there
      const missing = { ...store.share()!, location: `immutable file:${join(tempDir(), 'missing.db')}?mode=ro` };
      const broken: SqliteReader = Object.assign(Object.create(store) as SqliteReader, { share: () => missing });
      const o = { ...randomOptions(rng(1), runs), scope: 'all' as const, conversationId: null, runId: null };
      assertSameOutcome(parallel(broken, o, { threads: 3, minSnapshots: 0 }), serial(store, o), 'failed workers');
    } finally {
      store.close();
    }
  });

  /**
   * The heaviest conversation is handed out first, and the main thread takes it while the workers are
   * still starting: a long chain of runs, each carrying the history before it, keeps it busy long
   * enough for a worker to take some of the many small conversations behind it, even on a loaded machine.
   */
  function chainStore(): { path: string; runs: Array<{ id: string; conv: string | null }> } {
    const path = join(tempDir(), 'sessions.db');
    const w = new StepStoreWriter(path);
    const runs: Array<{ id: string; conv: string | null }> = [];
    const random = rng(21);
    let history: JsonObject[] = [];
    for (let i = 0; i < 120; i++) {
      runs.push({ id: `big${i}`, conv: 'c-big' });
      history = writeRun(w, random, `big${i}`, 'c-big', new Date(Date.UTC(2025, 0, 1, 0, i)), history);
    }
    for (let i = 0; i < 150; i++) {
      runs.push({ id: `r${i}`, conv: `c${i % 75}` });
      writeRun(w, random, `r${i}`, `c${i % 75}`, new Date(Date.UTC(2026, 0, 1, 0, i)));
    }
    w.close();
    return { path, runs };
  }

  /**
   * `store`, whose first read of a run's snapshots waits (up to 20 s) until a worker logged the group it
   * took last: the main thread would otherwise replay every group itself before a worker on a loaded
   * machine is up, and the test would see no failure to recover from.
   */
  function afterAWorkerTook(store: SqliteReader, log: string): SqliteReader {
    const sleep = new Int32Array(new SharedArrayBuffer(4));
    let waited = false;
    return new Proxy(store, {
      get(target, key) {
        const value = Reflect.get(target, key, target) as unknown;
        if (typeof value !== 'function') return value;
        if (key !== 'completeSnapshots') return value.bind(target);
        return (...args: unknown[]) => {
          for (const end = Date.now() + 20_000; !waited && Date.now() < end; Atomics.wait(sleep, 0, 0, 5))
            if (/^\d+$/m.test(readFileSync(log, 'utf8'))) waited = true;
          return value.apply(target, args);
        };
      },
    });
  }

  /** Searches with workers that fail as `deliver` says; what each logged (groups delivered, then lost). */
  function failingWorkers(deliver: boolean): { delivered: number; lost: number } {
    const { path, runs } = chainStore();
    const log = join(tempDir(), 'taken.log');
    const store = openSqliteReader(path);
    try {
      const worker = new URL('../helpers/failing-replay-worker.js', import.meta.url);
      worker.searchParams.set('log', log);
      if (deliver) worker.searchParams.set('deliver', '1');
      let lost = 0;
      let delivered = 0;
      for (let q = 0; q < 6; q++) {
        writeFileSync(log, '');
        const o = { ...randomOptions(rng(q), runs), scope: 'all' as const, conversationId: null, runId: null };
        const got = search(
          new DigestCorpusSource(new HistorySource(afterAWorkerTook(store, log)), queryTokens(o.query), {
            threads: 3,
            minSnapshots: 0,
            worker,
          }),
          o,
        );
        assertSameOutcome(got, serial(store, o), 'failing workers');
        const lines = readFileSync(log, 'utf8').split('\n');
        lost += lines.filter((l) => /^\d+$/.test(l)).length;
        delivered += lines.filter((l) => /^delivered \d+$/.test(l)).length;
      }
      return { delivered, lost };
    } finally {
      store.close();
    }
  }

  test('groups a worker took and did not deliver are replayed by the main thread: same answer', () => {
    assert.ok(failingWorkers(false).lost > 0, 'a failing worker took a group the main thread then had to replay');
  });

  test('a worker that fails after delivering a group: the group is kept, what it took next is replayed: same answer', () => {
    const { delivered, lost } = failingWorkers(true);
    assert.ok(delivered > 0 && lost > 0, `a failing worker delivered a group (${delivered}) and took one it did not deliver (${lost})`);
  });

  test('a store read in place beside a live writer stays on one thread (another connection could see another commit)', () => {
    const path = join(tempDir(), 'sessions.db');
    const w = new StepStoreWriter(path);
    try {
      writeRun(w, rng(5), 'r1', 'c1', new Date(Date.UTC(2026, 0, 1)));
      const store = openSqliteReader(path);
      try {
        assert.equal(store.mode, 'wal-in-place');
        assert.equal(store.share(), null);
      } finally {
        store.close();
      }
    } finally {
      w.close();
    }
  });

  test('the CLI gives the same bytes on one thread and on several, and leaves the store as it was', async () => {
    const { path } = threadedStore(4);
    const files = (): string[] => readdirSync(dirname(path)).sort();
    const before = { sha: sha256(path), files: files() };
    const index = join(tempDir(), 'idx.db');
    for (const args of [['--json'], ['--plain', '-C', '1'], []]) {
      const cmd = ['search', 'lookup', 'user', '--db', path, '--scope', 'all', '--no-index', ...args];
      const one = await cli(cmd, { env: { CONVSEARCH_THREADS: '1' } });
      const two = await cli(cmd, { env: { CONVSEARCH_THREADS: '2' } });
      assert.equal(one.status, 0, one.stderr);
      assert.equal(two.stdout, one.stdout);
      assert.equal(two.stderr, one.stderr);
      assert.equal(two.status, one.status);
      // an index built by worker threads answers the same
      const built = await cli([...cmd.filter((a) => a !== '--no-index'), '--index', index], { env: { CONVSEARCH_THREADS: '2' } });
      assert.equal(built.stdout, one.stdout);
    }
    assert.deepEqual({ sha: sha256(path), files: files() }, before, 'no byte of the store changed and no side file appeared');
  });
});
