import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startPoolWorker } from '../../src/parallel/pool.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
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

  test('a worker that fails after posting reports failure; what it posted still arrives', () => {
    const store = openSqliteReader(SMALL);
    try {
      const w = startPoolWorker<string>(WORKER, store.share()!, { batches: 2, ahead: 10, fail: true });
      try {
        let batches = 0;
        assert.equal(
          w.drain(
            () => batches++,
            () => {},
            20,
          ),
          false,
        );
        assert.equal(batches, 2);
        assert.ok(w.failed && w.finished);
      } finally {
        w.stop();
      }
    } finally {
      store.close();
    }
  });

  test('a worker whose script cannot load (throws, or is missing) fails at once instead of hanging the main thread', () => {
    const store = openSqliteReader(SMALL);
    try {
      for (const script of [
        new URL('../helpers/broken-pool-worker.js', import.meta.url),
        new URL('../helpers/no-such-worker.js', import.meta.url),
      ]) {
        const w = startPoolWorker<string>(script, store.share()!, {});
        try {
          const t0 = Date.now();
          let batches = 0;
          assert.equal(
            w.drain(
              () => batches++,
              () => assert.ok(Date.now() - t0 < 30_000, `still waiting for ${script.pathname}`),
              20,
            ),
            false,
          );
          assert.equal(batches, 0);
          assert.ok(w.loadFailed && w.finished);
        } finally {
          w.stop();
        }
      }
    } finally {
      store.close();
    }
  });

  test('a worker that cannot open the store fails without posting results', () => {
    const store = openSqliteReader(SMALL);
    try {
      const missing = { ...store.share()!, location: 'immutable file:/nonexistent/convsearch-missing.db?mode=ro' };
      const w = startPoolWorker<string>(WORKER, missing, { batches: 2, ahead: 10, fail: false });
      try {
        let batches = 0;
        assert.equal(
          w.drain(
            () => batches++,
            () => {},
            20,
          ),
          false,
        );
        assert.equal(batches, 0);
      } finally {
        w.stop();
      }
    } finally {
      store.close();
    }
  });
});
