/** The throwaway servers of the tests and the bench are gone after stop(), whatever a test did to them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startRedis } from '../../scripts/lib/servers.js';

const REQUIRE = process.env.CONVSEARCH_REQUIRE_SERVERS === '1';

test('a Redis server stops even after a test made it require a password (no server outlives the run)', async (t) => {
  const own = await startRedis();
  if (typeof own === 'string') {
    if (REQUIRE) assert.fail(own);
    return t.skip(own);
  }
  const ping = (): string =>
    spawnSync('redis-cli', ['--no-auth-warning', '-p', String(own.port), '-a', 'a-secret', 'ping'], { encoding: 'utf8' }).stdout.trim();
  own.cli(0, ['CONFIG', 'SET', 'requirepass', 'a-secret']);
  assert.equal(ping(), 'PONG', 'the server answers with the password');
  own.stop();
  assert.notEqual(ping(), 'PONG', `redis-server on port ${own.port} still answers after stop()`);
});
