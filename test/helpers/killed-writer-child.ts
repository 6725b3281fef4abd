/**
 * Child process for the page-map tests: a writer in WAL mode that copies the last snapshot of the store
 * named in argv[2] as a new step of its run (one commit, kept in the log: no checkpoint), prints
 * `committed`, then waits to be killed. Killed with SIGKILL it leaves its -wal and -shm behind with no
 * writer attached: a reader then recovers the log itself.
 */
import Database from 'better-sqlite3';

const [, , path] = process.argv;
// the test runner loads every file under dist/test: without a store, do nothing
if (path !== undefined) {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.prepare(
    'INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) SELECT run_id, step_index + 1, timestamp, state, messages FROM snapshots ORDER BY seq DESC LIMIT 1',
  ).run();
  process.stdout.write('committed\n');
  setInterval(() => {}, 1000);
}
