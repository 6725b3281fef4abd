/**
 * The Redis driver thread's memory while a store is read: every reply becomes buffers and strings that
 * live for that reply only, so the thread's young generation is capped (store/drivers.ts DRIVER_LIMITS)
 * rather than left to grow with what is read; and a request of many commands goes to the server in
 * pipelines of at most PIPELINE_COMMANDS (redis/driver.ts), so that the driver's command objects for all
 * of them are never held at once (the build's GETRANGE of every payload); each reply's buffers are let
 * go as it is decoded.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyToRedis } from '../../scripts/bench/backends.js';
import { writeSyntheticStore } from '../../scripts/bench/synthetic-store.js';
import { BIN } from '../helpers/cli.js';
import { need, startRedis, type RedisServer } from '../helpers/servers.js';
import { tempDir } from '../helpers/stores.js';

let redis: RedisServer | string = 'not started';
let dir = '';
let snapshots = 0;

before(async () => {
  redis = await startRedis();
  if (typeof redis === 'string') return;
  dir = tempDir();
  // 8,000 short runs, ~24,000 snapshots (~190 MB): an uncapped young generation grows past 8 MB reading
  // it, and one pipeline of a command a payload held ~60 MB of the driver's command objects
  const store = join(dir, 'store.db');
  snapshots = writeSyntheticStore(store, { targetBytes: 0, seed: 7, smallRuns: 8000 }).snapshots;
  await copyToRedis(store, redis, 0);
  writeFileSync(join(dir, 'heap.cjs'), PRELOAD);
});

after(() => {
  if (typeof redis !== 'string') redis.stop();
});

/**
 * Loaded into every thread of the command (a driver thread inherits -r): the largest new space and
 * the most live heap (what a full collection leaves, once over 12 MB in use) and ArrayBuffer memory (its
 * own) a worker thread had, sampled every 2 ms.
 */
const PRELOAD = `
const { isMainThread } = require('node:worker_threads');
const { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } = require('node:v8');
const { writeFileSync } = require('node:fs');
// set before the threads start: their isolates get gc() (the bundle is then compiled without its cache)
if (isMainThread) setFlagsFromString('--expose-gc');
else {
  const max = { newSpace: 0, live: 0, buffers: 0 };
  const look = () => {
    const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').physical_space_size;
    const buffers = process.memoryUsage().arrayBuffers;
    // what is in use counts garbage too: above 12 MB, what a full collection leaves is what counts
    // (0 while the heap stays under that: live is then below 12 MB)
    let live = 0;
    if (getHeapStatistics().used_heap_size > 12 * 2 ** 20) {
      globalThis.gc();
      live = getHeapStatistics().used_heap_size;
    }
    if (newSpace <= max.newSpace && live <= max.live && buffers <= max.buffers) return;
    max.newSpace = Math.max(max.newSpace, newSpace);
    max.live = Math.max(max.live, live);
    max.buffers = Math.max(max.buffers, buffers);
    writeFileSync(process.env.HEAP_LOG, JSON.stringify(max));
  };
  look();
  setInterval(look, 2).unref();
}
`;

/** The search's count and the driver thread's largest heap figures (MB), the command run with the preload. */
function measured(args: string[]): { count: number; newSpace: number; live: number; buffers: number } {
  const log = join(dir, `heap-${args.length}.json`);
  const r = spawnSync(process.execPath, ['-r', join(dir, 'heap.cjs'), BIN, 'search', 'careful', '--scope', 'all', '--count', ...args], {
    encoding: 'utf8',
    env: { ...process.env, HEAP_LOG: log, CONVSEARCH_THREADS: '1' },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(existsSync(log), 'no worker thread ran');
  const max = JSON.parse(readFileSync(log, 'utf8')) as { newSpace: number; live: number; buffers: number };
  return { count: Number(r.stdout.trim()), newSpace: max.newSpace / 2 ** 20, live: max.live / 2 ** 20, buffers: max.buffers / 2 ** 20 };
}

describe('Redis driver thread', () => {
  it('reads every payload of a store without its young generation growing past its cap (4 MB), nor its buffers past 12 MB', (t) => {
    const s = need(t, redis);
    if (!s) return;
    const m = measured(['--no-index', '--db', s.url(0)]);
    t.diagnostic(JSON.stringify(m));
    assert.ok(m.count > 0, 'the search found nothing');
    assert.ok(m.newSpace <= 4, `the driver thread's new space reached ${m.newSpace.toFixed(1)} MB`);
    // each reply's buffers go as it is decoded (redis/reply.ts decodeOnce), not when 64 MB of them piled up
    assert.ok(m.buffers <= 12, `the driver thread's ArrayBuffers reached ${m.buffers.toFixed(1)} MB`);
  });

  it("an index build, which reads the head of every payload in one request, keeps the driver's live heap under 32 MB (one pipeline of every command: 43 MB)", (t) => {
    const s = need(t, redis);
    if (!s) return;
    assert.ok(snapshots > 20_000, `${snapshots} snapshots`);
    const m = measured(['--index', join(dir, 'r.idx'), '--db', s.url(0)]);
    t.diagnostic(JSON.stringify(m));
    assert.ok(m.count > 0, 'the search found nothing');
    assert.ok(m.live <= 32, `the driver thread's live heap reached ${m.live.toFixed(1)} MB`);
  });
});
