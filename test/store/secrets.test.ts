/**
 * No password reaches any output (issue 19 §9, §10): every way a password can be given (a URL's user
 * part, encoded or not, `?password=`, CONVSEARCH_DB, a repeated --db) × every command and format, over
 * real servers that refuse, time out, or answer; and the three Redis failures are three different lines.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { cli, FIXTURES } from '../helpers/cli.js';
import { freePort, startRedis, type RedisServer } from '../helpers/servers.js';

const SECRET = 'S3cr3t/pa@ss#x';
/** Every spelling of the secret an output could carry: as given, percent-encoded, and the parts an unencoded one splits into. */
const LEAKS = [SECRET, encodeURIComponent(SECRET), 'S3cr3t', 'pa@ss', 'ss#x'];
const PREFIX = 'pydantic-ai-harness:step';
const SQLITE = join(FIXTURES, 'parity', 'small.db');
const REQUIRE = process.env.CONVSEARCH_REQUIRE_SERVERS === '1';

let redis: RedisServer | string = 'not started';
let silent: Server | null = null;
let silentPort = 0;
let closedPort = 0;

before(async () => {
  redis = await startRedis();
  if (typeof redis !== 'string') {
    redis.load(0, join(FIXTURES, 'backends', 'redis', 'small.redis'));
    redis.cli(0, ['ACL', 'SETUSER', 'reader', 'on', `>${SECRET}`, 'resetkeys', `~${PREFIX}:*`, '-@all', '+@read']);
  }
  closedPort = await freePort();
  // a server that takes the connection and never answers
  const server = createServer(() => {});
  silent = server;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  silentPort = (server.address() as { port: number }).port;
});

after(() => {
  if (typeof redis !== 'string') redis.stop();
  silent?.close();
});

function assertNoLeak(what: string, r: { stdout: string; stderr: string }): void {
  for (const leak of LEAKS) {
    assert.ok(!r.stdout.includes(leak), `${what}: stdout shows ${JSON.stringify(leak)}\n${r.stdout.slice(0, 2000)}`);
    assert.ok(!r.stderr.includes(leak), `${what}: stderr shows ${JSON.stringify(leak)}\n${r.stderr}`);
  }
}

/** Targets that fail before or at the server: malformed, refused, unknown parameters, other schemes. */
function failingTargets(): string[] {
  const enc = encodeURIComponent(SECRET);
  return [
    `postgresql://reader:${SECRET}@127.0.0.1:${closedPort}/db`,
    `postgresql://reader:${enc}@127.0.0.1:${closedPort}/db`,
    `postgres://127.0.0.1:${closedPort}/db?password=${enc}&bogus=1`,
    `postgresql://reader:123/${SECRET}@127.0.0.1/db`,
    `redis://:${SECRET}@127.0.0.1:${closedPort}/0`,
    `redis://reader:${enc}@127.0.0.1:${closedPort}/0`,
    `rediss://:${enc}@127.0.0.1:${closedPort}/0`,
    `redis://127.0.0.1:${closedPort}/0?password=${enc}`,
    `postgresql://127.0.0.1:${closedPort}/db?PASSWORD=${enc}`,
    // a table prefix or media table PostgresStepStore would refuse: refused before connecting
    `postgresql://reader:${enc}@127.0.0.1:${closedPort}/db?table=Steps-v2`,
    `postgresql://reader:${enc}@127.0.0.1:${closedPort}/db?table=Steps&media=9blobs`,
    `redis://:12?${SECRET}@127.0.0.1/0`,
    `mongodb://reader:${enc}@127.0.0.1/x`,
    `http://reader:${enc}@127.0.0.1/x.db`,
  ];
}

const COMMANDS: string[][] = [
  ['search', 'billing', '--scope', 'all'],
  ['search', 'billing', '--scope', 'all', '--json'],
  ['search', 'billing', '--scope', 'all', '--ndjson'],
  ['search', 'billing', '--scope', 'all', '--format', 'tool'],
  ['search', 'billing', '--scope', 'all', '--plain'],
  ['search', 'billing', '--scope', 'all', '--count-by', 'run'],
  ['runs'],
  ['runs', '--json'],
  ['conversations', '--ndjson'],
  ['tools', '--json'],
  ['show', 'run-alpha-1', '--json'],
  ['__complete', 'runs'],
];

