/**
 * Issue 21: `runs` lists each run's snapshots by state and its last step from the index when the index
 * is current (the store's scan of every snapshot is not made); the numbers are the store's own, through
 * appends, interrupted snapshots, edits of a run's rows and deletions.
 */
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
