/**
 * The index over a FileStepStore tree, a Postgres database and a Redis key space: a search while nothing
 * changed answers from the index after the store's stamp alone (no snapshot read); any change a search
 * could see changes the stamp, so the content is compared and the answer is the store's new one.
 * Real servers (scripts/lib/servers.ts); skipped with a reason without them, a failure under
 * CONVSEARCH_REQUIRE_SERVERS=1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStoreReader } from '../../src/store/open-reader.js';
import { compareCodePoints } from '../../src/store/instant.js';
import type { StoreReader } from '../../src/store/reader.js';
import { openIndexedSource } from '../../src/sidecar/with-index.js';
import { spawn } from 'node:child_process';
import { BIN, cli, runCliAsync } from '../helpers/cli.js';
import { FIXTURES, startPostgres, startRedis, type PgServer, type RedisServer, need } from '../helpers/servers.js';
import { tempDir } from '../helpers/stores.js';
import pgDriver from 'pg';
import Database from 'better-sqlite3';

let pg: PgServer | string = 'not started';
let redis: RedisServer | string = 'not started';
const PREFIX = 'pydantic-ai-harness:step';

before(async () => {
  pg = await startPostgres();
  redis = await startRedis();
});

after(() => {
  if (typeof pg !== 'string') pg.stop();
  if (typeof redis !== 'string') redis.stop();
});

/** Brings the index at `index` up to date with `target`: whether it had to read the content, and the stamp it recorded. */
function sync(target: string, index: string): { contentChecked: boolean; replayed: number; resumed: number; stamp: string | null } {
  const store = openStoreReader(target);
  try {
    const o = openIndexedSource(store, { path: index });
    const stamp = o.db.prepare("SELECT value FROM meta WHERE key = 'store_stamp'").pluck().get() as string | null;
    o.db.close();
    return { contentChecked: o.report.contentChecked, replayed: o.report.runsReplayed, resumed: o.report.runsResumed, stamp };
  } finally {
    store.close();
  }
}

/** How many hits a store-wide search for `word` finds, through the index and by replaying the store. */
async function hits(target: string, index: string, word: string): Promise<[number, number]> {
  const count = async (extra: string[]): Promise<number> => {
    const r = await cli(['search', word, '--db', target, '--scope', 'all', '--json', ...extra]);
    // exit 1: no match, as grep
    const n = (JSON.parse(r.stdout) as { hits: unknown[] }).hits.length;
    assert.equal(r.status, n > 0 ? 0 : 1, r.stderr);
    return n;
  };
  return [await count(['--index', index]), await count(['--no-index'])];
}

/** The first build reads everything; an unchanged store is then answered from its stamp alone, stably. */
function assertWarm(target: string, index: string): string {
  const first = sync(target, index);
  assert.equal(first.contentChecked, true);
  assert.ok(first.replayed > 0);
  const again = sync(target, index);
  assert.deepEqual(again, { contentChecked: false, replayed: 0, resumed: 0, stamp: first.stamp }, 'nothing changed: the stamp vouches');
  assert.ok(first.stamp, 'a stamp is recorded');
  return first.stamp!;
}

/** A saved payload of `run` whose one message says `the <word> report`, as upstream writes it. */
function redisPayload(run: string, seq: number, word: string): string {
  const message = {
    parts: [{ content: `the ${word} report`, timestamp: '2025-03-01T09:09:00Z', part_kind: 'user-prompt' }],
    kind: 'request',
  };
  return JSON.stringify({ run_id: run, step_index: seq, timestamp: `2025-03-01T09:09:0${seq}Z`, messages: [message], state: 'complete' });
}

