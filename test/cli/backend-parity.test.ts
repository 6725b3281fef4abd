/**
 * Every golden case of the reference, with `--db` pointing at the same parity store in another harness
 * backend (the FileStepStore tree, a Postgres database, a Redis db, as the real harness store classes wrote
 * them): the same `--format tool` bytes and exit status through the index and with `--no-index`, and the
 * same `--json` ranking. Real servers, started here (scripts/lib/servers.ts); without them these tests are
 * skipped with a reason, and with CONVSEARCH_REQUIRE_SERVERS=1 that is a failure instead.
 *
 * Runs over the bundled fixtures and, when ../shared/parity is present and holds anything else, over it too.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cli, FIXTURES, ROOT } from '../helpers/cli.js';
import { goldenCases, hitProblems, jsonArgs, readGolden } from '../helpers/golden.js';
import { STORES, startPostgres, startRedis, type PgServer, type RedisServer } from '../helpers/servers.js';
import { tempDir } from '../helpers/stores.js';

interface ParitySet {
  label: string;
  /** Holds golden/ and the <store>.db files the cases name. */
  parity: string;
  /** Holds file/, postgres/ and redis/. */
  backends: string;
}

/** Names and bytes of everything under `root`: two sets with the same digest test the same thing. */
function contentDigest(root: string): string {
  const h = createHash('sha256');
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const p = join(rel, name);
      if (statSync(join(root, p)).isDirectory()) walk(p);
      else
        h.update(`${p}\0`)
          .update(readFileSync(join(root, p)))
          .update('\0');
    }
  };
  walk('');
  return h.digest('hex');
}

const bundled: ParitySet = { label: 'bundled', parity: join(FIXTURES, 'parity'), backends: join(FIXTURES, 'backends') };
const SETS: ParitySet[] = [bundled];
const sharedParity = join(ROOT, '..', 'shared', 'parity');
if (existsSync(join(sharedParity, 'golden')) && existsSync(join(sharedParity, 'backends'))) {
  const shared: ParitySet = { label: 'shared', parity: sharedParity, backends: join(sharedParity, 'backends') };
  // what a set tests: its cases, its backend copies and the SQLite stores the cases name
  const parts = (set: ParitySet): string[] => [
    contentDigest(join(set.parity, 'golden')),
    ...['file', 'postgres', 'redis'].map((kind) => contentDigest(join(set.backends, kind))),
    ...STORES.map((s) =>
      existsSync(join(set.parity, `${s}.db`))
        ? createHash('sha256')
            .update(readFileSync(join(set.parity, `${s}.db`)))
            .digest('hex')
        : '',
    ),
  ];
  const differs = parts(shared).join() !== parts(bundled).join();
  if (differs) SETS.push(shared);
  else process.stderr.write('# backend parity: ../shared/parity equals the bundled fixtures; run once\n');
}

type Backend = 'file' | 'postgres' | 'redis';
const BACKENDS: Backend[] = ['file', 'postgres', 'redis'];

let pg: PgServer | string = 'servers not started';
let redis: RedisServer | string = 'servers not started';
/** `<set>/<store>.db` → the FileStepStore copy of it. */
const fileCopies = new Map<string, string>();

const pgDb = (set: ParitySet, store: string): string => `${set.label}_${store}`;
const redisDb = (set: ParitySet, store: string): number => SETS.indexOf(set) * STORES.length + STORES.indexOf(store as never);

before(async () => {
  pg = await startPostgres();
  redis = await startRedis();
  const root = tempDir();
  for (const set of SETS) {
    for (const store of STORES) {
      // private copies: the fixtures stay as committed whatever a reader did
      const copy = join(root, set.label, store);
      cpSync(join(set.backends, 'file', store), copy, { recursive: true });
      fileCopies.set(`${set.label}/${store}.db`, copy);
      if (typeof pg !== 'string') pg.createDb(pgDb(set, store), join(set.backends, 'postgres', `${store}.sql`));
      if (typeof redis !== 'string') redis.load(redisDb(set, store), join(set.backends, 'redis', `${store}.redis`));
    }
  }
});

after(() => {
  if (typeof pg !== 'string') pg.stop();
  if (typeof redis !== 'string') redis.stop();
});

/** What `--db <store>.db` becomes in `backend`, or why that backend cannot run here. */
function target(set: ParitySet, backend: Backend, db: string): { db: string } | { skip: string } {
  const store = db.replace(/\.db$/, '');
  if (!STORES.includes(store as never)) throw new Error(`golden case names an unknown store ${db}`);
  if (backend === 'file') return { db: fileCopies.get(`${set.label}/${db}`)! };
  if (backend === 'postgres') return typeof pg === 'string' ? { skip: pg } : { db: pg.url(pgDb(set, store)) };
  return typeof redis === 'string' ? { skip: redis } : { db: redis.url(redisDb(set, store)) };
}

for (const set of SETS) {
  const golden = join(set.parity, 'golden');
  for (const backend of BACKENDS) {
    // one case at a time: the commands run in this process and block on their server, so cases in
    // flight together only start more driver threads (a fifth of the CPU time when run in turn)
    describe(`backend parity (${set.label} stores, ${backend})`, () => {
      for (const file of goldenCases(golden)) {
        test(file.slice(golden.length + 1), async (t) => {
          const c = readGolden(file);
          const at = c.args.indexOf('--db');
          assert.ok(at >= 0, 'every golden case names its store');
          const to = target(set, backend, c.args[at + 1]!);
          if ('skip' in to) {
            t.skip(to.skip);
            return;
          }
          const mapped = c.args.map((a, i) => (i === at + 1 ? to.db : a));
          // through the persistent index (built by the first call, then reused) and by replaying the store
          for (const args of [mapped, [...mapped, '--no-index']]) {
            const r = await cli(args);
            assert.equal(r.stdout, c.output + '\n', args.join(' '));
            assert.equal(r.status, c.exit, r.stderr);
          }
          const j = await cli(jsonArgs(mapped));
          assert.equal(j.status, c.exit, j.stderr);
          assert.deepEqual(hitProblems(c, j.stdout), []);
        });
      }
    });
  }
}
