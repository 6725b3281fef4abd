/**
 * Small helpers for tests that build a step store in a temp directory (StepStoreWriter) and read it
 * back with the library (open, replay, search) without spawning the CLI.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pyJsonDumpsAscii } from '../../scripts/lib/py-json.js';
import { pyIsoformat, textResponse, userRequest, utc, type JsonObject, type Micros } from '../../scripts/lib/messages.js';
import { StepStoreWriter, type StepStoreWriterOptions } from '../../scripts/lib/store-writer.js';
import { parseJson } from '../../src/py/json-parse.js';
import { toMessage, type Message } from '../../src/history/messages.js';
import type { RecordMessage, RunReplay } from '../../src/history/replay.js';
import { HistorySource } from '../../src/history/source.js';
import { toolText } from '../../src/output/tool-text.js';
import { renderRecordMessage } from '../../src/render/record.js';
import { ReplayCorpusSource } from '../../src/search/replay-source.js';
import { DEFAULTS } from '../../src/api/defaults.js';
import { search, type SearchOptions, type SearchOutcome } from '../../src/search/search.js';
import { searchStores, type WorkHooks } from '../../src/api/search.js';
import type { IndexChoice } from '../../src/sidecar/with-index.js';
import type { StoreReader } from '../../src/store/reader.js';
import { openSqliteReader, type SqliteReader } from '../../src/store/sqlite/reader.js';

const dirs: string[] = [];
process.on('exit', () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh temp directory, removed when the test process exits. */
/** Runs one statement on the store at `path` (its own connection, closed after). */
export function writeStore(path: string, sql: string, ...params: unknown[]): void {
  const db = new Database(path);
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

export function tempDir(prefix = 'convsearch-test-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** 2026-01-02T03:04:05Z plus `seconds`, in microseconds (the writer's time unit). */
export const T0: Micros = utc('2026-01-02T03:04:05Z');
export function at(seconds: number): Micros {
  return T0 + Math.round(seconds * 1_000_000);
}

/** Writes a store in a new temp directory (or at `path`), closes it (checkpointed, no -wal) and returns its path. */
export function buildStore(build: (w: StepStoreWriter) => void, opts: StepStoreWriterOptions & { path?: string } = {}): string {
  const path = opts.path ?? join(tempDir(), 'sessions.db');
  const w = new StepStoreWriter(path, opts);
  try {
    build(w);
  } finally {
    w.close();
  }
  return path;
}

/** Registers a run whose `started_at` is `at(startSeconds)`. */
export function addRun(w: StepStoreWriter, runId: string, conversationId: string | null, startSeconds = 0): void {
  w.registerRun({ runId, conversationId, startedAt: at(startSeconds) });
}

let snapClock = 1000;

/** Saves a snapshot with an automatic timestamp; `messages` are builder objects. */
export function addSnapshot(
  w: StepStoreWriter,
  runId: string,
  messages: JsonObject[],
  opts: { stepIndex?: number; state?: 'complete' | 'interrupted' } = {},
): number {
  return w.saveSnapshot({ runId, stepIndex: opts.stepIndex ?? 1, state: opts.state ?? 'complete', timestamp: at(snapClock++), messages })!;
}

/** Inserts a snapshot row whose `messages` column holds exactly `text` (or any SQLite value). */
export function addRawSnapshot(
  w: StepStoreWriter,
  runId: string,
  text: unknown,
  opts: { stepIndex?: number; state?: 'complete' | 'interrupted' } = {},
): number {
  const cols = ['run_id', 'step_index', 'timestamp', 'messages'];
  const vals: unknown[] = [runId, opts.stepIndex ?? 1, pyIsoformat(at(snapClock++)), text];
  if (w.shape !== 'pre-state') {
    cols.push('state');
    vals.push(opts.state ?? 'complete');
  }
  const info = w.db.prepare(`INSERT INTO snapshots (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(...vals);
  return Number(info.lastInsertRowid);
}

/** Python `json.dumps` text of a message list (what `snapshots.messages` holds without externalization). */
export function dumps(messages: unknown): string {
  return pyJsonDumpsAscii(messages);
}

/** A user request / text response pair stamped at `at(seconds)`. */
export function userMsg(text: string, seconds: number): JsonObject {
  return userRequest(text, { timestamp: at(seconds) });
}
export function assistantMsg(text: string, seconds: number): JsonObject {
  return textResponse(text, { timestamp: at(seconds) });
}

/** A builder message as the reader sees it: dumped like Python, parsed, validated. */
export function parseMessage(obj: JsonObject, i = 0): Message {
  return toMessage(parseJson(pyJsonDumpsAscii(obj)), i);
}

/** Opens the store read-only, runs `fn`, closes. */
export function withSource<T>(path: string, fn: (source: HistorySource, store: SqliteReader) => T): T {
  const store = openSqliteReader(path);
  try {
    return fn(new HistorySource(store), store);
  } finally {
    store.close();
  }
}

/** A run's replay (full record, skipped snapshots, unknown part kinds). */
export function replayOf(path: string, runId: string): RunReplay {
  return withSource(path, (s) => s.replay(runId));
}

/** The index text of each message of a run's full record. */
export function recordTexts(path: string, runId: string): string[] {
  return replayOf(path, runId).messages.map((m: RecordMessage) => renderRecordMessage(m).text);
}

export interface SearchCall {
  query: string;
  /** Conversation scope with this id; otherwise scope `all`. */
  conversationId?: string | null;
  scope?: 'all' | 'conversation';
  runId?: string | null;
  maxMatches?: number;
  contextLines?: number;
  k1?: number;
  b?: number;
}

/** Runs the reference control flow over a freshly replayed corpus; returns the outcome and the exact tool text. */
export function searchStore(path: string, call: SearchCall): { outcome: SearchOutcome; text: string } {
  return withSource(path, (source) => {
    const conversationId = call.conversationId === undefined ? null : call.conversationId;
    const outcome = search(new ReplayCorpusSource(source), {
      query: call.query,
      scope: call.scope ?? (conversationId !== null ? 'conversation' : 'all'),
      conversationId,
      runId: call.runId ?? null,
      maxMatches: call.maxMatches ?? DEFAULTS.maxMatches,
      contextLines: call.contextLines ?? DEFAULTS.contextLines,
      bm25: { k1: call.k1 ?? DEFAULTS.bm25.k1, b: call.b ?? DEFAULTS.bm25.b },
    });
    return { outcome, text: toolText(outcome) };
  });
}

/** Just the tool text. */
export function toolReply(path: string, call: SearchCall): string {
  return searchStore(path, call).text;
}

/** One store's search through the library, as a session of that store runs it (index or replay). */
export function searchReader(store: StoreReader, options: SearchOptions, index: IndexChoice, hooks: WorkHooks = {}): SearchOutcome {
  return searchStores([{ label: store.label, store }], options, index, hooks);
}