describe('secrets never printed', () => {
  test('a failing server URL: one error line, exit 2, no part of the password, with --db, CONVSEARCH_DB, and beside another store', async () => {
    for (const target of failingTargets()) {
      for (const args of COMMANDS) {
        // show and __complete take no index flags
        const noIndex = args[0] === 'show' || args[0] === '__complete' ? [] : ['--no-index'];
        const ways: Array<[string, string[], NodeJS.ProcessEnv]> = [
          ['--db', [...args, '--db', target, ...noIndex], {}],
          ['CONVSEARCH_DB', args, { CONVSEARCH_DB: target }],
          ['two --db', [...args, '--db', SQLITE, '--db', target], {}],
        ];
        for (const [how, argv, env] of ways) {
          const r = await cli(argv, { env: { ...env, CONVSEARCH_THREADS: '1' } });
          const what = `${argv.join(' ')} (${how}) ${JSON.stringify(env)}`;
          assertNoLeak(what, r);
          if (args[0] === '__complete') continue; // its errors go to a shell that drops them
          assert.equal(r.status, 2, `${what}: ${r.stderr}`);
          assert.equal(r.stderr.split('\n').filter((l) => l.startsWith('convsearch: error:')).length, 1, `${what}: ${r.stderr}`);
        }
      }
    }
  });

  test('a server that answers: every command and format, alone and beside another store, shows the URL masked as psql does', async (t) => {
    if (typeof redis === 'string') {
      if (REQUIRE) assert.fail(redis);
      t.skip(redis);
      return;
    }
    const target = redis.url(0, { user: 'reader', password: SECRET });
    for (const args of COMMANDS) {
      for (const argv of [
        [...args, '--db', target],
        [...args, '--db', SQLITE, '--db', target],
      ]) {
        const r = await cli(argv);
        assertNoLeak(argv.join(' '), r);
        // beside the SQLite copy of the same store, a bare run id is ambiguous (exit 2, naming both)
        const ambiguous = argv.includes(SQLITE) && args[0] === 'show';
        assert.ok(ambiguous ? r.status === 2 : r.status === 0 || r.status === 1, `${argv.join(' ')}: ${r.stderr}`);
      }
    }
    // where the store is named, the password is ***
    const both = await cli(['runs', '--json', '--db', SQLITE, '--db', target]);
    assert.match(both.stdout, /redis:\/\/reader:\*\*\*@127\.0\.0\.1/);
  });
});

describe('where', () => {
  test('$CONVSEARCH_DB holding a password, in every spelling: where shows it masked, never contacts it', async () => {
    for (const target of failingTargets()) {
      for (const format of [[], ['--json']]) {
        const r = await cli(['where', ...format], { env: { CONVSEARCH_DB: target } });
        const what = `where ${format.join(' ')} with ${target}`;
        assertNoLeak(what, r);
        assert.equal(r.stderr, '', what);
        // a server URL is what a command would read (exit 0); another scheme is no store (exit 1)
        assert.equal(r.status, /^(postgres(ql)?|rediss?):/.test(target) ? 0 : 1, `${what}: ${r.stdout}`);
      }
    }
  });
});

describe('Redis failures, each in words of its own (§10)', () => {
  const run = (db: string) => cli(['runs', '--db', db]);

  test('a wrong password, a server that wants one, a refused port and a silent server are four different one-line errors, no driver warnings', async (t) => {
    if (typeof redis === 'string') {
      if (REQUIRE) assert.fail(redis);
      t.skip(redis);
      return;
    }
    const cases: Array<[string, RegExp]> = [
      [redis.url(0, { user: 'reader', password: 'not-the-secret' }), /authentication failed: wrong user name or password$/],
      [`redis://127.0.0.1:${closedPort}/0`, /connection refused at 127\.0\.0\.1:\d+: is a Redis server listening there\?$/],
      [`redis://:${encodeURIComponent(SECRET)}@127.0.0.1:${silentPort}/0?connect_timeout=1`, /no answer from 127\.0\.0\.1:\d+ within 1 s/],
    ];
    for (const [db, want] of cases) {
      const r = await run(db);
      assert.equal(r.status, 2, r.stderr);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, want);
      assert.doesNotMatch(r.stderr, /Connection is closed|\[WARN\]/);
      assertNoLeak(db, r);
    }
    // a password the server does not ask for: answered, and no driver warning
    const extra = await run(redis.url(0, { user: 'default', password: 'unneeded' }));
    assert.equal(extra.status, 0, extra.stderr);
    assert.equal(extra.stderr, '');
  });

  test('a server that requires a password, asked without one, says so', async (t) => {
    const own = await startRedis();
    if (typeof own === 'string') {
      if (REQUIRE) assert.fail(own);
      t.skip(own);
      return;
    }
    try {
      own.cli(0, ['CONFIG', 'SET', 'requirepass', SECRET]);
      const r = await run(`redis://127.0.0.1:${own.port}/0`);
      assert.equal(r.status, 2);
      assert.match(r.stderr, /^convsearch: error: redis:\/\/127\.0\.0\.1:\d+\/0: the server requires a password: give it in the URL/);
      assert.equal(r.stderr.trim().split('\n').length, 1);
    } finally {
      own.stop();
    }
  });
});
