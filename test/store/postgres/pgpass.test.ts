import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { libpqEnv, pgpassLookup } from '../../../src/store/postgres/pgpass.js';

const Q = { host: 'db.example', port: '5432', database: 'app', user: 'alice' };

/** A private `.pgpass` in a fresh directory; the environment is passed, never set. */
function withPgpass(text: string, mode: number, run: (env: NodeJS.ProcessEnv, dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'pgpass-'));
  try {
    const file = join(dir, '.pgpass');
    writeFileSync(file, text);
    chmodSync(file, mode);
    run({ PGPASSFILE: file }, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('store/postgres/pgpass', () => {
  test('the first line matching host, port, database and user gives the password', () => {
    const text = 'other:5432:app:alice:no\ndb.example:5432:app:alice:first\ndb.example:5432:app:alice:second\n';
    withPgpass(text, 0o600, (env) => {
      assert.equal(pgpassLookup(Q, env), 'first');
      assert.equal(pgpassLookup({ ...Q, user: 'bob' }, env), undefined);
      assert.equal(pgpassLookup({ ...Q, port: '5433' }, env), undefined);
      assert.equal(pgpassLookup({ ...Q, database: 'App' }, env), undefined);
    });
  });

  test('* matches any value in the first four fields, and nothing is a wildcard by prefix', () => {
    withPgpass('db.*:*:app:alice:nope\n*:*:*:alice:any\n', 0o600, (env) => {
      assert.equal(pgpassLookup(Q, env), 'any');
      assert.equal(pgpassLookup({ ...Q, user: 'bob' }, env), undefined);
    });
  });

  test('escaped colons and backslashes are undone; the password keeps unescaped colons', () => {
    withPgpass('db.example:5432:app:al\\:ice:p\\:w\\\\d\ndb.example:5432:app:alice:a:b:c\n', 0o600, (env) => {
      assert.equal(pgpassLookup({ ...Q, user: 'al:ice' }, env), 'p:w\\d');
      assert.equal(pgpassLookup(Q, env), 'a:b:c');
    });
  });

  test('comments, blank lines, short lines and CRLF endings are handled as libpq does', () => {
    withPgpass('# db.example:5432:app:alice:commented\r\n\r\ndb.example:5432:app\r\n*:*:*:*:crlf\r\n', 0o600, (env) => {
      assert.equal(pgpassLookup(Q, env), 'crlf');
    });
  });

  test('an empty password field is an empty password', () => {
    withPgpass('*:*:*:*:\n', 0o600, (env) => assert.equal(pgpassLookup(Q, env), ''));
  });

  test('a socket directory host matches localhost lines', () => {
    withPgpass('localhost:5432:app:alice:sock\n', 0o600, (env) => {
      assert.equal(pgpassLookup({ ...Q, host: '/var/run/postgresql' }, env), 'sock');
      assert.equal(pgpassLookup({ ...Q, host: 'localhost' }, env), 'sock');
      assert.equal(pgpassLookup(Q, env), undefined);
    });
  });

  test('a file group or others may read is ignored', () => {
    for (const mode of [0o640, 0o604, 0o644]) {
      withPgpass('*:*:*:*:secret\n', mode, (env) => assert.equal(pgpassLookup(Q, env), undefined));
    }
    withPgpass('*:*:*:*:secret\n', 0o400, (env) => assert.equal(pgpassLookup(Q, env), 'secret'));
  });

  test('without PGPASSFILE, $HOME/.pgpass is read; a missing file gives nothing', () => {
    withPgpass('*:*:*:*:home\n', 0o600, (_env, dir) => {
      assert.equal(pgpassLookup(Q, { HOME: dir }), 'home');
      assert.equal(pgpassLookup(Q, { HOME: join(dir, 'absent') }), undefined);
      assert.equal(pgpassLookup(Q, { PGPASSFILE: join(dir, 'absent'), HOME: dir }), undefined);
    });
  });

  test('libpqEnv copies only the variables the driver honours', () => {
    const env = { PGPASSWORD: 'pw', PGPASSFILE: '/f', PGSSLMODE: 'require', PGSSLROOTCERT: '/ca', HOME: '/h', PGHOST: 'x', PATH: '/bin' };
    assert.deepEqual(libpqEnv(env), { PGPASSWORD: 'pw', PGPASSFILE: '/f', PGSSLMODE: 'require', PGSSLROOTCERT: '/ca', HOME: '/h' });
    assert.deepEqual(libpqEnv({}), {
      PGPASSWORD: undefined,
      PGPASSFILE: undefined,
      PGSSLMODE: undefined,
      PGSSLROOTCERT: undefined,
      HOME: undefined,
    });
  });
});
