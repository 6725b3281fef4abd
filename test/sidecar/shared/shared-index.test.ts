/**
 * The shared index (`--index postgres://…`, `convsearch index sync`) against a real Postgres server
 * started here (scripts/lib/servers.ts; skipped with a reason without one, a failure under
 * CONVSEARCH_REQUIRE_SERVERS=1): the golden answers through it, appends and syncs, syncs at once, a sync
 * killed mid-write, readers during a sync, a role that may only read the index, and the refusals that
 * keep it away from the evidence's schema and role.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, rmSync, utimesSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BIN, cli, ROOT, runCliAsync, type CliResult } from '../../helpers/cli.js';
import { argsFrom, goldenCases, readGolden } from '../../helpers/golden.js';
import { checkShape, INDEX } from '../../helpers/shapes.js';
import { FIXTURES, SQLITE_FIXTURES, startPostgres, STORES, type PgServer } from '../../helpers/servers.js';
import { appendTo } from '../../helpers/append.js';
import { addRun, assistantMsg, at, buildStore, tempDir, userMsg } from '../../helpers/stores.js';

let pg: PgServer | string = 'server not started';
const server = (): PgServer => pg as PgServer;

/** The index writer's URL (owns the index schema), and the reader's (SELECT on it only). */
const writerUrl = (db: string, schema?: string): string => server().url(db, 'indexer', undefined, schema ? `?schema=${schema}` : '');
const readerUrl = (db: string): string => server().url(db, 'searcher');

before(async () => {
  pg = await startPostgres();
  if (typeof pg === 'string') return;
  pg.psql('postgres', 'CREATE ROLE indexer LOGIN; CREATE ROLE searcher LOGIN');
});

after(() => {
  if (typeof pg !== 'string') pg.stop();
});

/** A database whose `convsearch_index` schema the indexer owns; the searcher may read what it creates there. */
function indexDb(name: string): string {
  server().createDb(name);
  server().psql(
    name,
    `CREATE SCHEMA convsearch_index AUTHORIZATION indexer;
     GRANT USAGE ON SCHEMA convsearch_index TO searcher;
     ALTER DEFAULT PRIVILEGES FOR ROLE indexer IN SCHEMA convsearch_index GRANT SELECT ON TABLES TO searcher;`,
  );
  return name;
}

const skip = (t: { skip: (why: string) => void }): boolean => {
  if (typeof pg === 'string') t.skip(pg);
  return typeof pg === 'string';
};

/**
 * A store of `runs` runs (deterministic, timestamps included: the first n runs of two such stores are
 * byte-identical) with varied words; `edited` gives its last run one more snapshot.
 */
function wordyStore(path: string, runs: number, edited = false): string {
  const words = ['refund', 'invoice', 'ledger', 'shipment', 'carrier', 'billing', 'audit', 'quota', 'tenant', 'replica'];
  return buildStore(
    (w) => {
      for (let i = 0; i < runs; i++) {
        const id = `run-${String(i).padStart(5, '0')}`;
        addRun(w, id, `conv-${i % 25}`, i);
        const messages = [];
        const steps = edited && i === runs - 1 ? 5 : 4;
        for (let s = 0; s < steps; s++) {
          const text = (k: number): string =>
            Array.from({ length: 12 }, (_, j) => `${words[(i * 7 + s * 3 + j * k) % words.length]}${(i + j) % 50}`).join(' ');
          messages.push(userMsg(`question ${i}.${s} ${text(1)}`, i), assistantMsg(`answer ${i}.${s} ${text(3)}`, i));
          w.saveSnapshot({ runId: id, stepIndex: s + 1, state: 'complete', timestamp: at(1000 + i * 10 + s), messages: [...messages] });
        }
      }
    },
    { path },
  );
}

/** A --json document read through the shared index: its `index` says the index is current for `stores` stores; the rest is returned. */
function withoutIndex(stdout: string, stores: number): unknown {
  const { index, ...rest } = JSON.parse(stdout) as { index: { shared: boolean; stale: boolean; behind_runs: number; stores: unknown[] } };
  checkShape(index, INDEX, '$.index');
  assert.deepEqual([index.shared, index.stale, index.behind_runs, index.stores.length], [true, false, 0, stores]);
  return rest;
}

const search = (db: string, extra: string[]): string[] => [
  'search',
  'refund',
  'ledger7',
  '--scope',
  'all',
  '--db',
  db,
  '--format',
  'tool',
  ...extra,
];

/** The indexer's backend while it has written something in its open transaction (its xid is assigned). */
function indexerWriting(db: string): boolean {
  return (
    server()
      .psql(db, "SELECT count(*) FROM pg_stat_activity WHERE usename = 'indexer' AND backend_xid IS NOT NULL AND state <> 'idle'")
      .trim() !== '0'
  );
}

async function until(cond: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `index sync` as a process of its own, with its pid (to kill it). */
function syncProcess(
  url: string,
  dbs: string[],
): { child: ReturnType<typeof spawn>; done: Promise<CliResult & { signal: string | null }> } {
  const child = spawn(process.execPath, [BIN, 'index', 'sync', '--index', url, ...dbs.flatMap((d) => ['--db', d])], { cwd: ROOT });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout!.on('data', (b: Buffer) => out.push(b));
  child.stderr!.on('data', (b: Buffer) => err.push(b));
  const done = new Promise<CliResult & { signal: string | null }>((res) =>
    child.on('close', (status, signal) =>
      res({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), status, signal }),
    ),
  );
  return { child, done };
}

