/** The throwaway servers of the tests and the bench are gone after stop(), whatever a test did to them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRedis } from '../../scripts/lib/servers.js';

const REQUIRE = process.env.CONVSEARCH_REQUIRE_SERVERS === '1';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('a Redis server stops even after a test made it require a password (no server outlives the run)', async (t) => {
  const own = await startRedis();
  if (typeof own === 'string') {
    if (REQUIRE) assert.fail(own);
    return t.skip(own);
  }
  const port = own.port;
  const pid = Number(own.cli(0, ['INFO', 'server']).match(/^process_id:(\d+)/m)?.[1]);
  assert.ok(pid > 0);
  own.cli(0, ['CONFIG', 'SET', 'requirepass', 'a-secret']);
  own.stop();
  assert.equal(alive(pid), false, `redis-server ${pid} on port ${port} still runs`);
});
