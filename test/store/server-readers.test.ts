/**
 * The Postgres and Redis readers against real servers: least privilege (a SELECT-only role, a Redis ACL
 * user with read commands only and its key prefix), the store byte-identical before and after (pg_dump,
 * DUMP of every key), credentials (URL, PGPASSWORD, .pgpass; never printed), and a live writer
 * appending and pruning while the reader reads (never an error, never two states mixed).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StoreError } from '../../src/store/errors.js';
import { cli } from '../helpers/cli.js';
import { openStoreReader } from '../../src/store/open-reader.js';
import type { StoreReader } from '../../src/store/reader.js';
import { FIXTURES, STORES, startPostgres, startRedis, type PgServer, type RedisServer, need, withReader } from '../helpers/servers.js';
import { tempDir } from '../helpers/stores.js';

let pg: PgServer | string = 'not started';
let redis: RedisServer | string = 'not started';
const PREFIX = 'pydantic-ai-harness:step';
const WRITER = fileURLToPath(new URL('../helpers/backend-writer.js', import.meta.url));

before(async () => {
  pg = await startPostgres();
  redis = await startRedis();
  if (typeof pg !== 'string') {
    for (const store of STORES) pg.createDb(store, join(FIXTURES, 'postgres', `${store}.sql`));
    pg.psql('postgres', "CREATE ROLE reader LOGIN PASSWORD 'r3ad:only@pw'");
    for (const store of STORES) {
      const tables = pg.psql(store, "SELECT string_agg(tablename, ',') FROM pg_tables WHERE schemaname = 'public'").trim();
      pg.psql(store, `GRANT SELECT ON ${tables} TO reader`);
    }
  }
  if (typeof redis !== 'string') {
    STORES.forEach((store, db) => {
      (redis as RedisServer).load(db, join(FIXTURES, 'redis', `${store}.redis`));
    });
    // read commands only (and SELECT, for the stores in db 1..3), on the store's keys only
    redis.cli(0, [
      'ACL',
      'SETUSER',
      'reader',
      'on',
      '>r3ad:only@pw',
      'resetkeys',
      `~${PREFIX}:*`,
      'resetchannels',
      '-@all',
      '+@read',
      '+select',
    ]);
  }
});

after(() => {
  if (typeof pg !== 'string') pg.stop();
  if (typeof redis !== 'string') redis.stop();
});

/** Everything a reader can be asked, as one string. */
function readAll(r: StoreReader): string {
  const runs = r.runs();
  return JSON.stringify({
    runs,
    count: r.runCount(),
    snapshots: runs.map((run) => [
      [...r.completeSnapshots(run.runId)],
      [...r.interruptedSnapshots(run.runId)],
      r.completeUpToSeq(run.runId, 2),
    ]),
    after: runs.map((run) => [...r.completeSnapshotsAfter(run.runId, 1)].map((s) => s.seq)),
    marks: [...r.watermarks()],
    counts: [...r.countsByRun()],
    steps: [...r.lastSteps()],
    media: [
      '8e12ad50fbe27f192fb4d1f0f0aadd071e8c4571787d7bc41db87d0cde5b4b73',
      'a999af7472065bb4b7d107d1566180b6d8add48a742ca85063991f43e44c28f3',
    ].map((s) => r.media(s)?.toString('base64') ?? null),
    stamp: r.stamp(),
    unchanged: r.unchanged(),
  });
}