describe('shared index in Postgres', () => {
  test('every golden case answers through the shared index exactly as the reference (and as --no-index)', async (t) => {
    if (skip(t)) return;
    const db = indexDb('golden');
    const stores = STORES.map((s) => resolve(SQLITE_FIXTURES, `${s}.db`));
    const synced = await cli(['index', 'sync', '--index', writerUrl(db), ...stores.flatMap((s) => ['--db', s])]);
    assert.equal(synced.status, 0, synced.stderr);
    for (const s of stores) assert.match(synced.stderr, new RegExp(`${s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: \\d+ runs replayed`));
    // one schema, one registry row and one set of tables per store
    assert.equal(server().psql(db, 'SELECT count(*) FROM convsearch_index.stores').trim(), String(STORES.length));
    const golden = join(SQLITE_FIXTURES, 'golden');
    const cases = goldenCases(golden);
    assert.ok(cases.length >= 70, `${cases.length} golden cases`);
    for (const file of cases) {
      const c = readGolden(file);
      const args = argsFrom(join(SQLITE_FIXTURES), c.args);
      // the reader's role: SELECT on the index schema, nothing else
      const r = await cli([...args, '--index', readerUrl(db)]);
      assert.equal(r.stdout, c.output + '\n', `${file}: ${r.stderr}`);
      assert.equal(r.status, c.exit, r.stderr);
      assert.doesNotMatch(r.stderr, /index unavailable|behind/, file);
    }
    // listings read their counts from it too
    for (const cmd of ['runs', 'conversations']) {
      const via = await cli([cmd, '--db', stores[1]!, '--json', '--index', readerUrl(db)]);
      const replay = await cli([cmd, '--db', stores[1]!, '--json', '--no-index']);
      assert.equal(via.status, 0, via.stderr);
      assert.deepEqual(withoutIndex(via.stdout, 1), JSON.parse(replay.stdout), cmd);
      assert.equal(via.stderr, '', cmd);
    }
  });

  test('several stores in one search read one shared index, each its own part ($CONVSEARCH_INDEX)', async (t) => {
    if (skip(t)) return;
    const db = indexDb('several');
    const stores = ['small', 'threaded'].map((s) => resolve(SQLITE_FIXTURES, `${s}.db`));
    const dbs = stores.flatMap((s) => ['--db', s]);
    assert.equal((await cli(['index', 'sync', ...dbs], { env: { CONVSEARCH_INDEX: writerUrl(db) } })).status, 0);
    const args = ['search', 'the', '--scope', 'all', ...dbs, '--json'];
    const via = await cli(args, { env: { CONVSEARCH_INDEX: readerUrl(db) } });
    const replay = await cli([...args, '--no-index']);
    assert.equal(via.status, 0, via.stderr);
    assert.equal(via.stderr, '');
    assert.deepEqual(withoutIndex(via.stdout, 2), JSON.parse(replay.stdout));
  });

  test('--ndjson (search, runs, conversations, tools) and tools --json carry the same `index` facts as --json, in the end event', async (t) => {
    if (skip(t)) return;
    const db = indexDb('ndjson');
    const store = wordyStore(join(tempDir(), 'sessions.db'), 30);
    assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).status, 0);
    const events = (stdout: string): Array<{ type: string; data: Record<string, unknown> }> =>
      stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
    const commands = [
      ['search', 'refund', 'ledger7', '--scope', 'all'],
      ['search', 'refund', '--scope', 'all', '--runs-with-matches'],
      ['runs'],
      ['conversations'],
      ['tools'],
    ];
    for (const cmd of commands) {
      const via = await cli([...cmd, '--db', store, '--ndjson', '--index', readerUrl(db)]);
      const replay = await cli([...cmd, '--db', store, '--ndjson', '--no-index']);
      // tools: 1, none found in this store
      assert.equal(via.status, replay.status, via.stderr);
      assert.ok(via.status! <= 1, via.stderr);
      assert.equal(via.stderr, '', cmd.join(' '));
      const got = events(via.stdout);
      const end = got.find((e) => e.type === 'end')!;
      const { index, ...rest } = end.data;
      checkShape(index, INDEX, `${cmd[0]} end.index`);
      const json = JSON.parse((await cli([...cmd, '--db', store, '--json', '--index', readerUrl(db)])).stdout) as { index: unknown };
      assert.deepEqual(index, json.index, `${cmd.join(' ')}: the facts of --json`);
      end.data = rest;
      assert.deepEqual(got, events(replay.stdout), `${cmd.join(' ')}: otherwise --no-index's events`);
    }
  });

  test('a store that cannot be read (its file gone): the index answers, saying its age and that the store was not checked; --fresh is exit 2', async (t) => {
    if (skip(t)) return;
    const db = indexDb('unreachable');
    const dir = tempDir();
    const store = wordyStore(join(dir, 'sessions.db'), 30);
    assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).status, 0);
    const answer = (await cli(search(store, ['--no-index']))).stdout;
    const asJson = ['search', 'refund', 'ledger7', '--scope', 'all', '--db', store, '--json', '--index', readerUrl(db)];
    const json = (await cli(asJson)).stdout;
    rmSync(store);
    const r = await cli(search(store, ['--index', readerUrl(db)]));
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, answer, 'the answer of the last sync');
    assert.match(
      r.stderr,
      /^convsearch: warning: index postgresql:\/\/searcher@\S+ answers for \S*sessions\.db as of its last sync, \d{4}-\d\d-\d\dT[\d:.]+Z \(\d+ min ago\): the store could not be checked \(.*no such file.*\)\n$/,
    );
    const doc = await cli(asJson);
    assert.equal(doc.status, 0, doc.stderr);
    const { index, ...rest } = JSON.parse(doc.stdout) as { index: Record<string, unknown> };
    checkShape(index, INDEX, '$.index');
    assert.deepEqual([index.checked, index.stale, index.behind_runs], [false, null, null]);
    const { index: before, ...then } = JSON.parse(json) as { index: Record<string, unknown> };
    assert.equal(index.synced_at, before.synced_at);
    assert.deepEqual(rest, then);
    // --fresh asks for the store: it cannot be read, so one line and exit 2
    const fresh = await cli(search(store, ['--index', readerUrl(db), '--fresh']));
    assert.equal(fresh.status, 2);
    assert.equal(fresh.stdout, '');
    assert.match(fresh.stderr, /^convsearch: error: .*no such file.*\n$/);
    // a store the index does not hold: its error, as without an index
    const other = await cli(search(join(dir, 'other.db'), ['--index', readerUrl(db)]));
    assert.equal(other.status, 2);
    assert.match(other.stderr, /^convsearch: error: .*no such file.*\n$/);
  });

  test('runs, conversations and tools of a store that cannot be read: the index answers as of its sync, with the one notice; --json index.checked false', async (t) => {
    if (skip(t)) return;
    const db = indexDb('unreachable_listings');
    const store = wordyStore(join(tempDir(), 'sessions.db'), 30);
    assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).status, 0);
    const commands = [['runs'], ['conversations'], ['tools'], ['runs', '--conversation', 'conv-3'], ['conversations', '--limit', '2']];
    const before: CliResult[] = [];
    for (const cmd of commands)
      for (const format of [[], ['--json']]) before.push(await cli([...cmd, ...format, '--db', store, '--index', readerUrl(db)]));
    rmSync(store);
    let i = 0;
    for (const cmd of commands)
      for (const format of [[], ['--json']]) {
        const then = before[i++]!;
        const now = await cli([...cmd, ...format, '--db', store, '--index', readerUrl(db)]);
        const what = [...cmd, ...format].join(' ');
        assert.equal(now.status, then.status, `${what}: ${now.stderr}`);
        assert.match(
          now.stderr,
          /^convsearch: warning: index postgresql:\/\/searcher@\S+ answers for \S*sessions\.db as of its last sync, \S+ \(\d+ min ago\): the store could not be checked \(.*no such file.*\)\n$/,
          what,
        );
        if (format.length === 0) {
          assert.equal(now.stdout, then.stdout, what);
          continue;
        }
        const { index, ...rest } = JSON.parse(now.stdout) as { index: Record<string, unknown> };
        const { index: was, ...thenRest } = JSON.parse(then.stdout) as { index: Record<string, unknown> };
        checkShape(index, INDEX, `${what} $.index`);
        assert.deepEqual([index.checked, index.stale, index.synced_at], [false, null, was.synced_at], what);
        assert.deepEqual(rest, thenRest, what);
      }
    // --fresh asks for the store: one line, exit 2
    const fresh = await cli(['runs', '--db', store, '--index', readerUrl(db), '--fresh']);
    assert.equal(fresh.status, 2);
    assert.match(fresh.stderr, /^convsearch: error: .*no such file.*\n$/);
  });

  test('a Postgres store whose server is down, its index on another server: search, runs, conversations and tools answer from the index, saying so', async (t) => {
    if (skip(t)) return;
    const evidence = await startPostgres();
    if (typeof evidence === 'string') return t.skip(evidence);
    try {
      evidence.createDb('evidence', join(FIXTURES, 'postgres', 'threaded.sql'));
      const storeUrl = evidence.url('evidence');
      const db = indexDb('store_down');
      assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', storeUrl])).status, 0);
      const commands = [['search', 'refund', '--scope', 'all'], ['runs'], ['conversations'], ['tools']];
      const before: CliResult[] = [];
      for (const cmd of commands) before.push(await cli([...cmd, '--db', storeUrl, '--index', readerUrl(db)]));
      for (const b of before) assert.doesNotMatch(b.stderr, /warning|error/);
      evidence.stop();
      for (const [i, cmd] of commands.entries()) {
        const now = await cli([...cmd, '--db', storeUrl, '--index', readerUrl(db)]);
        // runs too: the sync of a store of few runs records their snapshot counts run by run (runSnapshotStats)
        assert.equal(now.status, before[i]!.status, `${cmd[0]}: ${now.stderr}`);
        assert.equal(now.stdout, before[i]!.stdout, cmd[0]);
        // the notice first, then what the command says anyway (search: its summary line)
        const [notice, ...rest] = now.stderr.split(/(?<=\n)/);
        assert.match(
          notice!,
          /^convsearch: warning: index postgresql:\/\/searcher@\S+ answers for postgresql:\/\/postgres@127\.0\.0\.1:\d+\/evidence as of its last sync, \S+ \(\d+ min ago\): the store could not be checked \(.+\)\n$/,
          cmd[0],
        );
        assert.equal(rest.join(''), before[i]!.stderr, cmd[0]);
      }
      const fresh = await cli(['search', 'refund', '--scope', 'all', '--db', storeUrl, '--index', readerUrl(db), '--fresh']);
      assert.equal(fresh.status, 2);
      assert.match(fresh.stderr, /^convsearch: error: [^\n]+\n$/);
    } finally {
      evidence.stop();
    }
  });

  test('an appended run: the index says it is behind until a sync, then answers as --no-index', async (t) => {
    if (skip(t)) return;
    const db = indexDb('append');
    const dir = tempDir();
    const store = wordyStore(join(dir, 'sessions.db'), 30);
    // the runs and conversations listed (without the index's standing, which only a listing through it has)
    const listings = async (extra: string[]): Promise<unknown[]> =>
      Promise.all(
        ['runs', 'conversations'].map(async (cmd) => {
          const r = await cli([cmd, '--json', '--db', store, ...extra]);
          assert.equal(r.status, 0, r.stderr);
          return (JSON.parse(r.stdout) as Record<string, unknown>)[cmd];
        }),
      );
    const before = (await cli(search(store, ['--no-index']))).stdout;
    const listedBefore = await listings(['--no-index']);
    assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).status, 0);
    copyFileSync(wordyStore(join(tempDir(), 'more.db'), 31), store);
    const after = await cli(search(store, ['--no-index']));
    assert.notEqual(after.stdout, before, 'the appended run changes the answer');
    const stale = await cli(search(store, ['--index', readerUrl(db)]));
    assert.equal(stale.stdout, before, 'answers as of the last sync');
    assert.match(stale.stderr, /index postgresql:\/\/searcher@.* is behind .*sessions\.db by 1 run and \d+ min .*index sync/);
    // the listings too: the runs of the last sync with their counts, not the store's runs with counts of another state
    assert.deepEqual(await listings(['--index', readerUrl(db)]), listedBefore, 'listed as of the last sync');
    assert.notDeepEqual(await listings(['--no-index']), listedBefore);
    const synced = await cli(['index', 'sync', '--index', writerUrl(db), '--db', store]);
    assert.match(synced.stderr, /: (0 runs replayed, 1 resumed|1 runs replayed, 0 resumed)/);
    const fresh = await cli(search(store, ['--index', readerUrl(db)]));
    assert.equal(fresh.stdout, after.stdout);
    assert.equal(fresh.stderr, '');
    // a sync with nothing to do
    assert.match((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).stderr, /up to date/);
  });

  test('twelve runs appended and synced one by one: merges of the new segments leave the base rows, answers stay --no-index', async (t) => {
    if (skip(t)) return;
    const db = indexDb('tiered');
    const dir = tempDir();
    const store = wordyStore(join(dir, 'sessions.db'), 60);
    assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).status, 0);
    const rows = (): string[] => server().psql(db, 'SELECT id FROM convsearch_index.s1_postings ORDER BY id').trim().split('\n');
    const base = rows();
    for (let i = 1; i <= 12; i++) {
      copyFileSync(wordyStore(join(tempDir(), 'more.db'), 60 + i), store);
      assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).status, 0);
      const want = await cli(search(store, ['--no-index']));
      const got = await cli(search(store, ['--index', readerUrl(db)]));
      assert.equal(got.stdout, want.stdout, `after append ${i}`);
    }
    const meta = (key: string): number =>
      Number(server().psql(db, `SELECT value FROM convsearch_index.s1_meta WHERE key = '${key}'`).trim());
    assert.ok(meta('merged') > meta('compacted'), "the appends' segments were merged among themselves");
    const now = new Set(rows());
    assert.deepEqual(
      base.filter((id) => !now.has(id)),
      [],
      "the base's rows are all still there",
    );
  });

  test('snapshots appended to one run, synced one by one: the run is resumed and keeps its earlier postings (its segments span), through merges answers stay --no-index', async (t) => {
    if (skip(t)) return;
    const db = indexDb('grown');
    const store = wordyStore(join(tempDir(), 'sessions.db'), 30);
    assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).status, 0);
    for (let i = 1; i <= 12; i++) {
      appendTo(store, 'run-00003', `followup${'abcdefghijkl'[i - 1]} refund`);
      const synced = await cli(['index', 'sync', '--index', writerUrl(db), '--db', store]);
      assert.match(synced.stderr, /: 0 runs replayed, 1 resumed/, `append ${i}`);
      const query = ['search', 'refund', `followup${'abcdefghijkl'[i - 1]}`, 'followupa', '--scope', 'all', '--db', store];
      const want = await cli([...query, '--no-index']);
      const got = await cli([...query, '--index', readerUrl(db)]);
      assert.equal(got.stdout, want.stdout, `after append ${i}`);
    }
    const value = (sql: string): string => server().psql(db, sql).trim();
    assert.equal(
      value("SELECT seg_from < seg FROM convsearch_index.s1_runs WHERE run_id = 'run-00003'"),
      't',
      'its postings span segments',
    );
    assert.ok(
      Number(value("SELECT value FROM convsearch_index.s1_meta WHERE key = 'merged'")) >
        Number(value("SELECT value FROM convsearch_index.s1_meta WHERE key = 'compacted'")),
      'the updates were merged among themselves',
    );
  });

  test('staleness as data: an appended run and an edited run are each 1 run behind (stderr and --json); --fresh answers as --no-index', async (t) => {
    if (skip(t)) return;
    const db = indexDb('standing');
    const store = wordyStore(join(tempDir(), 'sessions.db'), 30);
    assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).status, 0);
    const commands = [['search', 'refund', 'ledger7', '--scope', 'all'], ['runs'], ['conversations']];
    // current: the document is --no-index's, plus `index` saying so
    for (const cmd of commands) {
      const via = await cli([...cmd, '--db', store, '--json', '--index', readerUrl(db)]);
      const replay = await cli([...cmd, '--db', store, '--json', '--no-index']);
      assert.equal(via.stderr, '', cmd[0]);
      assert.deepEqual(withoutIndex(via.stdout, 1), JSON.parse(replay.stdout), cmd[0]);
      const index = (JSON.parse(via.stdout) as { index: { behind_minutes: number; synced_at: string } }).index;
      assert.equal(index.behind_minutes, 0);
      assert.ok(Date.now() - Date.parse(index.synced_at) < 3_600_000, `synced_at ${index.synced_at}`);
    }
    const changes: Array<[string, string]> = [
      ['an appended run', wordyStore(join(tempDir(), 'more.db'), 31)],
      ['an edited run (one more snapshot)', wordyStore(join(tempDir(), 'edited.db'), 30, true)],
    ];
    for (const [what, changed] of changes) {
      copyFileSync(changed, store);
      const stale = await cli(search(store, ['--index', readerUrl(db)]));
      assert.match(
        stale.stderr,
        /^convsearch: warning: index postgresql:\/\/searcher@\S+ is behind \S*sessions\.db by 1 run and \d+ min \(it answers as of its last sync/,
        what,
      );
      const fresh = await cli(search(store, ['--index', readerUrl(db), '--fresh']));
      const replay = await cli(search(store, ['--no-index']));
      assert.equal(fresh.stdout, replay.stdout, `${what}: --fresh answers from the store`);
      assert.notEqual(fresh.stdout, stale.stdout, `${what}: the change shows in the answer`);
      assert.match(
        fresh.stderr,
        /^convsearch: warning: index \S+ is behind \S*sessions\.db by 1 run and \d+ min \(--fresh: answering from the store\)\n$/,
        what,
      );
      for (const cmd of commands) {
        const r = await cli([...cmd, '--db', store, '--json', '--index', readerUrl(db)]);
        assert.equal(r.status, 0, r.stderr);
        const index = (JSON.parse(r.stdout) as { index: Record<string, unknown> & { stores: unknown[] } }).index;
        checkShape(index, INDEX, '$.index');
        assert.deepEqual([index.shared, index.stale, index.behind_runs], [true, true, 1], `${what}: ${cmd[0]} --json`);
        assert.equal(typeof index.behind_minutes, 'number');
        assert.equal(index.stores.length, 1);
        const freshJson = await cli([...cmd, '--db', store, '--json', '--index', readerUrl(db), '--fresh']);
        const replayJson = await cli([...cmd, '--db', store, '--json', '--no-index']);
        assert.equal(freshJson.stdout, replayJson.stdout, `${what}: ${cmd[0]} --json --fresh`);
      }
      const tools = ['tools', '--db', store, '--json'];
      const freshTools = await cli([...tools, '--index', readerUrl(db), '--fresh']);
      assert.equal(freshTools.stdout, (await cli([...tools, '--no-index'])).stdout, `${what}: tools --fresh`);
      assert.match(freshTools.stderr, /--fresh: answering from the store/);
    }
    // synced again: current, and --fresh reads the index (nothing on stderr)
    assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).status, 0);
    const current = await cli([...commands[1]!, '--db', store, '--json', '--index', readerUrl(db), '--fresh']);
    assert.equal(current.stderr, '');
    assert.equal((JSON.parse(current.stdout) as { index: { stale: boolean } }).index.stale, false);
    // the stamp changed, no run's marks did (a rewrite in place, or only the file's times): stale, 0 runs behind
    const later = new Date(Date.now() + 5_000);
    utimesSync(store, later, later);
    const touched = await cli([...commands[1]!, '--db', store, '--json', '--index', readerUrl(db)]);
    assert.match(
      touched.stderr,
      /is behind \S*sessions\.db by \d+ min: no run was added, removed or appended to, but the store changed \(/,
    );
    const index = (JSON.parse(touched.stdout) as { index: { stale: boolean; behind_runs: number } }).index;
    assert.deepEqual([index.stale, index.behind_runs], [true, 0]);
  });

  test('two syncs at once: the second waits for the first, then finds the index current', async (t) => {
    if (skip(t)) return;
    const db = indexDb('twosyncs');
    const store = wordyStore(join(tempDir(), 'sessions.db'), 300);
    const [a, b] = await Promise.all([
      runCliAsync(['index', 'sync', '--index', writerUrl(db), '--db', store]),
      runCliAsync(['index', 'sync', '--index', writerUrl(db), '--db', store]),
    ]);
    assert.equal(a.status, 0, a.stderr);
    assert.equal(b.status, 0, b.stderr);
    const said = [a.stderr, b.stderr].sort();
    // exactly one built the store's part; the other, let in after its commit, had nothing to do
    assert.deepEqual(
      said.map((s) => (/300 runs replayed/.test(s) ? 'built' : /up to date/.test(s) ? 'current' : s)),
      ['built', 'current'],
    );
    const via = await cli(search(store, ['--index', readerUrl(db)]));
    assert.equal(via.stdout, (await cli(search(store, ['--no-index']))).stdout);
  });

  test('syncs of two stores into one index at once do not wait for each other (a lock per store)', async (t) => {
    if (skip(t)) return;
    const db = indexDb('twostores');
    const big = wordyStore(join(tempDir(), 'sessions.db'), 2500);
    const small = wordyStore(join(tempDir(), 'sessions.db'), 20);
    // the registry first: both stores' rows exist, so neither sync waits on the schema's lock below
    assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', small])).status, 0);
    copyFileSync(wordyStore(join(tempDir(), 'more.db'), 40), small);
    const long = syncProcess(writerUrl(db), [big]);
    await until(() => indexerWriting(db), 'the first sync to write');
    const other = await runCliAsync(['index', 'sync', '--index', writerUrl(db), '--db', small]);
    assert.equal(other.status, 0, other.stderr);
    assert.match(other.stderr, /: (20 runs replayed, 0 resumed|0 runs replayed, 20 resumed)/);
    assert.equal(long.child.exitCode, null, 'the other store synced while the first sync still held its transaction');
    const first = await long.done;
    assert.equal(first.status, 0, first.stderr);
    for (const store of [big, small])
      assert.equal((await cli(search(store, ['--index', readerUrl(db)]))).stdout, (await cli(search(store, ['--no-index']))).stdout);
  });

  test('index sync --rebuild: readers meanwhile are not blocked and answer from the old part; then from the new one', async (t) => {
    if (skip(t)) return;
    const db = indexDb('rebuild');
    const store = wordyStore(join(tempDir(), 'sessions.db'), 2500);
    assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).status, 0);
    const answer = (await cli(search(store, ['--no-index']))).stdout;
    const key = (): string => server().psql(db, "SELECT store_key FROM convsearch_index.stores WHERE identity NOT LIKE 'retired:%'").trim();
    const before = key();
    const child = spawn(process.execPath, [BIN, 'index', 'sync', '--rebuild', '--index', writerUrl(db), '--db', store], { cwd: ROOT });
    const rebuilt = new Promise<number | null>((res) => child.on('close', res));
    await until(() => indexerWriting(db), 'the rebuild to write');
    for (let i = 0; i < 3; i++) {
      const r = await runCliAsync(search(store, ['--index', readerUrl(db)]));
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, '', 'no notice: the old part answered');
      assert.equal(r.stdout, answer);
      assert.equal(child.exitCode, null, 'the reader did not wait for the rebuild to commit');
    }
    assert.equal(await rebuilt, 0);
    assert.notEqual(key(), before, 'the rebuilt part has a key of its own');
    const after = await cli(search(store, ['--index', readerUrl(db)]));
    assert.equal(after.stdout, answer);
    assert.equal(after.stderr, '');
    // the old part is kept for searches that began before the commit, and dropped by a later sync
    assert.equal(server().psql(db, "SELECT count(*) FROM convsearch_index.stores WHERE identity LIKE 'retired:%'").trim(), '1');
    assert.notEqual(server().psql(db, `SELECT to_regclass('convsearch_index.s${before}_meta')`).trim(), '');
    // once no search can still read it (10 minutes: made older here), the next sync drops it
    server().psql(db, "UPDATE convsearch_index.stores SET synced_at = now() - interval '1 hour' WHERE identity LIKE 'retired:%'");
    assert.match((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).stderr, /up to date/);
    assert.equal(server().psql(db, `SELECT to_regclass('convsearch_index.s${before}_meta')`).trim(), '');
    assert.equal(server().psql(db, "SELECT count(*) FROM convsearch_index.stores WHERE identity LIKE 'retired:%'").trim(), '0');
    assert.equal((await cli(search(store, ['--index', readerUrl(db)]))).stdout, answer);
  });

  test('ids holding NUL, the escape character and lone surrogates round-trip through the shared index (answers as --no-index)', async (t) => {
    if (skip(t)) return;
    const db = indexDb('oddids');
    const odd = ['run\u0000nul', 'run\ue000esc', 'run\ud800lone', 'run\u0000\ue0000'];
    const store = buildStore((w) => {
      for (const [i, id] of odd.entries()) {
        w.registerRun({ runId: id, conversationId: `conv\u0000${i}\udc00`, startedAt: at(i), agentName: `agent\u0000${i}` });
        const messages = [userMsg(`refund question ${i} with a \u0000 nul and \ue000 escape`, i), assistantMsg(`ledger7 answer ${i}`, i)];
        w.saveSnapshot({ runId: id, stepIndex: 1, state: 'complete', timestamp: at(100 + i), messages });
      }
    });
    const synced = await cli(['index', 'sync', '--index', writerUrl(db), '--db', store]);
    assert.equal(synced.status, 0, synced.stderr);
    assert.match(synced.stderr, /4 runs replayed/);
    for (const cmd of [
      ['search', 'refund', 'ledger7', '--scope', 'all', '--json'],
      ['runs', '--json'],
      ['conversations', '--json'],
    ]) {
      const via = await cli([...cmd, '--db', store, '--index', readerUrl(db)]);
      const replay = await cli([...cmd, '--db', store, '--no-index']);
      assert.equal(via.status, 0, via.stderr);
      // the lone surrogate is stored as bytes that are not UTF-8: said the same way by both
      assert.equal(via.stderr, replay.stderr, cmd[0]);
      assert.match(
        via.stderr,
        /^convsearch: warning: 1 run id\(s\) not UTF-8, .*stored as b'run\\xed\\xa0\\x80lone', runs row 3;[^\n]*\n$/,
        cmd[0],
      );
      assert.deepEqual(withoutIndex(via.stdout, 1), JSON.parse(replay.stdout), cmd[0]);
    }
    // what the server holds: NUL and the escape character escaped (a lone surrogate is U+FFFD in the SQLite store already)
    const escaped = server().psql(db, 'SELECT count(*) FROM convsearch_index.s1_runs WHERE strpos(run_id, chr(57344)) > 0').trim();
    assert.equal(escaped, '3');
    // a resync reads the rows back: their checksums hold, nothing is rebuilt
    const again = await cli(['index', 'sync', '--index', writerUrl(db), '--db', store]);
    assert.match(again.stderr, /up to date/);
    assert.doesNotMatch(again.stderr, /damaged/);
  });

  test('a sync killed mid-write leaves the previous state; readers meanwhile see the old state or the new, never a mix', async (t) => {
    if (skip(t)) return;
    const db = indexDb('killed');
    const dir = tempDir();
    const store = join(dir, 'sessions.db');
    wordyStore(store, 200);
    const oldAnswer = (await cli(search(store, ['--no-index']))).stdout;
    assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).status, 0);
    // many appended runs: the next sync writes for a while
    copyFileSync(wordyStore(join(tempDir(), 'more.db'), 1200), store);
    const newAnswer = (await cli(search(store, ['--no-index']))).stdout;
    assert.notEqual(newAnswer, oldAnswer);

    const killed = syncProcess(writerUrl(db), [store]);
    await until(() => indexerWriting(db), 'the sync to write');
    killed.child.kill('SIGKILL');
    const k = await killed.done;
    assert.equal(k.signal, 'SIGKILL', 'killed before it finished');
    await until(
      () => server().psql(db, "SELECT count(*) FROM pg_stat_activity WHERE usename = 'indexer'").trim() === '0',
      'the server to end the session',
    );
    const afterKill = await cli(search(store, ['--index', readerUrl(db)]));
    assert.equal(afterKill.stdout, oldAnswer, 'the previous consistent state');
    assert.match(afterKill.stderr, /is behind/);

    // 4 readers while a sync runs to the end: each answer is the old one or the new one
    const sync = syncProcess(writerUrl(db), [store]);
    await until(() => indexerWriting(db), 'the sync to write');
    const readers: Array<Promise<CliResult>> = [];
    for (let i = 0; i < 4; i++) {
      readers.push(runCliAsync(search(store, ['--index', readerUrl(db)])));
      await new Promise((r) => setTimeout(r, 150));
    }
    const s = await sync.done;
    assert.equal(s.status, 0, s.stderr);
    for (const r of await Promise.all(readers)) {
      assert.equal(r.status, 0, r.stderr);
      assert.ok(r.stdout === oldAnswer || r.stdout === newAnswer, `a reader saw a third answer:\n${r.stdout.slice(0, 500)}`);
    }
    assert.equal((await cli(search(store, ['--index', readerUrl(db)]))).stdout, newAnswer);
  });

  test('a search reads only its query: the collection statistics, its terms’ postings (one partition each), the messages it prints', async (t) => {
    if (skip(t)) return;
    const db = indexDb('reads');
    const store = resolve(SQLITE_FIXTURES, 'threaded.db');
    assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).status, 0);
    const parts = server().psql(db, "SELECT count(*) FROM pg_inherits WHERE inhparent = 'convsearch_index.s1_postings'::regclass").trim();
    assert.equal(parts, '8', 'postings are hash-partitioned by term');
    const stats = (): Map<string, number> =>
      new Map(
        server()
          .psql(
            db,
            "SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) FROM pg_stat_user_tables WHERE schemaname = 'convsearch_index' AND coalesce(seq_scan, 0) + coalesce(idx_scan, 0) > 0",
          )
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split('|') as [string, string])
          .map(([name, rows]) => [name, Number(rows)]),
      );
    server().psql(db, 'SELECT pg_stat_reset()');
    const r = await cli(['search', 'refund', '--scope', 'all', '--db', store, '--index', readerUrl(db), '-m', '1', '-C', '1']);
    assert.equal(r.status, 0, r.stderr);
    // the server publishes a session's counts when it ends
    await until(() => stats().has('stores'), 'the statistics of the search');
    const read = stats();
    const total = (table: string): number => Number(server().psql(db, `SELECT count(*) FROM convsearch_index.${table}`).trim());
    assert.deepEqual(
      [...read.keys()].filter((k) => !/^s1_postings_p\d$/.test(k)).sort(),
      ['s1_corpus_cache', 's1_messages', 's1_meta', 's1_terms', 'stores'],
      'no runs, no page map, nothing of any other table',
    );
    assert.equal([...read.keys()].filter((k) => /^s1_postings_p\d$/.test(k)).length, 1, 'one postings partition');
    assert.equal(read.get('s1_corpus_cache'), 1);
    assert.equal(read.get('s1_terms'), 1, 'one directory bucket');
    assert.equal(read.get('stores'), 1);
    assert.ok(read.get('s1_messages')! <= 3, `the hit and its window, of ${total('s1_messages')}: ${read.get('s1_messages')}`);
    const windows = server().psql(
      db,
      "SELECT idx_scan FROM pg_stat_user_tables WHERE relname = 's1_messages' AND schemaname = 'convsearch_index'",
    );
    assert.equal(windows.trim(), '1', 'the window in one read');
  });

  test('the hits’ windows, of every store, are read in one statement (the answer --no-index’s)', async (t) => {
    if (skip(t)) return;
    const db = indexDb('windows');
    const stores = ['threaded', 'small'].map((s) => resolve(SQLITE_FIXTURES, `${s}.db`));
    const dbs = stores.flatMap((s) => ['--db', s]);
    assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), ...dbs])).status, 0);
    // the reader's statements, in the server's log from here on
    server().psql(db, `ALTER ROLE searcher IN DATABASE ${db} SET log_statement = 'all'`);
    const from = Number(server().psql(db, "SELECT size FROM pg_stat_file('server.log')").trim());
    const args = ['search', 'the', '--scope', 'all', ...dbs, '-m', '4', '-C', '1', '--format', 'tool'];
    const via = await cli([...args, '--index', readerUrl(db)]);
    const replay = await cli([...args, '--no-index']);
    assert.equal(via.status, 0, via.stderr);
    assert.equal(via.stdout, replay.stdout);
    assert.equal((via.stdout.match(/^\[score: /gm) ?? []).length, 4, 'four hits');
    assert.match(via.stdout, /store: \S*small\.db/);
    assert.match(via.stdout, /store: \S*threaded\.db/);
    const log = server().psql(db, `SELECT pg_read_file('server.log', ${from}, 100000000)`);
    const reads = log.split('\n').filter((l) => /LOG: +(statement|execute [^:]*): /.test(l) && /_messages\b/.test(l));
    assert.equal(reads.length, 1, `the windows of both stores in one statement:\n${reads.join('\n')}`);
    assert.match(reads[0]!, /s1_messages/);
    assert.match(reads[0]!, /s2_messages/);
  });

  test('damaged rows are never believed: readers replay (with a notice), the next sync rebuilds that store', async (t) => {
    if (skip(t)) return;
    const db = indexDb('damaged');
    const store = resolve(SQLITE_FIXTURES, 'threaded.db');
    const replay = (await cli(search(store, ['--no-index']))).stdout;
    assert.equal((await cli(['index', 'sync', '--index', writerUrl(db), '--db', store])).status, 0);
    const damaged = async (damage: string): Promise<void> => {
      assert.equal(server().psql(db, `WITH d AS (${damage} RETURNING 1) SELECT count(*) FROM d`).trim(), '1', damage);
      const r = await cli(search(store, ['--index', readerUrl(db)]));
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, replay);
      assert.match(
        r.stderr,
        /index unavailable, searching without it: index .*: the part of .*threaded\.db is damaged \(.*fails its checksum\); run convsearch index sync --rebuild/,
      );
    };
    const readsWell = async (): Promise<void> => {
      const again = await cli(search(store, ['--index', readerUrl(db)]));
      assert.equal(again.stdout, replay);
      assert.equal(again.stderr, '');
    };
    // found on open (meta): the next sync finds it too, and rebuilds the store's part
    await damaged("UPDATE convsearch_index.s1_meta SET value = value || '0' WHERE key = 'run_count'");
    const s = await cli(['index', 'sync', '--index', writerUrl(db), '--db', store]);
    assert.equal(s.status, 0, s.stderr);
    assert.match(s.stderr, /the tables of .*threaded\.db were damaged \(.*fails its checksum\); rebuilt them/);
    await readsWell();
    // found in the middle of an answer (a postings row the query reads): a sync that finds nothing
    // changed does not read it; --rebuild builds the part again (under a new key: the store's part now)
    const key = server().psql(db, "SELECT store_key FROM convsearch_index.stores WHERE identity NOT LIKE 'retired:%'").trim();
    await damaged(`UPDATE convsearch_index.s${key}_postings SET data = data || '\\x00'::bytea WHERE term = 'refund'`);
    const rebuilt = await cli(['index', 'sync', '--rebuild', '--index', writerUrl(db), '--db', store]);
    assert.equal(rebuilt.status, 0, rebuilt.stderr);
    assert.match(rebuilt.stderr, /threaded\.db: 7 runs replayed/);
    await readsWell();
  });

  test('the reader role cannot write the index; a store the index does not hold is replayed, with a notice', async (t) => {
    if (skip(t)) return;
    const db = indexDb('readonly');
    const small = resolve(SQLITE_FIXTURES, 'small.db');
    const r = await cli(['index', 'sync', '--index', readerUrl(db), '--db', small]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^convsearch: error: .*permission denied/);
    assert.equal(r.stderr.split('\n').length, 2, 'one line');
    const s = await cli(search(small, ['--index', readerUrl(db)]));
    assert.equal(s.stdout, (await cli(search(small, ['--no-index']))).stdout);
    assert.match(
      s.stderr,
      /index unavailable, searching without it: index postgresql:\/\/searcher@.* has no index in schema convsearch_index yet/,
    );
  });

  test('never in the evidence schema, never with the evidence role: refused, exit 2, password masked, nothing written', async (t) => {
    if (skip(t)) return;
    const s = server();
    s.createDb('evidence', join(FIXTURES, 'postgres', 'small.sql'));
    const store = s.url('evidence');
    const before = s.dump('evidence');
    const sameRole = s.url('evidence', 'postgres', 'hunter2');
    for (const args of [['index', 'sync', '--index', sameRole, '--db', store], search(store, ['--index', sameRole])]) {
      const r = await cli(args);
      assert.equal(r.status, 2, r.stderr);
      assert.match(
        r.stderr,
        /^convsearch: error: refusing --index postgresql:\/\/postgres:\*\*\*@.* it connects as postgres, the role that reads the evidence/,
      );
      assert.doesNotMatch(r.stderr + r.stdout, /hunter2/);
    }
    // another role, but the evidence's schema (public holds the store's tables)
    for (const args of [
      ['index', 'sync', '--index', writerUrl('evidence', 'public'), '--db', store],
      search(store, ['--index', writerUrl('evidence', 'public')]),
    ]) {
      const r = await cli(args);
      assert.equal(r.status, 2, r.stderr);
      assert.match(
        r.stderr,
        /refusing --index .*schema public holds tables that are not convsearch's index \(step_persistence_.*step_persistence_runs/,
      );
    }
    assert.equal(s.dump('evidence'), before, 'the evidence database is untouched');
    // a bad schema name or another server kind is refused before connecting
    const bad = await cli(search(store, ['--index', writerUrl('evidence', 'Robert%27)%3B')]));
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /invalid schema name/);
    for (const key of ['table', 'media']) {
      const r = await cli(search(store, ['--index', `${writerUrl('evidence')}?${key}=step_persistence`]));
      assert.equal(r.status, 2);
      assert.match(r.stderr, new RegExp(`\\?${key}= names a store's tables; the index takes \\?schema=`));
    }
    const verify = await cli(search(store, ['--index', writerUrl('evidence'), '--verify']));
    assert.equal(verify.status, 2);
    assert.match(
      verify.stderr,
      /--verify compares a local index with the store; a shared index .* is brought up to date by convsearch index sync/,
    );
    const redis = await cli(search(store, ['--index', 'redis://127.0.0.1:1/0']));
    assert.equal(redis.status, 2);
    assert.match(redis.stderr, /a shared index lives in Postgres/);
  });
});
