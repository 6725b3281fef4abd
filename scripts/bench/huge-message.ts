/**
 * Issue 21's memory row "one 200 MB message": a store of one run whose single snapshot holds one user
 * prompt of `mb` MB of words (below it, the run's other messages are small). Written straight with
 * better-sqlite3 in the Python store's schema and `json.dumps` text.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { pyIsoformat, request, response, textPart, userPromptPart } from '../lib/messages.js';
import { pyJsonDumpsAscii } from '../lib/py-json.js';
import { schemaStatements } from '../lib/store-writer.js';
import { rng, Vocabulary } from './synthetic-store.js';

const require = createRequire(import.meta.url);

/** Writes the store at `path` (which must not exist); returns the message's size in bytes. */
export function writeHugeMessageStore(path: string, mb: number): number {
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const random = rng(21);
  const vocab = new Vocabulary(60_000, random);
  const chunks: string[] = [];
  let size = 0;
  while (size < mb * 1e6) {
    const s = vocab.text(random, 2000);
    chunks.push(s);
    size += s.length + 1;
  }
  chunks.push('hugeneedle');
  const start = Date.UTC(2026, 2, 1) * 1000;
  const messages = pyJsonDumpsAscii([
    request([userPromptPart(chunks.join(' '), { timestamp: start })], { timestamp: start, runId: 'huge', conversationId: 'huge-conv' }),
    response([textPart('read it all; the needle is near the end')], { timestamp: start + 5e6, runId: 'huge', conversationId: 'huge-conv' }),
  ]);
  const db = new Database(path);
  db.pragma('journal_mode = OFF');
  for (const sql of schemaStatements('newest')) db.exec(sql);
  db.prepare(
    "INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) VALUES ('huge', 'huge-conv', NULL, NULL, '{}', ?)",
  ).run(pyIsoformat(start));
  db.prepare(
    "INSERT INTO snapshots (run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages) VALUES ('huge', 1, 'huge-conv', NULL, NULL, ?, 'complete', ?)",
  ).run(pyIsoformat(start + 6e6), messages);
  db.close();
  return size;
}
