/**
 * One long run (issue 21): an agent's run whose every snapshot repeats its history and adds a step, as
 * the harness writes them, grown past 150 MB beside the demo store's runs. The bench store's runs are
 * short (their snapshots 22 KB on average); here the costs that follow the size of a run rather than
 * the size of the change show: reads of its growing texts (`--no-index`, an index build), and a live
 * writer appending one snapshot to it while searches run (each should cost the snapshot, not the run).
 */
import { copyFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { openDatabase } from '../../src/store/sqlite/native.js';
import { liveWriter } from './mutations.js';
import { fmt, percentile } from './phase.js';
import { ensureStore } from './scaling.js';
import { rng, Vocabulary } from './synthetic-store.js';
import { BIN, once } from './whole-process.js';

const require = createRequire(import.meta.url);

const RUN = 'long-run';
/** Snapshots of the long run, and about the characters each step adds (ASCII, as Python's json.dumps writes by default). */
const STEPS = 300;
const STEP_CHARS = 3500;
/** Searches after a live writer's commit (each after one more snapshot), and idle ones. */
const ROUNDS = 5;

/** Timings as their median and range. */
interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export interface LongRunRow {
  readonly storeMb: number;
  readonly runMb: number;
  readonly build: number;
  readonly noIndex: Spread;
  readonly afterCommit: Spread;
  readonly idle: Spread;
}

let vocabulary: Vocabulary | null = null;

/** A step's message, as the harness's JSON of a request holds it: about STEP_CHARS of the synthetic store's Zipf-weighted words. */
function stepMessage(step: number): string {
  vocabulary ??= new Vocabulary(60_000, rng(42));
  const random = rng(1000 + step);
  let words = '';
  while (words.length < STEP_CHARS) words += `${vocabulary.word(random)} `;
  return JSON.stringify({
    parts: [{ content: `step ${step}: ${words.trimEnd()}`, timestamp: '2026-05-01T08:00:00Z', part_kind: 'user-prompt' }],
    timestamp: '2026-05-01T08:00:00Z',
    instructions: null,
    kind: 'request',
    run_id: null,
    conversation_id: null,
    metadata: null,
    state: 'complete',
  });
}

/** Appends one snapshot to the long run through `db`: its last one, one step more. */
function appendStep(db: BetterSqlite3.Database): void {
  const last = db
    .prepare("SELECT step_index, messages FROM snapshots WHERE run_id = ? AND state = 'complete' ORDER BY seq DESC LIMIT 1")
    .get(RUN) as { step_index: number; messages: string };
  const step = last.step_index + 1;
  db.prepare(
    "INSERT INTO snapshots (run_id, step_index, conversation_id, timestamp, state, messages) VALUES (?, ?, 'long-conv', ?, 'complete', ?)",
  ).run(RUN, step, `2026-05-01T08:${String(step % 60).padStart(2, '0')}:00Z`, `${last.messages.slice(0, -1)}, ${stepMessage(step)}]`);
}

/** The demo store with the long run added (plain SQL, as another writer process would). */
function writeLongRunStore(at: string, demo: string): void {
  copyFileSync(demo, at);
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(at);
  try {
    db.transaction(() => {
      db.prepare(
        "INSERT INTO runs (run_id, conversation_id, metadata, started_at) VALUES (?, 'long-conv', '{}', '2026-05-01T08:00:00Z')",
      ).run(RUN);
      db.prepare(
        "INSERT INTO snapshots (run_id, step_index, conversation_id, timestamp, state, messages) VALUES (?, 0, 'long-conv', '2026-05-01T08:00:00Z', 'complete', ?)",
      ).run(RUN, `[${stepMessage(0)}]`);
      for (let i = 1; i < STEPS; i++) appendStep(db);
    })();
  } finally {
    db.close();
  }
}

const wall = (args: readonly string[]): number => once([BIN, ...args]);

function spread(times: readonly number[]): Spread {
  const s = [...times].sort((a, b) => a - b);
  return { median: percentile(s, 50), min: s[0]!, max: s.at(-1)! };
}

/** Measures on a copy of the generated store (kept in `dir`): the live writer's snapshots must not change it. */
export function measureLongRun(plan: { dir: string; workDir: string; indexDir: string; demo: string; regenerate: boolean }): LongRunRow {
  const pristine = join(plan.dir, `long-run-${STEPS}x${STEP_CHARS}-zipf.db`);
  ensureStore(pristine, (at) => writeLongRunStore(at, plan.demo), plan.regenerate);
  const store = join(plan.workDir, 'long-run-work.db');
  copyFileSync(pristine, store);
  const index = join(plan.indexDir, 'long-run-work.index.db');
  const drop = (): void => {
    for (const s of ['', '-wal', '-shm']) rmSync(index + s, { force: true });
  };
  drop();
  const search = (...more: string[]): string[] => ['search', 'step', '--scope', 'all', '--db', store, ...more];
  process.stderr.write('  long run: build, --no-index ...\n');
  const build = wall(search('--index', index));
  const noIndex = spread(Array.from({ length: 3 }, () => wall(search('--no-index'))));
  process.stderr.write(`  long run: a live writer's commits (${ROUNDS} rounds) ...\n`);
  const writer = liveWriter(store);
  const afterCommit: number[] = [];
  const idle: number[] = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      appendStep(writer);
      afterCommit.push(wall(search('--index', index)));
      idle.push(wall(search('--index', index)));
    }
  } finally {
    writer.close();
  }
  const d = openDatabase(`file:${pristine}?mode=ro&immutable=1`, { readonly: true, fileMustExist: true });
  const runBytes = d.prepare('SELECT SUM(length(messages)) FROM snapshots WHERE run_id = ?').pluck().get(RUN) as number;
  d.close();
  drop();
  rmSync(store, { force: true });
  for (const s of ['-wal', '-shm']) rmSync(store + s, { force: true });
  return {
    storeMb: statSync(pristine).size / 1e6,
    runMb: runBytes / 1e6,
    build,
    noIndex,
    afterCommit: spread(afterCommit),
    idle: spread(idle),
  };
}

export function longRunTable(r: LongRunRow): string[] {
  const range = (x: Spread): string => `${fmt(x.median)} (${fmt(x.min)}–${fmt(x.max)})`;
  return [
    `| one long run (${STEPS} snapshots, ${r.runMb.toFixed(0)} MB of messages; store ${r.storeMb.toFixed(0)} MB), whole process | build | --no-index, median of 3 (range) | a live writer's commit of one snapshot, then: search, median of ${ROUNDS} (range) | search again (idle) |`,
    '|---|---|---|---|---|',
    `| | ${fmt(r.build)} | ${range(r.noIndex)} | ${range(r.afterCommit)} | ${range(r.idle)} |`,
  ];
}
