/**
 * Store mutations for the bench's incremental phases: plain SQL on the SQLite bench store, as another
 * writer process would.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { textResponse, userRequest } from '../lib/messages.js';
import { pyJsonDumpsAscii } from '../lib/py-json.js';

const require = createRequire(import.meta.url);

let appended = 0;

/**
 * The latest run (by started_at, then rowid), and a new run of its conversation a year after it, named
 * from the latest's id with `-<tag>-<suffix>` in place of any such that earlier appends added (an id that grew with
 * every append would no longer fit a leaf cell past ~480 bytes, and the page map would give up).
 */
function addRunAfterLatest(
  db: BetterSqlite3.Database,
  tag: 'again' | 'next',
  suffix: string,
): { last: { run_id: string; conversation_id: string | null; started_at: string }; id: string } {
  const last = db.prepare('SELECT run_id, conversation_id, started_at FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1').get() as {
    run_id: string;
    conversation_id: string | null;
    started_at: string;
  };
  const id = `${last.run_id.replace(/(-(again|next)-[\d-]+)+$/, '')}-${tag}-${suffix}`;
  db.prepare(
    "INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) VALUES (?, ?, NULL, NULL, '{}', ?)",
  ).run(
    id,
    last.conversation_id,
    last.started_at.replace(/^(\d{4})/, (y) => String(Number(y) + 1)),
  );
  return { last, id };
}

/** A copy of the latest run's snapshots as a new run of its conversation: every message of it an earlier run holds. */
export function appendRun(store: string): void {
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(store);
  db.transaction(() => {
    const { last, id } = addRunAfterLatest(db, 'again', `${Date.now()}${appended++}`);
    db.prepare(
      'INSERT INTO snapshots (run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages) SELECT ?, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages FROM snapshots WHERE run_id = ? ORDER BY seq',
    ).run(id, last.run_id);
  })();
  db.close();
}

let continued = 0;

function isList(text: string): boolean {
  try {
    return Array.isArray(JSON.parse(text));
  } catch {
    return false;
  }
}

/**
 * A new run of the latest run's conversation, as an agent's next run is written: its first snapshot
 * the latest run's last complete messages and a new user prompt, its second those and a reply. Both
 * messages are new to the store (no run holds them), unlike appendRun's copy, whose every message an
 * earlier run holds. Returns the new run's id.
 */
export function continueConversation(store: string): string {
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(store);
  try {
    return db.transaction(() => {
      const n = `${Date.now()}-${process.pid}-${continued++}`;
      const { last, id } = addRunAfterLatest(db, 'next', n);
      // its last complete snapshot that holds a list of messages (a store may hold a broken one last)
      const before = (
        db
          .prepare("SELECT timestamp, messages FROM snapshots WHERE run_id = ? AND state = 'complete' ORDER BY seq DESC")
          .all(last.run_id) as Array<{ timestamp: string; messages: unknown }>
      ).find((r) => typeof r.messages === 'string' && isList(r.messages));
      const held = typeof before?.messages === 'string' ? before.messages.trim() : '[]';
      const timestamp = before?.timestamp ?? last.started_at;
      const prompt = pyJsonDumpsAscii(userRequest(`a new question ${n} about quarzite`, { timestamp: '2027-01-01T00:00:00Z' }));
      const reply = pyJsonDumpsAscii(textResponse(`the answer ${n} is kalo`, { timestamp: '2027-01-01T00:00:01Z' }));
      const after = (...added: string[]): string =>
        held === '[]' ? `[${added.join(', ')}]` : `${held.slice(0, -1)}, ${added.join(', ')}]`;
      const insert = db.prepare(
        "INSERT INTO snapshots (run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages) VALUES (?, ?, ?, NULL, NULL, ?, 'complete', ?)",
      );
      insert.run(id, 0, last.conversation_id, timestamp, after(prompt));
      insert.run(id, 1, last.conversation_id, timestamp, after(prompt, reply));
      return id;
    })();
  } finally {
    db.close();
  }
}

/** A writer that stays connected (its -wal and -shm stay), as an agent process keeps its store open. */
export function liveWriter(store: string): BetterSqlite3.Database {
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(store);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  return db;
}

export function appendSnapshots(store: string, count: number): void {
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(store);
  const runs = db.prepare('SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 10').pluck().all() as string[];
  const lastSnap = db.prepare(
    "SELECT step_index, conversation_id, timestamp, messages FROM snapshots WHERE run_id = ? AND state = 'complete' ORDER BY seq DESC LIMIT 1",
  );
  const insert = db.prepare(
    "INSERT INTO snapshots (run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages) VALUES (?, ?, ?, NULL, NULL, ?, 'complete', ?)",
  );
  for (let i = 0; i < count; i++) {
    const runId = runs[i % runs.length]!;
    const s = lastSnap.get(runId) as { step_index: number; conversation_id: string; timestamp: string; messages: string };
    const msg = `{"parts": [{"content": "appended follow-up ${i} about quarzite", "timestamp": "2027-01-01T00:00:00Z", "part_kind": "user-prompt"}], "timestamp": "2027-01-01T00:00:00Z", "instructions": null, "kind": "request", "run_id": null, "conversation_id": null, "metadata": null, "state": "complete"}`;
    db.transaction(() => insert.run(runId, s.step_index + 1, s.conversation_id, s.timestamp, s.messages.slice(0, -1) + ', ' + msg + ']'))();
  }
  db.close();
}

/**
 * A same-length edit in place of one old snapshot (a letter of its first text content changed), as
 * someone tampering with the evidence would: no row added, the file's size unchanged.
 */
export function editOldSnapshot(store: string, round: number): void {
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(store);
  const row = db.prepare('SELECT seq, messages FROM snapshots ORDER BY seq LIMIT 1 OFFSET ?').get(50 + round) as {
    seq: number;
    messages: string;
  };
  const at = row.messages.indexOf('"content": "') + '"content": "'.length;
  const old = row.messages[at]!;
  const next = old === 'q' ? 'z' : 'q';
  db.prepare('UPDATE snapshots SET messages = ? WHERE seq = ?').run(row.messages.slice(0, at) + next + row.messages.slice(at + 1), row.seq);
  db.close();
}
