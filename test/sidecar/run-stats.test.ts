/**
 * Issue 21: `runs` lists each run's snapshots by state and its last step from the index when the index
 * is current (the store's scan of every snapshot is not made); the numbers are the store's own, through
 * appends, interrupted snapshots, edits of a run's rows and deletions.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { appendRun } from '../../scripts/bench/mutations.js';
import { threadedStore } from '../helpers/random-stores.js';
import { assertListedFromIndex } from '../helpers/run-listing.js';
import { tempDir } from '../helpers/stores.js';

const INTERRUPTED = '[{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "cut short"}]}]';

function addInterrupted(db: Database.Database, runId: string, step: number): void {
  db.prepare(
    "INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) VALUES (?, ?, '2026-03-01T00:00:00Z', 'interrupted', ?)",
  ).run(runId, step, INTERRUPTED);
}

test('runs: snapshot counts and last steps come from a current index, equal to the store’s, through every kind of change', () => {
  const { path, runs } = threadedStore(51);
  const index = join(tempDir(), 'idx.db');
  const db = new Database(path);
  try {
    addInterrupted(db, runs[2]!.id, 40);
    addInterrupted(db, runs[5]!.id, 3);
    assertListedFromIndex(path, index, 'first build');

    // an interrupted snapshot with a later step added to an old run: its counts and last step move
    addInterrupted(db, runs[0]!.id, 77);
    assertListedFromIndex(path, index, 'an interrupted snapshot appended');

    // a new run
    appendRun(path);
    assertListedFromIndex(path, index, 'a run appended');

    // a row's state and step rewritten in place: the run's digest changes, and its counts with it
    db.prepare("UPDATE snapshots SET state = 'complete', step_index = 5 WHERE run_id = ? AND state = 'interrupted'").run(runs[2]!.id);
    assertListedFromIndex(path, index, 'a state rewritten');

    // a run's rows deleted, the run record kept: none of its snapshots left
    db.prepare('DELETE FROM snapshots WHERE run_id = ?').run(runs[5]!.id);
    assertListedFromIndex(path, index, "a run's snapshots deleted");
    db.exec('VACUUM');
  } finally {
    db.close();
  }
  assertListedFromIndex(path, index, 'after a VACUUM');
});

test("the index's listing counts answer the same for every run asked in any order (in corpus order, repeated, shuffled, unknown)", async () => {
  const { openSqliteReader } = await import('../../src/store/sqlite/reader.js');
  const { openIndexedSource } = await import('../../src/sidecar/with-index.js');
  const { draws } = await import('../helpers/draws.js');
  const { path } = threadedStore(52);
  const index = join(tempDir(), 'idx.db');
  const store = openSqliteReader(path);
  try {
    const opened = openIndexedSource(store, { path: index });
    try {
      /** What each question about run `id` answers, asked of `counts` (a fresh one per order, as each listing makes its own). */
      const answers = (ids: readonly string[]): string[] => {
        const counts = opened.source.recordCounts();
        const stats = counts.snapshotStats?.() ?? null;
        return ids.map((id) =>
          JSON.stringify([id, counts.recordLength(id), stats?.get(id) ?? null, counts.warnings([id]).length, counts.recordLength(id)]),
        );
      };
      const ids = opened.source.runs().map((r) => r.runId);
      const want = new Map(answers(ids).map((a, i) => [ids[i]!, a]));
      // the reference: each run alone, from a fresh object (no order to follow)
      for (const id of ids) assert.equal(answers([id])[0], want.get(id), id);
      const rand = draws(52);
      const orders: string[][] = [
        ids,
        [...ids].reverse(),
        ids.flatMap((id) => [id, id]),
        Array.from({ length: 3 * ids.length }, () => ids[rand(ids.length)]!),
        [...ids.slice(0, 3), 'no-such-run', ...ids.slice(3), 'no-such-run', ids[0]!],
      ];
      for (const order of orders) {
        const got = answers(order);
        order.forEach((id, i) => {
          if (want.has(id)) assert.equal(got[i], want.get(id), `${id} at ${i}`);
          else assert.equal(got[i], JSON.stringify([id, 0, null, 0, 0]), `${id} at ${i}`);
        });
      }
      assert.ok(ids.length >= 16);
    } finally {
      opened.db.close();
    }
  } finally {
    store.close();
  }
});
