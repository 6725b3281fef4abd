/**
 * The live writer of live-writer.test.ts, run as its own process: appends runs and snapshots to a step
 * store the way the Python `SqliteStepStore` does (WAL mode, `json.dumps` text, one transaction per
 * snapshot, the whole history re-saved at each step), a few commits per second, for a bounded time and
 * count. After each commit it prints one JSON line with the committed state (per run: snapshots and
 * record length), the commit time and how long the commit took; a commit that fails (SQLITE_BUSY or
 * anything else) is printed as such and counted.
 *
 * Connection modes:
 * - `long`: one connection for the whole session (a caller-owned `connection=`);
 * - `per-call`: a fresh connection per operation, closed after it (the Python store's path mode: the
 *   last close checkpoints and deletes -wal/-shm, so readers see the files come and go).
 *
 * With `--hold`, after the last commit the writer keeps its connection open (idle) until its stdin
 * closes, so the test can check that readers leave the store, -wal and -shm byte-identical.
 *
 * Usage: node live-writer-child.js --db PATH --mode long|per-call --ms 8000 --max-commits 120 --seed 1 [--hold]
 * Not a test file: without --db it exits at once.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { pyIsoformat, request, response, textPart, userPromptPart, type JsonObject } from '../../scripts/lib/messages.js';
import { pyJsonDumpsAscii } from '../../scripts/lib/py-json.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { pathModeCall } from './path-mode.js';
import { mulberry32 as prng } from '../../scripts/lib/random.js';

interface Args {
  db: string;
  mode: 'long' | 'per-call';
  ms: number;
  maxCommits: number;
  seed: number;
  hold: boolean;
}

function parseArgs(argv: string[]): Args | null {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const db = get('--db');
  if (!db) return null;
  return {
    db,
    mode: get('--mode') === 'per-call' ? 'per-call' : 'long',
    ms: Number(get('--ms') ?? 8000),
    maxCommits: Number(get('--max-commits') ?? 120),
    seed: Number(get('--seed') ?? 1),
    hold: argv.includes('--hold'),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const emit = (o: unknown) => process.stdout.write(JSON.stringify(o) + '\n');

interface LiveRun {
  runId: string;
  conversationId: string;
  history: JsonObject[];
  snapshots: number;
}

async function main(args: Args): Promise<void> {
  const rnd = prng(args.seed);
  // the schema exactly as the Python store creates it, then closed: the file stands alone
  if (existsSync(args.db)) throw new Error(`${args.db} exists`);
  new StepStoreWriter(args.db).close();

  let conn: Database.Database | null = null;
  const open = (): Database.Database => {
    if (conn) return conn;
    const db = new Database(args.db);
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    if (args.mode === 'long') conn = db;
    return db;
  };
  const done = (db: Database.Database): void => {
    if (args.mode === 'per-call') db.close();
  };

  const runs: LiveRun[] = [];
  const t0 = Date.now();
  const clock = Date.UTC(2026, 0, 1) * 1000;
  let commits = 0;
  let failures = 0;
  let maxLatency = 0;
  let step = 0;

  while (commits < args.maxCommits && Date.now() - t0 < args.ms) {
    step++;
    const now = clock + step * 1_000_000;
    const newRun = runs.length === 0 || (rnd() < 0.15 && runs.length < 12);
    const began = performance.now();
    let op: Record<string, unknown>;
    try {
      const db = open();
      if (newRun) {
        const run: LiveRun = {
          runId: `live-run-${runs.length}`,
          conversationId: `live-conv-${runs.length % 3}`,
          history: [],
          snapshots: 0,
        };
        // register_run: one INSERT in autocommit mode
        db.prepare(
          'INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at, registration_id) VALUES (?, ?, NULL, NULL, ?, ?, NULL)',
        ).run(run.runId, run.conversationId, '{}', pyIsoformat(now));
        runs.push(run);
        op = { op: 'register', run: run.runId };
      } else {
        // save_snapshot: the whole history, re-saved, in one transaction
        const run = runs[runs.length - 1 - Math.floor(rnd() * Math.min(3, runs.length))]!;
        const word = `stepword${step}`;
        const filler = rnd() < 0.3 ? ' ' + 'filler '.repeat(500 + Math.floor(rnd() * 3000)) : '';
        const history = [
          ...run.history,
          request([userPromptPart(`question ${word} liveword ${run.runId}`, { timestamp: now })], {
            timestamp: now,
            runId: run.runId,
            conversationId: run.conversationId,
          }),
          response([textPart(`answer ${word} liveword${filler}`)], {
            timestamp: now + 1000,
            runId: run.runId,
            conversationId: run.conversationId,
            modelName: 'live-model',
          }),
        ];
        const text = pyJsonDumpsAscii(history);
        db.transaction(() => {
          db.prepare(
            "INSERT INTO snapshots (run_id, step_index, conversation_id, parent_run_id, agent_name, timestamp, state, messages, idempotency_key) VALUES (?, ?, ?, NULL, NULL, ?, 'complete', ?, NULL)",
          ).run(run.runId, run.snapshots + 1, run.conversationId, pyIsoformat(now + 2000), text);
        })();
        run.history = history;
        run.snapshots++;
        op = { op: 'snapshot', run: run.runId, word };
      }
      done(db);
    } catch (e) {
      failures++;
      emit({
        failure: true,
        code: (e as { code?: string }).code ?? null,
        message: (e as Error).message,
        latency: performance.now() - began,
      });
      await sleep(50 + rnd() * 100);
      continue;
    }
    const latency = performance.now() - began;
    maxLatency = Math.max(maxLatency, latency);
    commits++;
    emit({
      commit: commits,
      step,
      at: Date.now(),
      latency,
      ...op,
      state: Object.fromEntries(
        runs.map((r) => [r.runId, { conversation: r.conversationId, snapshots: r.snapshots, messages: r.history.length }]),
      ),
    });
    await sleep(50 + rnd() * 100);
  }
  emit({ done: true, commits, failures, maxLatency, ms: Date.now() - t0 });
  if (args.hold) {
    // idle, connection open, until the test closes our stdin
    await new Promise<void>((resolve) => {
      process.stdin.on('end', resolve);
      process.stdin.on('close', resolve);
      process.stdin.resume();
    });
  }
  (conn as Database.Database | null)?.close();
  // Per call, the last close deletes -wal/-shm only if no reader had the file open at that moment; one
  // more call (what the Python store's next operation does) makes the end state not depend on that race
  if (args.mode === 'per-call') pathModeCall(args.db);
  emit({ closed: true });
}

const args = parseArgs(process.argv.slice(2));
if (args) {
  main(args).catch((e: unknown) => {
    emit({ fatal: true, message: (e as Error).stack ?? String(e) });
    process.exitCode = 3;
  });
}