/** Calls of each command the server served since the last call (INFO commandstats), then counted from 0 again. */
function commandsServed(s: RedisServer, db: number): Map<string, number> {
  const stats = s.cli(db, ['INFO', 'commandstats']);
  s.cli(db, ['CONFIG', 'RESETSTAT']);
  return new Map([...stats.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
}

/** Upstream's registration of `run` in Redis db `db`, then one save a word (INCR, SET, ZADD), each payload holding that word alone. */
function saveRedisRun(s: RedisServer, db: number, run: string, words: readonly string[]): void {
  s.cli(db, [
    'SET',
    `${PREFIX}:run:{${run}}`,
    `{"run_id": "${run}", "conversation_id": null, "parent_run_id": null, "agent_name": null, "metadata": {}, "started_at": "2025-03-01T09:08:00+00:00"}`,
  ]);
  s.cli(db, ['SADD', `${PREFIX}:runs:all`, run]);
  words.forEach((word, i) => {
    const seq = i + 1;
    s.cli(db, ['INCR', `${PREFIX}:snapshots:seq:{${run}}`]);
    s.cli(db, ['SET', `${PREFIX}:snapshot:{${run}}:${seq}`, redisPayload(run, seq, word)]);
    s.cli(db, ['ZADD', `${PREFIX}:snapshots:{${run}}`, String(seq), `${seq}:complete`]);
  });
}

describe('index over other backends: the stamp', () => {
  it('FileStepStore: a replaced snapshot file changes the stamp; the index answers with the new text', async () => {
    const root = join(tempDir(), 'small');
    cpSync(join(FIXTURES, 'file', 'small'), root, { recursive: true });
    const index = join(tempDir(), 'idx.db');
    const stamp = assertWarm(root, index);
    assert.deepEqual(await hits(root, index, 'kubernetez'), [0, 0]);
    // the writer's way: a temp sibling renamed over the file (same length, new inode)
    for (const n of ['0', '1', '2']) {
      const file = join(root, 'run-alpha-1', 'snapshots', `${n}.json`);
      writeFileSync(`${file}.tmp`, readFileSync(file, 'utf8').replaceAll('Kubernetes', 'Kubernetez'));
      renameSync(`${file}.tmp`, file);
    }
    const after = sync(root, index);
    assert.equal(after.contentChecked, true);
    assert.notEqual(after.stamp, stamp);
    assert.deepEqual(await hits(root, index, 'kubernetez'), [1, 1]);
  });

  it('Postgres: one query vouches; an insert, a delete, an in-place update of the same length, a run edit each change it', async (t) => {
    const s = need(t, pg);
    if (!s) return;
    s.createDb('stamps', join(FIXTURES, 'postgres', 'small.sql'));
    const target = s.url('stamps');
    const index = join(tempDir(), 'idx.db');
    const seen = new Set([assertWarm(target, index)]);
    // each change, and what the content digests make of it: [rebuilt, resumed] runs
    const changes: Array<[string, [number, number]]> = [
      // rewritten in place (no harness writer does; an evidence tool must still notice)
      [
        "UPDATE step_persistence_snapshots SET messages = replace(messages, 'Kubernetes', 'Kubernetez') WHERE run_id = 'run-alpha-1'",
        [1, 0],
      ],
      ["UPDATE step_persistence_runs SET agent_name = 'triage' WHERE run_id = 'run-beta-1'", [0, 0]],
      // appended: the run's replay resumes where the index stopped
      [
        "INSERT INTO step_persistence_snapshots (run_id, step_index, timestamp, state, messages) SELECT run_id, step_index + 1, timestamp, state, messages FROM step_persistence_snapshots WHERE run_id = 'run-beta-2' ORDER BY seq DESC LIMIT 1",
        [0, 1],
      ],
      [
        "DELETE FROM step_persistence_snapshots WHERE seq = (SELECT min(seq) FROM step_persistence_snapshots WHERE run_id = 'run-beta-2')",
        [1, 0],
      ],
    ];
    for (const [sql, [rebuilt, resumed]] of changes) {
      s.psql('stamps', sql);
      const after = sync(target, index);
      assert.equal(after.contentChecked, true, sql);
      assert.deepEqual([after.replayed, after.resumed], [rebuilt, resumed], sql);
      assert.ok(!seen.has(after.stamp!), `stamp changed after ${sql}`);
      seen.add(after.stamp!);
      assert.equal(sync(target, index).contentChecked, false, 'and vouches again');
      if (sql.includes('Kubernetez')) assert.deepEqual(await hits(target, index, 'kubernetez'), [1, 1]);
    }
  });

  it('Postgres: the transaction snapshot vouches only while nothing committed; each change the rows could hide is noticed', async (t) => {
    const s = need(t, pg);
    if (!s) return;
    s.createDb('signal', join(FIXTURES, 'postgres', 'small.sql'));
    s.createDb('elsewhere');
    const target = s.url('signal');
    const index = join(tempDir(), 'idx.db');
    const snapshots = 'step_persistence_snapshots';
    // run-alpha-1 is the only run that says Kubernetes; each change makes it say the same-length Kubernetez
    const kubernetez = "replace(messages, 'Kubernetes', 'Kubernetez')";
    const edited = (from: string): string => `${kubernetez} FROM ${from} WHERE run_id = 'run-alpha-1'`;
    const noticed = async (what: string, hitsAfter: [number, number]): Promise<void> => {
      const after = sync(target, index);
      assert.equal(after.contentChecked, true, what);
      assert.deepEqual(await hits(target, index, 'kubernetez'), hitsAfter, what);
      assert.equal(sync(target, index).contentChecked, false, `${what}: and vouches again`);
    };
    let stamp = assertWarm(target, index);
    // a commit elsewhere on the server moves the snapshot, not these rows: no content check; while another
    // writer holds the index, the stamp is kept as it is, and the search waits for no one
    const rows = (st: string): string => st.slice(st.indexOf(':', 4) + 1);
    s.psql('elsewhere', 'CREATE TABLE t (x int); INSERT INTO t VALUES (1)');
    const holder = new Database(index);
    holder.exec('BEGIN IMMEDIATE');
    const started = Date.now();
    try {
      assert.deepEqual(sync(target, index), { contentChecked: false, replayed: 0, resumed: 0, stamp });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    assert.ok(Date.now() - started < 10_000, 'the index busy: not waited for (its busy timeout is 60 s)');
    // then the stamp of this snapshot is recorded in its place (the same rows), which proves it alone next time
    const fresh = sync(target, index);
    assert.deepEqual({ ...fresh, stamp: rows(fresh.stamp!) }, { contentChecked: false, replayed: 0, resumed: 0, stamp: rows(stamp) });
    assert.notEqual(fresh.stamp, stamp, 'the snapshot part moved');
    const reader = openStoreReader(target);
    try {
      assert.equal(reader.stamp(fresh.stamp), fresh.stamp);
      assert.equal(reader.freshStamp?.(), undefined, 'proved by the snapshot: the rows were not queried');
      assert.equal(reader.stamp(stamp), stamp, 'the stale stamp still vouches, by its rows');
    } finally {
      reader.close();
    }
    stamp = fresh.stamp!;
    assert.deepEqual(sync(target, index), { contentChecked: false, replayed: 0, resumed: 0, stamp });

    // a row deleted and inserted again under its seq, one word changed (same count, same last seq)
    s.psql(
      'signal',
      `BEGIN; CREATE TEMP TABLE old AS SELECT * FROM ${snapshots} WHERE run_id = 'run-alpha-1';
       DELETE FROM ${snapshots} WHERE run_id = 'run-alpha-1';
       INSERT INTO ${snapshots} (seq, run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages)
         OVERRIDING SYSTEM VALUE SELECT seq, run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, ${edited('old')};
       COMMIT`,
    );
    await noticed('deleted and inserted again', [1, 1]);
    // TRUNCATE and a reload of the same rows, the word changed back
    s.psql(
      'signal',
      `BEGIN; CREATE TEMP TABLE old AS SELECT * FROM ${snapshots}; TRUNCATE ${snapshots};
       INSERT INTO ${snapshots} OVERRIDING SYSTEM VALUE SELECT * FROM old WHERE run_id <> 'run-alpha-1';
       INSERT INTO ${snapshots} (seq, run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages)
         OVERRIDING SYSTEM VALUE SELECT seq, run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state,
           replace(messages, 'Kubernetez', 'Kubernetes') FROM old WHERE run_id = 'run-alpha-1';
       COMMIT`,
    );
    await noticed('truncated and reloaded', [0, 0]);

    // a writer's transaction open while the index recorded its stamp, committed after it: the next
    // transaction id has not moved since (a later commit came first), only the list of those in progress
    const writer = new pgDriver.Client({ connectionString: target });
    await writer.connect();
    try {
      await writer.query('BEGIN');
      await writer.query(`UPDATE ${snapshots} SET messages = ${kubernetez} WHERE run_id = 'run-alpha-1'`);
      s.psql('signal', "UPDATE step_persistence_runs SET agent_name = 'triage' WHERE run_id = 'run-beta-1'");
      assert.equal(sync(target, index).contentChecked, true, 'the run edit is seen');
      assert.deepEqual(await hits(target, index, 'kubernetez'), [0, 0], 'the open transaction is not');
      await writer.query('COMMIT');
    } finally {
      await writer.end();
    }
    await noticed('committed after the stamp', [1, 1]);

    // the same store identity through another search_path: other tables, the same snapshot
    s.psql(
      'signal',
      `CREATE SCHEMA other; CREATE TABLE other.step_persistence_runs AS SELECT * FROM step_persistence_runs;
       CREATE TABLE other.${snapshots} AS SELECT * FROM ${snapshots};
       UPDATE other.${snapshots} SET messages = replace(messages, 'Kubernetez', 'Kubernetes');
       UPDATE step_persistence_runs SET agent_name = 'intake' WHERE run_id = 'run-beta-1'`,
    );
    // the run edit makes the index record the stamp of this very snapshot
    stamp = sync(target, index).stamp!;
    assert.equal(sync(target, index).contentChecked, false);
    const other = s.url('signal', undefined, undefined, '?options=-c%20search_path%3Dother');
    const viaOther = sync(other, index);
    assert.equal(viaOther.contentChecked, true, 'other tables are other content');
    assert.notEqual(viaOther.stamp, stamp);
    assert.deepEqual(await hits(other, index, 'kubernetez'), [0, 0]);

    // another role, which row security shows fewer rows: the same snapshot, other content
    s.psql(
      'signal',
      `CREATE ROLE stamp_reader LOGIN PASSWORD 'stamp-pw'; GRANT SELECT ON ALL TABLES IN SCHEMA public TO stamp_reader;
       ALTER TABLE ${snapshots} ENABLE ROW LEVEL SECURITY;
       CREATE POLICY hide_alpha ON ${snapshots} FOR SELECT TO stamp_reader USING (run_id <> 'run-alpha-1')`,
    );
    assert.equal(sync(target, index).contentChecked, true);
    assert.deepEqual(await hits(target, index, 'kubernetez'), [1, 1]);
    const limited = s.url('signal', 'stamp_reader', 'stamp-pw');
    assert.equal(sync(limited, index).contentChecked, true, 'rows another role cannot see are other content');
    assert.deepEqual(await hits(limited, index, 'kubernetez'), [0, 0]);
  });

  it('Postgres: after a commit elsewhere, 8 searches at once (2 more killed) answer as --no-index; the index ends with the new snapshot, sound', async (t) => {
    const s = need(t, pg);
    if (!s) return;
    s.createDb('fresh', join(FIXTURES, 'postgres', 'small.sql'));
    s.createDb('fresh_elsewhere');
    const target = s.url('fresh');
    const index = join(tempDir(), 'idx.db');
    const args = ['search', 'kubernetes', '--db', target, '--scope', 'all', '--json'];
    for (let round = 0; round < 3; round++) {
      const before = round === 0 ? assertWarm(target, index) : sync(target, index).stamp!;
      s.psql('fresh_elsewhere', `CREATE TABLE t${round} (x int)`);
      const want = await runCliAsync([...args, '--no-index']);
      assert.equal(want.status, 0, want.stderr);
      const killed = [60, 140].map((ms) => {
        const p = spawn(process.execPath, [BIN, ...args, '--index', index], { stdio: 'ignore' });
        const timer = setTimeout(() => p.kill('SIGKILL'), ms + round * 30);
        return new Promise((resolve) => p.on('close', resolve)).finally(() => clearTimeout(timer));
      });
      const answers = await Promise.all(Array.from({ length: 8 }, () => runCliAsync([...args, '--index', index])));
      await Promise.all(killed);
      for (const [i, r] of answers.entries()) {
        assert.equal(r.stderr, want.stderr, `round ${round} search ${i}`);
        assert.equal(r.stdout, want.stdout, `round ${round} search ${i}`);
      }
      const after = sync(target, index);
      assert.equal(after.contentChecked, false, `round ${round}: the content was never read again`);
      assert.notEqual(after.stamp, before, `round ${round}: the new snapshot is recorded`);
      assert.equal(after.stamp!.slice(after.stamp!.indexOf(':', 4)), before.slice(before.indexOf(':', 4)), 'the same rows');
      const db = new Database(index, { readonly: true });
      try {
        assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
      } finally {
        db.close();
      }
    }
  });

  it('Redis: a new snapshot, an expired payload, a changed run record each change it', (t) => {
    const s = need(t, redis);
    if (!s) return;
    s.load(5, join(FIXTURES, 'redis', 'small.redis'));
    const target = s.url(5);
    const index = join(tempDir(), 'idx.db');
    const seen = new Set([assertWarm(target, index)]);
    const payload = '{"run_id":"run-alpha-1","step_index":4,"timestamp":"2025-03-01T09:09:00Z","messages":[],"state":"complete"}';
    const changes: Array<[string, string[][]]> = [
      [
        'a snapshot appended (upstream write order)',
        [
          ['INCR', `${PREFIX}:snapshots:seq:{run-alpha-1}`],
          ['SET', `${PREFIX}:snapshot:{run-alpha-1}:4`, payload],
          ['ZADD', `${PREFIX}:snapshots:{run-alpha-1}`, '4', '4:complete'],
        ],
      ],
      ['a payload expired, its index member kept', [['DEL', `${PREFIX}:snapshot:{run-beta-1}:1`]]],
      [
        'a run record rewritten',
        [
          [
            'SET',
            `${PREFIX}:run:{run-orphan-1}`,
            s
              .cli(5, ['GET', `${PREFIX}:run:{run-orphan-1}`])
              .trim()
              .replace('"agent_name": null', '"agent_name": "x"'),
          ],
        ],
      ],
    ];
    for (const [what, commands] of changes) {
      for (const c of commands) s.cli(5, c);
      const after = sync(target, index);
      assert.equal(after.contentChecked, true, what);
      assert.ok(!seen.has(after.stamp!), `stamp changed after ${what}`);
      seen.add(after.stamp!);
      assert.equal(sync(target, index).contentChecked, false, 'and vouches again');
    }
    s.cli(5, ['FLUSHDB']);
  });

  it('Redis: nothing changed reads no snapshot index (no command a run); a save caught half done, a prune and a payload gone are each noticed', async (t) => {
    const s = need(t, redis);
    if (!s) return;
    s.load(6, join(FIXTURES, 'redis', 'small.redis'));
    const target = s.url(6);
    const index = join(tempDir(), 'idx.db');
    assertWarm(target, index);
    const served = (): Map<string, number> => commandsServed(s, 6);
    served();
    assert.equal(sync(target, index).contentChecked, false);
    const warm = served();
    assert.equal(warm.get('zrange'), undefined, `no ZRANGE of the runs' indexes while nothing changed: ${JSON.stringify([...warm])}`);
    assert.ok((warm.get('exists') ?? 0) <= 1, "one EXISTS (of each run's first and last payload)");

    const message = (word: string): string =>
      JSON.stringify({
        parts: [{ content: `the ${word} report`, timestamp: '2025-03-01T09:09:00Z', part_kind: 'user-prompt' }],
        kind: 'request',
      });
    const payload = (run: string, step: number, messages: string[]): string =>
      `{"run_id":"${run}","step_index":${step},"timestamp":"2025-03-01T09:09:0${step}Z","messages":[${messages.join(',')}],"state":"complete"}`;
    const key = (run: string, seq: number): string => `${PREFIX}:snapshot:{${run}}:${seq}`;
    const changed = async (what: string, word: string, expected: number): Promise<void> => {
      assert.equal(sync(target, index).contentChecked, true, `${what}: the content is compared`);
      assert.deepEqual(await hits(target, index, word), [expected, expected], `${what}: the answer is the store's`);
      assert.equal(sync(target, index).contentChecked, false, `${what}: and the stamp vouches again`);
    };

    // upstream's save: INCR, SET, (a reader here), ZADD
    s.cli(6, ['INCR', `${PREFIX}:snapshots:seq:{run-alpha-2}`]);
    s.cli(6, ['SET', key('run-alpha-2', 4), payload('run-alpha-2', 4, [message('zanzibarite')])]);
    await changed('a save caught before its ZADD', 'zanzibarite', 0);
    s.cli(6, ['ZADD', `${PREFIX}:snapshots:{run-alpha-2}`, '4', '4:complete']);
    await changed('the same save, done', 'zanzibarite', 1);
    // a run whose first snapshot alone holds a word: its prune (DEL, then ZREM) is seen at each step
    saveRedisRun(s, 6, 'run-gamma-1', ['quokkalite', 'other']);
    await changed('a run registered and saved twice', 'quokkalite', 1);
    s.cli(6, ['DEL', key('run-gamma-1', 1)]);
    await changed('its first payload pruned (or expired), its member kept', 'quokkalite', 0);
    s.cli(6, ['ZREM', `${PREFIX}:snapshots:{run-gamma-1}`, '1:complete']);
    await changed('and its member removed', 'quokkalite', 0);
    // the last payload of a run, deleted by hand
    s.cli(6, ['DEL', key('run-alpha-2', 4)]);
    await changed('the last payload of a run gone', 'zanzibarite', 0);
    s.cli(6, ['FLUSHDB']);
  });
  it('Redis: a search that meets a change itself drops what it answered ahead from the index as it stood, and answers with the store’s new text', async (t) => {
    const s = need(t, redis);
    if (!s) return;
    s.load(7, join(FIXTURES, 'redis', 'small.redis'));
    const target = s.url(7);
    const index = join(tempDir(), 'idx.db');
    assertWarm(target, index);
    // the index is searched while the stamp is read (StoreReader.stampAhead); no sync between the change and the search
    const payload = (word: string): string => redisPayload('run-alpha-1', 4, word);
    // a run whose first payload alone holds a word; that payload gone with nothing else touched (a prune's
    // first step, an expiry): the listing is the same, and the probe asked of the driver thread ahead fails
    saveRedisRun(s, 7, 'run-delta-1', ['marmotite', 'other']);
    assert.deepEqual(await hits(target, index, 'marmotite'), [1, 1]);
    const settled = sync(target, index);
    assert.equal(settled.contentChecked, false);
    assert.equal(settled.stamp!.split('.').length, 5, 'a settled, quiet view: its probe is recorded');
    s.cli(7, ['DEL', `${PREFIX}:snapshot:{run-delta-1}:1`]);
    assert.deepEqual(await hits(target, index, 'marmotite'), [0, 0], 'a first payload gone under an unchanged listing');
    s.cli(7, ['INCR', `${PREFIX}:snapshots:seq:{run-alpha-1}`]);
    s.cli(7, ['SET', `${PREFIX}:snapshot:{run-alpha-1}:4`, payload('xylophonite')]);
    s.cli(7, ['ZADD', `${PREFIX}:snapshots:{run-alpha-1}`, '4', '4:complete']);
    assert.deepEqual(await hits(target, index, 'xylophonite'), [1, 1], 'a word the change added');
    s.cli(7, ['SET', `${PREFIX}:snapshot:{run-alpha-1}:4`, payload('quillwortite')]);
    s.cli(7, ['INCR', `${PREFIX}:snapshots:seq:{run-alpha-1}`]);
    assert.deepEqual(await hits(target, index, 'xylophonite'), [0, 0], 'a word the change took away');
    assert.deepEqual(await hits(target, index, 'quillwortite'), [1, 1]);
    assert.equal(sync(target, index).contentChecked, false, 'the searches brought the index up to date');
    s.cli(7, ['FLUSHDB']);
  });

  it('Redis driver thread: a probe asked for right after the listing is counted in its round trip (no EXISTS of its own), and says what a probe read alone says', async (t) => {
    const s = need(t, redis);
    if (!s) return;
    s.load(10, join(FIXTURES, 'redis', 'small.redis'));
    const target = s.url(10);
    const index = join(tempDir(), 'idx.db');
    const { open } = await import('../../src/store/redis/driver.js');
    const session = await open({
      host: '127.0.0.1',
      port: s.port,
      db: 10,
      username: undefined,
      password: undefined,
      tls: false,
      timeoutSeconds: 10,
    });
    const existsServed = (): number => commandsServed(s, 10).get('exists') ?? 0;
    const listing = { op: 'view', part: 'listing', prefix: PREFIX };
    type Probe = { op: string; part: string; prefix: string; digest: string; probe: string };
    /** The probe of the stamp the index records now. */
    const recorded = (): Probe => {
      const [, digest, , probe] = sync(target, index).stamp!.split('.');
      assert.ok(digest !== undefined && probe !== undefined, 'a probe is recorded');
      return { op: 'view', part: 'probe', prefix: PREFIX, digest, probe };
    };
    /** `request` asked right after the listing, then after a listing alone: each answer, and the EXISTS served by the listing and by the probe. */
    const asked = async (request: Probe): Promise<Array<[boolean, number, number]>> => {
      const out: Array<[boolean, number, number]> = [];
      for (const waiting of [[request], []]) {
        existsServed();
        await session.handle(listing, waiting);
        const byListing = existsServed();
        out.push([(await session.handle(request, [])) as boolean, byListing, existsServed()]);
      }
      return out;
    };
    try {
      const healthy = recorded();
      assert.deepEqual(
        await asked(healthy),
        [
          [true, 1, 0],
          [true, 0, 1],
        ],
        "ahead: its EXISTS goes with the listing's records",
      );
      // a run whose first payload alone is gone: the listing is the same, the probe fails both ways
      saveRedisRun(s, 10, 'run-delta-1', ['marmotite', 'other']);
      const pruned = recorded();
      s.cli(10, ['DEL', `${PREFIX}:snapshot:{run-delta-1}:1`]);
      assert.deepEqual(await asked(pruned), [
        [false, 1, 0],
        [false, 0, 1],
      ]);
      // a member whose record is gone (expired), its payloads there: the listed runs are the others, so a
      // probe taken of them all is not theirs, whichever way it is asked (its keys all exist)
      s.cli(10, ['DEL', `${PREFIX}:snapshot:{run-delta-1}:2`, `${PREFIX}:run:{run-delta-1}`]);
      s.cli(10, ['SREM', `${PREFIX}:runs:all`, 'run-delta-1']);
      saveRedisRun(s, 10, 'run-epsilon-1', ['one', 'two']);
      const before = recorded();
      s.cli(10, ['DEL', `${PREFIX}:run:{run-epsilon-1}`]);
      const now = (await session.handle(listing, [])) as { digest: string };
      const stale = { ...before, digest: now.digest };
      assert.deepEqual(
        (await asked(stale)).map(([holds]) => holds),
        [false, false],
        'not counted ahead as holding',
      );
    } finally {
      await session.close();
      s.cli(10, ['FLUSHDB']);
    }
  });

  it('Redis: a listing that tells something (a listed run whose record is gone) tells it on every search, warm or not; a quiet one is vouched for as such', async (t) => {
    const s = need(t, redis);
    if (!s) return;
    s.load(8, join(FIXTURES, 'redis', 'small.redis'));
    const target = s.url(8);
    const index = join(tempDir(), 'idx.db');
    const quiet = assertWarm(target, index);
    assert.ok(quiet.endsWith('.q'), `a listing that told nothing is recorded as such: ${quiet.slice(-20)}`);
    const notices = async (): Promise<string[]> => {
      const r = await cli(['search', 'report', '--db', target, '--scope', 'all', '--json', '--index', index]);
      assert.ok(r.status === 0 || r.status === 1, r.stderr);
      return (JSON.parse(r.stdout) as { warnings: Array<{ notice?: string }> }).warnings.flatMap((w) => (w.notice ? [w.notice] : []));
    };
    assert.deepEqual(await notices(), [], 'warm, quiet: nothing to tell');
    s.cli(8, ['SADD', `${PREFIX}:runs:all`, 'run-ghost-1']);
    assert.deepEqual(await notices(), ['vanished-run'], 'the search that meets the change');
    const stamp = sync(target, index).stamp!;
    assert.ok(!stamp.endsWith('.q'), 'a listing that tells something is not vouched for as quiet');
    assert.deepEqual(await notices(), ['vanished-run'], 'warm: the same notice, the listing read again');
    s.cli(8, ['SREM', `${PREFIX}:runs:all`, 'run-ghost-1']);
    assert.deepEqual(await notices(), []);
    s.cli(8, ['FLUSHDB']);
  });
  it('Redis: a stamp an older convsearch recorded (r2: its probe in corpus order) still vouches while nothing changed, and not once a first payload is gone', (t) => {
    const s = need(t, redis);
    if (!s) return;
    s.load(9, join(FIXTURES, 'redis', 'small.redis'));
    // a run first by its id, last by its start: corpus order and member order differ
    saveRedisRun(s, 9, 'run-aardvark-1', ['one', 'two', 'three']);
    const target = s.url(9);
    const read = <T>(fn: (r: StoreReader) => T): T => {
      const r = openStoreReader(target);
      try {
        return fn(r);
      } finally {
        r.close();
      }
    };
    const [, listing, indexes, probe] = read((r) => r.stamp()!).split('.');
    const corpus = read((r) => r.runs().map((x) => x.runId));
    const members = [...corpus].sort(compareCodePoints);
    assert.notDeepEqual(corpus, members);
    const marks = new Map(members.map((id, i) => [id, probe!.split(',')[i]!]));
    const r2 = ['r2', listing, indexes, corpus.map((id) => marks.get(id)).join(',')].join('.');
    assert.equal(
      read((r) => r.stamp(r2)),
      r2,
      'nothing changed: the r2 stamp vouches, as it did',
    );
    const misread = ['r2', listing, indexes, probe].join('.');
    assert.notEqual(
      read((r) => r.stamp(misread)),
      misread,
      'an r2 probe is read in corpus order',
    );
    s.cli(9, ['DEL', `${PREFIX}:snapshot:{run-aardvark-1}:1`]);
    assert.notEqual(
      read((r) => r.stamp(r2)),
      r2,
      'a first payload gone: it does not',
    );
    s.cli(9, ['FLUSHDB']);
  });
});
