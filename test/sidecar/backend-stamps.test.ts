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
import { openIndexedSource } from '../../src/sidecar/with-index.js';
import { cli } from '../helpers/cli.js';
import { FIXTURES, startPostgres, startRedis, type PgServer, type RedisServer, need } from '../helpers/servers.js';
import { tempDir } from '../helpers/stores.js';

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
});
