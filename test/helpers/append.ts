/** Snapshots appended to a run of a test store, as the harness saves a step. */
import Database from 'better-sqlite3';

/**
 * Appends a snapshot to run `runId` at `timestamp`: its last one with a user prompt saying `words`
 * after it, behind `filler` words that make it long (the words then lie on an overflow page).
 */
export function appendTo(path: string, runId: string, words: string, filler = 0, timestamp = '2027-01-01T00:00:00Z'): void {
  const db = new Database(path);
  try {
    const s = db
      .prepare("SELECT step_index, messages FROM snapshots WHERE run_id = ? AND state = 'complete' ORDER BY seq DESC LIMIT 1")
      .get(runId) as { step_index: number; messages: string };
    const text = `${'lorem '.repeat(filler)}${words}`;
    const msg = `{"parts": [{"content": "${text}", "timestamp": "2027-01-01T00:00:00Z", "part_kind": "user-prompt"}], "timestamp": "2027-01-01T00:00:00Z", "instructions": null, "kind": "request", "run_id": null, "conversation_id": null, "metadata": null}`;
    db.prepare("INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) VALUES (?, ?, ?, 'complete', ?)").run(
      runId,
      s.step_index + 1,
      timestamp,
      `${s.messages.slice(0, -1)}, ${msg}]`,
    );
  } finally {
    db.close();
  }
}