describe('Postgres reader', () => {
  it('a role with SELECT only reads everything the superuser reads; pg_dump is identical before and after', (t) => {
    const s = need(t, pg);
    if (!s) return;
    for (const store of STORES) {
      const before = s.dump(store);
      const asOwner = withReader(s.url(store), readAll);
      const asReader = withReader(s.url(store, 'reader', 'r3ad:only@pw'), readAll);
      assert.ok(asReader === asOwner, `${store}: same answers with SELECT only`);
      assert.equal(s.dump(store), before, `${store}: unchanged`);
    }
  });

  it('noteRuns tells what runs() tells, and lists no run when every started_at has an offset', (t) => {
    const s = need(t, pg);
    if (!s) return;
    s.createDb('naive', join(FIXTURES, 'postgres', 'small.sql'));
    const url = s.url('naive');
    const told = (r: StoreReader): unknown => r.notices().map((n) => [n.kind, n.runId, n.detail]);
    const compare = (what: string, listed: boolean): void => {
      const noted = openStoreReader(url);
      const read = openStoreReader(url);
      try {
        noted.noteRuns!();
        read.runs();
        assert.deepEqual(told(noted), told(read), what);
        // (the listing a reader keeps once read)
        assert.equal((noted as unknown as { runList: unknown }).runList !== null, listed, `${what}: listed`);
      } finally {
        noted.close();
        read.close();
      }
    };
    compare('every started_at with an offset', false);
    const first = s.psql('naive', 'SELECT min(run_id) FROM step_persistence_runs').trim();
    for (const naive of ['2025-03-01T09:30:00', '2025-03-01', '2025-03-01T09:30:00.5', '2025-03-01 09:30']) {
      s.psql('naive', `UPDATE step_persistence_runs SET started_at = '${naive}' WHERE run_id = '${first}'`);
      compare(`a naive ${naive}`, true);
      assert.ok(
        (() => {
          const r = openStoreReader(url);
          try {
            r.noteRuns!();
            return r.notices().some((n) => n.kind === 'naive-started-at');
          } finally {
            r.close();
          }
        })(),
        `${naive}: told`,
      );
    }
    // a form only the listing can judge (lowercase z: not an offset to the parser) is listed, and fails as runs() does
    s.psql('naive', `UPDATE step_persistence_runs SET started_at = '2025-03-01T09:30:00z' WHERE run_id = '${first}'`);
    const r = openStoreReader(url);
    try {
      assert.throws(() => r.noteRuns!(), StoreError);
    } finally {
      r.close();
    }
  });

  it('holds one read-only transaction (no transaction id: nothing written), rolled back on close', (t) => {
    const s = need(t, pg);
    if (!s) return;
    const r = openStoreReader(s.url('small', 'reader', 'r3ad:only@pw'));
    r.runs();
    const activity = s
      .psql('postgres', "SELECT state, backend_xid IS NULL, xact_start IS NOT NULL FROM pg_stat_activity WHERE usename = 'reader'")
      .trim();
    assert.equal(activity, 'idle in transaction|t|t');
    r.close();
    const deadline = Date.now() + 5000;
    while (s.psql('postgres', "SELECT count(*) FROM pg_stat_activity WHERE usename = 'reader'").trim() !== '0' && Date.now() < deadline);
    assert.equal(s.psql('postgres', "SELECT count(*) FROM pg_stat_activity WHERE usename = 'reader'").trim(), '0');
  });

  it('takes the password from the URL, PGPASSWORD or ~/.pgpass, and never prints it', (t) => {
    const s = need(t, pg);
    if (!s) return;
    // the environment is the reader's option (default: the process's), never this process's, changed
    const runs = (target: string, env: NodeJS.ProcessEnv = {}): number => withReader(target, (r) => r.runCount(), env);
    const bare = s.url('small', 'reader');
    assert.equal(runs(s.url('small', 'reader', 'r3ad:only@pw')), 5);
    assert.equal(runs(bare, { PGPASSWORD: 'r3ad:only@pw' }), 5);
    const file = join(tempDir(), 'pgpass');
    writeFileSync(file, `127.0.0.1:${s.port}:small:reader:r3ad\\:only@pw\n`);
    chmodSync(file, 0o600);
    assert.equal(runs(bare, { PGPASSFILE: file }), 5);
    const wrong = s.url('small', 'reader', 'not-the-secret-pw');
    assert.throws(
      () => runs(wrong),
      (e: unknown) =>
        e instanceof StoreError && /password authentication failed/.test(e.message) && !e.message.includes('not-the-secret-pw'),
    );
    const r = openStoreReader(s.url('small', 'reader', 'r3ad:only@pw'));
    assert.ok(!r.label.includes('r3ad') && !r.identity.includes('r3ad') && !r.identity.includes('reader'), `${r.label} ${r.identity}`);
    r.close();
  });

  it("a command run in-process reads PGPASSWORD and PGPASSFILE from its sink's environment", async (t) => {
    const s = need(t, pg);
    if (!s) return;
    const bare = s.url('small', 'reader');
    const file = join(tempDir(), 'pgpass');
    writeFileSync(file, `127.0.0.1:${s.port}:small:reader:r3ad\\:only@pw\n`);
    chmodSync(file, 0o600);
    for (const env of [{ PGPASSWORD: 'r3ad:only@pw' }, { PGPASSFILE: file }]) {
      const r = await cli(['runs', '--json', '--no-index', '--db', bare], { env });
      assert.equal(r.status, 0, `${JSON.stringify(env)}: ${r.stderr}`);
      assert.equal((JSON.parse(r.stdout) as { runs: unknown[] }).runs.length, 5);
      assert.ok(!r.stdout.includes('r3ad') && !r.stderr.includes('r3ad'));
    }
    // and nothing else's: without them the login fails, whatever this process's environment holds
    const none = await cli(['runs', '--json', '--no-index', '--db', bare], {
      env: { PGPASSWORD: '', PGPASSFILE: join(tempDir(), 'none') },
    });
    assert.equal(none.status, 2, none.stderr);
    // one line that says what is missing, not the driver's "client password must be a string"
    const lines = none.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, none.stderr);
    assert.match(
      lines[0]!,
      /^convsearch: error: postgresql:\/\/reader@127\.0\.0\.1:\d+\/small: the server asks for a password and none was given/,
    );
    assert.match(lines[0]!, /\?password=, PGPASSWORD, or a PGPASSFILE \/ ~\/\.pgpass line/);
  });

  it('says clearly what is wrong: no such tables (another ?table=), no such database, no server', (t) => {
    const s = need(t, pg);
    if (!s) return;
    assert.throws(() => openStoreReader(s.url('small', 'postgres', undefined, '?table=other')), /no other_runs and other_snapshots table/);
    assert.throws(
      () => openStoreReader(s.url('nosuchdb')),
      (e: unknown) => e instanceof StoreError && /nosuchdb/.test(e.message),
    );
    assert.throws(() => openStoreReader(`postgresql://postgres@127.0.0.1:1/x?connect_timeout=2`), StoreError);
  });

  it('under a live writer: the transaction shows one state to every call until close', (t) => {
    const s = need(t, pg);
    if (!s) return;
    s.createDb('live', join(FIXTURES, 'postgres', 'small.sql'));
    const r = openStoreReader(s.url('live'));
    const first = readAll(r);
    s.psql(
      'live',
      `INSERT INTO step_persistence_runs VALUES ('run-new', 'conv-alpha', NULL, NULL, '{}', '2025-03-01T09:00:00+00:00', NULL);
       INSERT INTO step_persistence_snapshots (run_id, step_index, timestamp, state, messages) VALUES ('run-alpha-1', 9, '2025-03-01T10:00:00+00:00', 'complete', '[]');
       DELETE FROM step_persistence_snapshots WHERE seq = (SELECT min(seq) FROM step_persistence_snapshots)`,
    );
    assert.ok(readAll(r) === first, 'the same state after commits by another session');
    const fresh = openStoreReader(s.url('live'));
    assert.notEqual(fresh.stamp(), r.stamp());
    assert.equal(fresh.runCount(), 6);
    fresh.close();
    r.close();
  });

  it('a writer appending and pruning meanwhile never makes a read fail or mix states', async (t) => {
    const s = need(t, pg);
    if (!s) return;
    s.createDb('busy', join(FIXTURES, 'postgres', 'small.sql'));
    const writer = spawn(process.execPath, [WRITER, 'postgres', s.url('busy'), 'step_persistence', 'run-alpha-1', '300', '5'], {
      stdio: 'inherit',
    });
    const done = new Promise<number | null>((resolve) => writer.on('exit', resolve));
    let reads = 0;
    let exited = false;
    void done.then(() => (exited = true));
    while (!exited || reads < 3) {
      withReader(s.url('busy'), (r) => {
        const snaps = [...r.completeSnapshots('run-alpha-1')];
        // one state: the counts taken in the same transaction agree with the rows read
        assert.equal(r.countsByRun().get('run-alpha-1')!.complete, snaps.length);
        assert.deepEqual(r.completeUpToSeq('run-alpha-1', Number.MAX_SAFE_INTEGER), {
          count: snaps.length,
          maxSeq: snaps[snaps.length - 1]!.seq,
        });
        for (const x of snaps) JSON.parse(x.messages as string);
      });
      reads++;
      await new Promise((res) => setImmediate(res));
    }
    assert.equal(await done, 0);
    assert.ok(reads >= 3);
  });
});

