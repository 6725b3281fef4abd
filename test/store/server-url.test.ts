import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StoreError } from '../../src/store/errors.js';
import { malformedUrl, maskedUrl, postgresTarget, redisTarget, serverKind, shownTarget } from '../../src/store/server-url.js';

const ENV = { PGUSER: 'envuser' };
const storeError = (test: (m: string) => boolean) => (e: unknown) => e instanceof StoreError && test(e.message);

describe('store/server-url', () => {
  test('serverKind goes by scheme, case-insensitively', () => {
    assert.equal(serverKind('postgresql://h/db'), 'postgres');
    assert.equal(serverKind('POSTGRES://h/db'), 'postgres');
    assert.equal(serverKind('redis://h'), 'redis');
    assert.equal(serverKind('rediss://h'), 'redis');
    assert.equal(serverKind('mongodb://h'), null);
    assert.equal(serverKind('sessions.db'), null);
    assert.equal(serverKind('./postgresql:x'), null);
  });

  test('maskedUrl hides a password in the user part and in ?password=', () => {
    assert.equal(maskedUrl(new URL('postgresql://alice:s3cret@h/db')), 'postgresql://alice:***@h/db');
    assert.equal(maskedUrl(new URL('postgresql://h/db?password=s3cret&sslmode=require')), 'postgresql://h/db?password=***&sslmode=require');
    assert.equal(maskedUrl(new URL('postgresql://alice@h/db')), 'postgresql://alice@h/db');
  });

  test('a Postgres URL gives its connection, a masked label and an identity without credentials', () => {
    const t = postgresTarget('postgresql://alice:s%40cret@DB.Example:5433/app?table=t1&sslmode=require&connect_timeout=3', ENV);
    assert.equal(t.label, 'postgresql://alice:***@DB.Example:5433/app?table=t1&sslmode=require&connect_timeout=3');
    assert.equal(t.identity, 'postgresql://db.example:5433/app?table=t1');
    assert.equal(t.table, 't1');
    assert.equal(t.connection.password, 's@cret');
    assert.equal(t.connection.user, 'alice');
    assert.equal(t.connection.host, 'DB.Example');
    assert.equal(t.connection.port, 5433);
    assert.equal(t.connection.database, 'app');
    assert.equal(t.connection.sslmode, 'require');
    assert.equal(t.connection.connectTimeoutSeconds, 3);
    assert.equal(t.connection.applicationName, 'convsearch');
  });

  test('unset parts follow PG* variables in the identity, and query parameters override the URL', () => {
    const t = postgresTarget('postgresql://', { PGUSER: 'bob', PGHOST: 'Pg.Local', PGPORT: '6000' });
    assert.equal(t.identity, 'postgresql://pg.local:6000/bob?table=step_persistence');
    assert.equal(t.connection.host, undefined);
    assert.equal(t.connection.connectTimeoutSeconds, 10);
    const q = postgresTarget('postgresql://h/db?host=/tmp/sock&dbname=other&user=carol&password=pw', ENV);
    assert.equal(q.connection.host, '/tmp/sock');
    assert.equal(q.connection.database, 'other');
    assert.equal(q.connection.password, 'pw');
    assert.equal(q.identity, 'postgresql:///tmp/sock:5432/other?table=step_persistence');
    assert.equal(q.label, 'postgresql://h/db?host=%2Ftmp%2Fsock&dbname=other&user=carol&password=***');
  });

  test('bad Postgres parameters are refused with the masked label', () => {
    const cases: Array<[string, string]> = [
      ['postgresql://u:pw@h/db?nope=1', 'postgresql://u:***@h/db?nope=1: unknown URL parameter "nope"'],
      ['postgresql://u:pw@h/db?table=Bad-1', 'postgresql://u:***@h/db?table=Bad-1: invalid table prefix "Bad-1"'],
      ['postgresql://u:pw@h/db?table=1steps', 'postgresql://u:***@h/db?table=1steps: invalid table prefix "1steps"'],
      ['postgresql://u:pw@h/db?media=m%C3%A9dia', 'postgresql://u:***@h/db?media=m%C3%A9dia: invalid media table "média"'],
      ['postgresql://u:pw@h/db?sslmode=maybe', 'postgresql://u:***@h/db?sslmode=maybe: unknown sslmode "maybe"'],
      [
        'postgresql://u:pw@h/db?connect_timeout=1.5',
        'postgresql://u:***@h/db?connect_timeout=1.5: connect_timeout must be a number of seconds',
      ],
      ['postgresql://u:pw@h/db?port=54321x', 'postgresql://u:***@h/db?port=54321x: invalid port "54321x"'],
    ];
    for (const [url, start] of cases) {
      assert.throws(
        () => postgresTarget(url, ENV),
        storeError((m) => m.startsWith(start) && !m.includes('pw@')),
        url,
      );
    }
    assert.throws(() => postgresTarget(`postgresql://h/db?table=${'a'.repeat(41)}`, ENV), StoreError);
    postgresTarget(`postgresql://h/db?table=${'a'.repeat(40)}`, ENV);
    assert.throws(() => postgresTarget(`postgresql://h/db?media=${'a'.repeat(64)}`, ENV), StoreError);
    postgresTarget(`postgresql://h/db?media=${'a'.repeat(63)}`, ENV);
  });

  test("a prefix and a media table in upper or mixed case fold to lower case, as Postgres folds upstream's unquoted names", () => {
    const t = postgresTarget('postgresql://h/db?table=Steps_V2&media=Blobs', ENV);
    assert.deepEqual([t.table, t.tableAsGiven, t.media, t.mediaAsGiven], ['steps_v2', 'Steps_V2', 'blobs', 'Blobs']);
    // one store, one identity: the index of ?table=steps_v2 is the index of ?table=Steps_V2
    assert.equal(t.identity, 'postgresql://h:5432/db?table=steps_v2&media=blobs');
    assert.equal(postgresTarget('postgresql://h/db?table=STEPS_v2&media=blobs', ENV).identity, t.identity);
    assert.equal(postgresTarget('postgresql://h/db?table=steps_v2', ENV).identity, 'postgresql://h:5432/db?table=steps_v2');
    assert.equal(postgresTarget('postgresql://h/db', ENV).media, null);
  });

  test('a Redis URL gives host, port, database, TLS and prefix; the identity has no credentials', () => {
    const t = redisTarget('rediss://:pw@Cache.Example:6380/3?prefix=a:b&connect_timeout=0');
    assert.equal(t.label, 'rediss://:***@Cache.Example:6380/3?prefix=a:b&connect_timeout=0');
    assert.equal(t.identity, 'redis://cache.example:6380/3?prefix=a%3Ab');
    assert.deepEqual([t.host, t.port, t.db, t.tls, t.prefix, t.timeoutSeconds], ['Cache.Example', 6380, 3, true, 'a:b', 0]);
    assert.equal(t.username, undefined);
    assert.equal(t.password, 'pw');
    const d = redisTarget('redis://');
    assert.equal(d.identity, 'redis://127.0.0.1:6379/0?prefix=pydantic-ai-harness%3Astep');
    assert.equal(d.tls, false);
    assert.equal(d.timeoutSeconds, 10);
  });

  test('bad Redis paths and parameters are refused with the masked label', () => {
    assert.throws(
      () => redisTarget('redis://u:pw@h/abc'),
      storeError((m) => m === 'redis://u:***@h/abc: the path must be a database number, not "abc"'),
    );
    assert.throws(
      () => redisTarget('redis://h/0?password=pw'),
      storeError((m) => m === 'redis://h/0?password=***: unknown URL parameter "password" (read: prefix, connect_timeout)'),
    );
  });

  test('a password with an unencoded / ends the authority early: the URL is described, never shown', () => {
    for (const url of ['postgresql://alice:pa/ss@h/db', 'postgresql://alice:12/secret@h/db', 'redis://:12/secret@h/0']) {
      const f = url.startsWith('redis') ? () => redisTarget(url) : () => postgresTarget(url, ENV);
      assert.throws(
        f,
        storeError((m) => m === malformedUrl(url) && !m.includes('secret') && !m.includes('ss@')),
        url,
      );
    }
    assert.ok(malformedUrl('postgresql://x').startsWith('a postgresql:// URL that does not parse (not shown'));
  });

  test('a password with a bad percent escape is described as a URL that does not parse, not an internal error', () => {
    for (const url of ['postgresql://u:%zzsecret@h/db', 'postgresql://u:pw@h/d%zz', 'redis://u:%zzsecret@h/0']) {
      const f = url.startsWith('redis') ? () => redisTarget(url) : () => postgresTarget(url, ENV);
      assert.throws(
        f,
        storeError((m) => m === malformedUrl(url)),
        url,
      );
    }
  });

  test('shownTarget masks server URLs, describes unparsable ones and passes paths through', () => {
    assert.equal(shownTarget('sessions.db'), 'sessions.db');
    assert.equal(shownTarget('/var/data/store dir'), '/var/data/store dir');
    assert.equal(shownTarget('mongodb://alice:s3cret@h/db'), 'mongodb://alice:***@h/db');
    assert.equal(shownTarget('mongodb://alice:pa ss@h:x/db'), malformedUrl('mongodb://'));
  });

  test('shownTarget never shows a password that an unencoded / pushed out of the authority', () => {
    const url = 'mongodb://alice:12/secret@host/db';
    assert.equal(shownTarget(url), malformedUrl(url));
  });
});
