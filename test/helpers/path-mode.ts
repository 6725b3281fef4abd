/** The Python SqliteStepStore's path mode as the live-writer tests imitate it: a connection per operation. */
import Database from 'better-sqlite3';

/**
 * One operation of the store in path mode that writes nothing: a connection opened, read from, and closed.
 * Its close checkpoints the log and deletes -wal and -shm when no other connection holds the file; a
 * connection that never read never opened the log, and its close leaves both files where they were.
 */
export function pathModeCall(path: string): void {
  const db = new Database(path);
  try {
    db.prepare('SELECT COUNT(*) FROM runs').get();
  } finally {
    db.close();
  }
}