describe('Redis reader', () => {
  it('an ACL user with read commands only (and the store prefix) reads everything; every key is identical before and after', (t) => {
    const s = need(t, redis);
    if (!s) return;
    STORES.forEach((store, db) => {
      const before = s.dump(db);
      s.cli(db, ['CONFIG', 'RESETSTAT']);
      const asDefault = withReader(s.url(db), readAll);
      const asUser = s.url(db, { user: 'reader', password: 'r3ad:only@pw' });
      const asReader = withReader(asUser, readAll);
      assert.ok(asReader === asDefault, `${store}: same answers with +@read only`);
      // and the stamp proved from a recorded one (listing and probe, no index read)
      const recorded = (JSON.parse(asReader) as { stamp: string }).stamp;
      assert.equal(
        withReader(asUser, (r) => r.stamp(recorded)),
        recorded,
        `${store}: the recorded stamp holds`,
      );
      const used = s
        .cli(db, ['INFO', 'commandstats'])
        .split('\n')
        .map((l) => /^cmdstat_([^:]+):/.exec(l)?.[1])
        .filter((c): c is string => c !== undefined && !['config|resetstat', 'info'].includes(c));
      for (const c of used)
        assert.ok(
          ['get', 'mget', 'getrange', 'smembers', 'zrange', 'exists', 'select', 'auth'].includes(c),
          `${c} is a read or connection command`,
        );
      assert.equal(s.dump(db), before, `${store}: unchanged`);
    });
  });

  it('the user is refused what it may not do, and the reader reports it in one line without the password', (t) => {
    const s = need(t, redis);
    if (!s) return;
    assert.throws(
      () => withReader(s.url(0, { user: 'reader', password: 'wrong-secret' }), (r) => r.runs()),
      (e: unknown) => e instanceof StoreError && !e.message.includes('wrong-secret') && !e.message.includes('\n'),
    );
    assert.throws(
      () => withReader(s.url(0, { user: 'reader', password: 'r3ad:only@pw' }, '?prefix=other'), (r) => r.runs()),
      (e: unknown) => e instanceof StoreError && /NOPERM|permission/i.test(e.message),
    );
    // a refused SELECT is an error, never a silent read of db 0
    s.cli(0, ['ACL', 'SETUSER', 'nosel', 'on', '>pw', 'resetkeys', `~${PREFIX}:*`, '-@all', '+@read']);
    assert.throws(
      () => withReader(s.url(1, { user: 'nosel', password: 'pw' }), (r) => r.runs()),
      (e: unknown) => e instanceof StoreError && /NOPERM|permission/i.test(e.message),
    );
  });

  it('falls back to the older layout (runs set), keeps both sets when a store has both', (t) => {
    const s = need(t, redis);
    if (!s) return;
    const db = 9;
    s.load(db, join(FIXTURES, 'redis', 'small.redis'));
    s.cli(db, ['RENAME', `${PREFIX}:runs:all`, `${PREFIX}:runs`]);
    assert.equal(
      withReader(s.url(db), (r) => r.runCount()),
      5,
    );
    s.cli(db, ['SMOVE', `${PREFIX}:runs`, `${PREFIX}:runs:all`, 'run-alpha-1']);
    assert.equal(
      withReader(s.url(db), (r) => r.runCount()),
      5,
    );
    s.cli(db, ['FLUSHDB']);
  });

  it("reads index members as Python's int() reads them, spaces, underscores and other scripts' digits included", (t) => {
    const s = need(t, redis);
    if (!s) return;
    const db = 12;
    s.load(db, join(FIXTURES, 'redis', 'small.redis'));
    const payload = s.cli(db, ['GET', `${PREFIX}:snapshot:{run-alpha-1}:3`]).trim();
    for (const seq of ['8', '9', '10', '11']) s.cli(db, ['SET', `${PREFIX}:snapshot:{run-alpha-1}:${seq}`, payload]);
    s.cli(db, [
      'ZADD',
      `${PREFIX}:snapshots:{run-alpha-1}`,
      '8',
      ' 8:complete',
      '9',
      '0_9:complete',
      '10',
      '١٠:complete',
      '11',
      '+11:interrupted',
    ]);
    withReader(s.url(db), (r) => {
      assert.deepEqual(
        [...r.completeSnapshots('run-alpha-1')].map((x) => x.seq),
        [1, 2, 3, 8, 9, 10],
      );
      assert.deepEqual(
        [...r.interruptedSnapshots('run-alpha-1')].map((x) => x.seq),
        [11],
      );
      assert.deepEqual(r.notices(), []);
    });
    s.cli(db, ['FLUSHDB']);
  });

  it('skips and counts what upstream skips: an expired run record, a foreign index member, a payload gone, bytes not UTF-8', (t) => {
    const s = need(t, redis);
    if (!s) return;
    const db = 10;
    s.load(db, join(FIXTURES, 'redis', 'small.redis'));
    s.cli(db, ['SADD', `${PREFIX}:runs:all`, 'run-expired']);
    s.cli(db, ['ZADD', `${PREFIX}:snapshots:{run-alpha-1}`, '4', 'x:complete', '5', '5:paused', '6', '06:complete', '7', '7:complete']);
    s.cli(db, ['DEL', `${PREFIX}:snapshot:{run-alpha-1}:7`]);
    s.cli(db, [], `SET "${PREFIX}:snapshot:{run-alpha-1}:6" "\\xff\\xfe"\n`);
    withReader(s.url(db), (r) => {
      assert.equal(r.runCount(), 5);
      const snaps = [...r.completeSnapshots('run-alpha-1')];
      assert.deepEqual(
        snaps.map((x) => [x.seq, typeof x.messages === 'string' ? 'ok' : (x as unknown as { problem: string }).problem]),
        [
          [1, 'ok'],
          [2, 'ok'],
          [3, 'ok'],
          [6, 'snapshot payload is not valid UTF-8'],
        ],
      );
      assert.deepEqual(
        r.notices().map((n) => [n.kind, n.runId, n.seq]),
        [
          ['vanished-run', 'run-expired', null],
          ['foreign-snapshot-entry', 'run-alpha-1', null],
          ['foreign-snapshot-entry', 'run-alpha-1', null],
          ['vanished-snapshot', 'run-alpha-1', 7],
        ],
      );
      assert.deepEqual(r.watermarks().get('run-alpha-1'), { count: 4, maxSeq: 7 });
    });
    s.cli(db, ['FLUSHDB']);
  });

  it('under a live writer: each run is one view (index, then payloads); a payload gone is skipped and counted, a new one unseen', (t) => {
    const s = need(t, redis);
    if (!s) return;
    const db = 11;
    s.load(db, join(FIXTURES, 'redis', 'small.redis'));
    const r = openStoreReader(s.url(db)) as StoreReader;
    const fp = r.stamp();
    // prune the oldest, append a new one (upstream's write order)
    s.cli(db, ['DEL', `${PREFIX}:snapshot:{run-alpha-1}:1`]);
    s.cli(db, ['ZREM', `${PREFIX}:snapshots:{run-alpha-1}`, '1:complete']);
    s.cli(db, ['INCR', `${PREFIX}:snapshots:seq:{run-alpha-1}`]);
    s.cli(db, [
      'SET',
      `${PREFIX}:snapshot:{run-alpha-1}:4`,
      '{"run_id":"run-alpha-1","step_index":4,"timestamp":"2025-03-01T09:09:00Z","messages":[],"state":"complete"}',
    ]);
    s.cli(db, ['ZADD', `${PREFIX}:snapshots:{run-alpha-1}`, '4', '4:complete']);
    assert.deepEqual(
      [...r.completeSnapshots('run-alpha-1')].map((x) => x.seq),
      [2, 3],
    );
    assert.deepEqual(
      r.notices().map((n) => [n.kind, n.seq]),
      [['vanished-snapshot', 1]],
    );
    assert.equal(r.stamp(), fp);
    assert.equal(r.unchanged(), true);
    r.close();
    withReader(s.url(db), (fresh) => {
      assert.notEqual(fresh.stamp(), fp);
      assert.deepEqual(
        [...fresh.completeSnapshots('run-alpha-1')].map((x) => x.seq),
        [2, 3, 4],
      );
    });
    // a payload that expired while its index member stayed changes the stamp too
    const before = withReader(s.url(db), (x) => x.stamp());
    s.cli(db, ['DEL', `${PREFIX}:snapshot:{run-alpha-1}:2`]);
    assert.notEqual(
      withReader(s.url(db), (x) => x.stamp()),
      before,
    );
    s.cli(db, ['FLUSHDB']);
  });

  it('a writer appending and pruning meanwhile never makes a read fail; every payload read is whole', async (t) => {
    const s = need(t, redis);
    if (!s) return;
    const db = 12;
    s.load(db, join(FIXTURES, 'redis', 'small.redis'));
    const writer = spawn(process.execPath, [WRITER, 'redis', s.url(db), PREFIX, 'run-alpha-1', '300', '5'], { stdio: 'inherit' });
    const done = new Promise<number | null>((resolve) => writer.on('exit', resolve));
    let reads = 0;
    let exited = false;
    void done.then(() => (exited = true));
    while (!exited || reads < 3) {
      withReader(s.url(db), (r) => {
        const view = r.watermarks().get('run-alpha-1');
        const snaps = [...r.completeSnapshots('run-alpha-1')];
        const gone = r.notices().filter((n) => n.kind === 'vanished-snapshot').length;
        // every payload the view found is read (whole) or counted as gone since; nothing newer appears
        assert.ok(view !== undefined);
        assert.ok(
          snaps.length <= view.count && snaps.length + gone >= view.count,
          `${snaps.length} read, ${gone} gone, ${view.count} in view`,
        );
        assert.ok(snaps.every((x, i) => x.seq <= view.maxSeq && (i === 0 || x.seq > snaps[i - 1]!.seq)));
        for (const x of snaps) JSON.parse(x.messages as string);
      });
      reads++;
      await new Promise((res) => setImmediate(res));
    }
    assert.equal(await done, 0);
    s.cli(db, ['FLUSHDB']);
  });
});
