import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startPoolWorker } from '../../src/parallel/pool.js';
import { openSqliteReader, type SqliteReader } from '../../src/store/sqlite/reader.js';
import { FIXTURES } from '../helpers/cli.js';

const WORKER = new URL('../helpers/counting-pool-worker.js', import.meta.url);
const SMALL = join(FIXTURES, 'parity', 'small.db');

describe('parallel/pool', () => {
  test('a worker reads the shared bytes and its batches all arrive, in order; back-pressure holds it back', () => {
    const store = openSqliteReader(SMALL);
    try {
      const ids = store.runs().map((r) => r.runId);
      const w = startPoolWorker<string>(WORKER, store.share()!, { batches: 20, ahead: 2, fail: false });
      try {
        const got: string[] = [];
        let most = 0;
        // let it run ahead as far as it may before taking anything
        const t0 = Date.now();
        while (w.progress < 3 && Date.now() - t0 < 10_000) w.wait(50);
        for (let i = 0; i < 20 && w.progress < 20; i++) w.wait(50);
        most = w.progress;
        assert.ok(most <= 4, `worker ran ${most} batches ahead of a main thread that took none`);
        assert.ok(
          w.drain(
            (batch) => got.push(...batch),
            () => {},
            20,
          ),
          'finished without failing',
        );
        assert.equal(w.progress, 20);
        assert.deepEqual(got, Array.from({ length: 20 }, (_, b) => ids.map((id) => `${b}:${id}`)).flat());
        assert.ok(w.finished);
      } finally {
        w.stop();
      }
    } finally {
      store.close();
    }
  });

  /** Starts a worker on the small store, drains it, and hands back how it ended (the worker stopped, the store closed). */
  function run(
    script: URL,
    data: object,
    share = (s: SqliteReader) => s.share()!,
  ): { ok: boolean; batches: number; results: string[]; failed: boolean; loadFailed: boolean; finished: boolean } {
    const store = openSqliteReader(SMALL);
    try {
      const w = startPoolWorker<string>(script, share(store), data);
      try {
        const t0 = Date.now();
        let batches = 0;
        const results: string[] = [];
        const ok = w.drain(
          (batch) => {
            batches++;
            results.push(...batch);
          },
          () => assert.ok(Date.now() - t0 < 30_000, `still waiting for ${script.pathname}`),
          20,
        );
        return { ok, batches, results, failed: w.failed, loadFailed: w.loadFailed, finished: w.finished };
      } finally {
        w.stop();
      }
    } finally {
      store.close();
    }
  }

  test('a worker that fails after posting reports failure; what it posted still arrives', () => {
    const r = run(WORKER, { batches: 2, ahead: 10, fail: true });
    assert.deepEqual([r.ok, r.batches, r.failed, r.finished], [false, 2, true, true]);
  });

  test('a worker whose script cannot load (throws, or is missing) fails at once instead of hanging the main thread', () => {
    for (const name of ['broken-pool-worker.js', 'no-such-worker.js', 'no-such-worker.cjs']) {
      const r = run(new URL(`../helpers/${name}`, import.meta.url), {});
      assert.deepEqual([r.ok, r.batches, r.loadFailed, r.finished], [false, 0, true, true], name);
    }
  });

  test('a bundled (.cjs) task script is required: the thread never starts its ES module loader for it', () => {
    // a script as dist/bundle's are (CommonJS): it says what the thread had loaded by the time it ran,
    // then imports the pool (an ES module, so only now) to post that
    const dir = mkdtempSync(join(tmpdir(), 'convsearch-pool-'));
    const script = join(dir, 'loader-worker.cjs');
    writeFileSync(
      script,
      `const { workerData } = require('node:worker_threads');
const loaded = process.moduleLoadList.filter((m) => m.endsWith('internal/modules/esm/loader') || m.includes('cjs-module-lexer'));
import(workerData.pool).then(({ runPoolWorker }) => runPoolWorker((store, data, channel) => channel.post(loaded)));
`,
    );
    try {
      const r = run(pathToFileURL(script), { pool: new URL('../../src/parallel/pool.js', import.meta.url).href });
      assert.deepEqual([r.ok, r.results], [true, []]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a worker that cannot open the store fails without posting results', () => {
    const missing = (s: SqliteReader) => ({ ...s.share()!, location: 'immutable file:/nonexistent/convsearch-missing.db?mode=ro' });
    const r = run(WORKER, { batches: 2, ahead: 10, fail: false }, missing);
    assert.deepEqual([r.ok, r.batches], [false, 0]);
  });
});
