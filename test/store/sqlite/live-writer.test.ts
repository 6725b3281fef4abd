/**
 * convsearch against a store that a live writer is appending to (issue #5).
 *
 * A child process (live-writer-child.ts) commits runs and snapshots the way the Python store does, a few
 * per second, logging the committed state after each commit. Meanwhile `search --json` (with and without
 * the index), `runs --json` and `conversations --json` run back to back. Every reply must:
 * - exit 0 or 1 with nothing on stderr;
 * - equal exactly one committed state of the store (never a mix of two), and one that was current at
 *   some moment while the command ran (not a stale one);
 * and the writer must never be blocked (no failed commit, no commit slower than 1 s).
 * Once the writer stops, one more round of commands must leave the store files byte-identical.
 *
 * Two sessions: a writer holding one connection (as with `connection=`), and a writer opening and
 * closing a connection per operation (the Python store's path mode), which makes -wal/-shm come and go.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import Database from 'better-sqlite3';
import { StepStoreWriter } from '../../../scripts/lib/store-writer.js';
import { runCliAsync, type CliResult } from '../../helpers/cli.js';
import { pathModeCall } from '../../helpers/path-mode.js';
import { cliEnv, STACK_LINE, storeDigest, tempDir } from '../../helpers/hardening.js';

const CHILD = fileURLToPath(new URL('../../helpers/live-writer-child.js', import.meta.url));

interface RunState {
  readonly conversation: string;
  readonly snapshots: number;
  readonly messages: number;
}

interface Commit {
  readonly commit: number;
  readonly step: number;
  readonly at: number;
  readonly latency: number;
  readonly op: 'register' | 'snapshot';
  readonly run: string;
  readonly word?: string;
  readonly state: Record<string, RunState>;
}

interface Observation {
  readonly kind: 'search' | 'search-no-index' | 'runs' | 'conversations';
  readonly args: string[];
  readonly start: number;
  readonly end: number;
  readonly result: CliResult;
  /** step number searched for (search kinds) */
  readonly step?: number;
}

interface Session {
  commits: Commit[];
  failures: unknown[];
  done: { commits: number; failures: number; maxLatency: number; ms: number };
  observations: Observation[];
  finalChecks: Array<{ phase: string; before: Record<string, string>; after: Record<string, string>; results: CliResult[] }>;
}

const SLACK_MS = 2;
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** The state after commit `i` (0: the empty store), and the window in which it was the current state. */
function states(commits: readonly Commit[]): Array<{ state: Record<string, RunState>; from: number; until: number; commit: number }> {
  const out = [{ state: {} as Record<string, RunState>, from: 0, until: commits[0]?.at ?? Infinity, commit: 0 }];
  commits.forEach((c, i) => {
    out.push({ state: c.state, from: c.at, until: commits[i + 1]?.at ?? Infinity, commit: c.commit });
  });
  return out;
}

/** Where each step word's two messages sit: run and record positions. */
function wordPositions(commits: readonly Commit[]): Map<number, { run: string; positions: [number, number]; commit: number }> {
  const out = new Map<number, { run: string; positions: [number, number]; commit: number }>();
  for (const c of commits) {
    if (c.op !== 'snapshot') continue;
    const m = c.state[c.run]!.messages;
    out.set(c.step, { run: c.run, positions: [m - 2, m - 1], commit: c.commit });
  }
  return out;
}

/** Whether `obs` shows exactly the committed state `s` (with commit number `n`). */
function matches(obs: Observation, s: Record<string, RunState>, n: number, words: ReturnType<typeof wordPositions>): boolean {
  const doc = JSON.parse(obs.result.stdout) as Record<string, unknown>;
  const runs = Object.entries(s);
  if (obs.kind === 'runs') {
    const got = (doc.runs as Array<{ run_id: string; conversation_id: string; snapshots: number; messages: number }>).map((r) => [
      r.run_id,
      r.conversation_id,
      r.snapshots,
      r.messages,
    ]);
    return JSON.stringify(got) === JSON.stringify(runs.map(([id, r]) => [id, r.conversation, r.snapshots, r.messages]));
  }
  if (obs.kind === 'conversations') {
    const expected = new Map<string, { runs: number; messages: number }>();
    for (const [, r] of runs) {
      const e = expected.get(r.conversation) ?? { runs: 0, messages: 0 };
      expected.set(r.conversation, { runs: e.runs + 1, messages: e.messages + r.messages });
    }
    const got = doc.conversations as Array<{ conversation_id: string; runs: number; messages: number }>;
    return (
      got.length === expected.size &&
      got.every((c) => expected.get(c.conversation_id)?.runs === c.runs && expected.get(c.conversation_id)?.messages === c.messages)
    );
  }
  const total = runs.reduce((t, [, r]) => t + r.messages, 0);
  const hits = (doc.hits as Array<{ run_id: string; message_index: number }>).map((h) => `${h.run_id}#${h.message_index}`).sort();
  const w = words.get(obs.step!);
  const expectedHits = w && w.commit <= n ? w.positions.map((p) => `${w.run}#${p}`).sort() : [];
  const totalShown = doc.total_messages as number;
  // with no history at all the reply carries no total
  return (total === 0 ? totalShown === 0 : totalShown === total) && JSON.stringify(hits) === JSON.stringify(expectedHits);
}

async function liveSession(mode: 'long' | 'per-call', ms: number, maxCommits: number, seed: number): Promise<Session> {
  const dir = tempDir(`live-${mode}`);
  const cache = tempDir(`live-${mode}-cache`);
  const env = cliEnv(cache);
  const db = join(dir, 'live.db');
  const child = spawn(
    process.execPath,
    [CHILD, '--db', db, '--mode', mode, '--ms', String(ms), '--max-commits', String(maxCommits), '--seed', String(seed), '--hold'],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const session: Session = { commits: [], failures: [], done: null as unknown as Session['done'], observations: [], finalChecks: [] };
  let childErr = '';
  child.stderr.on('data', (b: Buffer) => (childErr += b.toString()));
  let firstCommit!: () => void;
  const started = new Promise<void>((r) => (firstCommit = r));
  let finished!: () => void;
  const writerDone = new Promise<void>((r) => (finished = r));
  let closed!: () => void;
  const writerClosed = new Promise<void>((r) => (closed = r));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  createInterface({ input: child.stdout }).on('line', (line) => {
    const o = JSON.parse(line) as Record<string, unknown>;
    if (o.fatal) throw new Error(`writer died: ${String(o.message)}`);
    if (o.failure) session.failures.push(o);
    else if (o.done) {
      session.done = o as unknown as Session['done'];
      finished();
    } else if (o.closed) closed();
    else {
      session.commits.push(o as unknown as Commit);
      if (session.commits.length === 1) firstCommit();
    }
  });
  await Promise.race([started, exited.then((c) => Promise.reject(new Error(`writer exited (${c}) before committing: ${childErr}`)))]);

  // readers, back to back, until the writer is done
  let stop = false;
  void writerDone.then(() => (stop = true));
  const reader = async (k: number): Promise<void> => {
    for (let i = k; !stop; i += 2) {
      const kind = (['search', 'runs', 'search-no-index', 'conversations'] as const)[i % 4]!;
      const lastStep = session.commits[session.commits.length - 1]?.step ?? 1;
      // a word that is probably committed, or about to be
      const step = Math.max(1, lastStep - (i % 5) + 1);
      const args =
        kind === 'runs'
          ? ['runs', '--json']
          : kind === 'conversations'
            ? ['conversations', '--json']
            : [
                'search',
                `stepword${step}`,
                '--scope',
                'all',
                '--json',
                '-C',
                '0',
                '-m',
                '50',
                ...(kind === 'search-no-index' ? ['--no-index'] : []),
              ];
      const start = Date.now();
      const result = await runCliAsync([...args, '--db', db], { env });
      session.observations.push({ kind, args, start, end: Date.now(), result, ...(kind.startsWith('search') ? { step } : {}) });
    }
  };
  await Promise.all([reader(0), reader(1)]);
  await writerDone;

  // the writer is idle with its connection open: a final round must leave every file as it was
  const finalRound = async (phase: string): Promise<void> => {
    const before = storeDigest(db);
    const results: CliResult[] = [];
    for (const args of [
      ['search', 'liveword', '--scope', 'all', '--json'],
      ['search', 'liveword', '--scope', 'all', '--no-index', '--format', 'tool'],
      ['runs', '--json'],
      ['conversations', '--json'],
      ['show', 'live-run-0', '--json'],
    ]) {
      results.push(await runCliAsync([...args, '--db', db], { env }));
    }
    session.finalChecks.push({ phase, before, after: storeDigest(db), results });
  };
  await finalRound(mode === 'long' ? 'writer idle, connection open' : 'writer idle, between connections');
  child.stdin.end();
  await writerClosed;
  assert.equal(await exited, 0, childErr);
  await finalRound('writer closed');
  return session;
}

function checkSession(s: Session, label: string): string {
  assert.ok(s.done, `${label}: the writer never finished`);
  // 1. the writer was never blocked
  assert.deepEqual(s.failures, [], `${label}: failed commits`);
  assert.equal(s.done.failures, 0);
  assert.ok(s.done.maxLatency < 1000, `${label}: a commit took ${s.done.maxLatency.toFixed(0)} ms`);
  assert.ok(s.commits.length >= 20, `${label}: only ${s.commits.length} commits`);

  // 2. no reader error, and every reply equals a committed state that was current while it ran
  const all = states(s.commits);
  const words = wordPositions(s.commits);
  const inconsistent: string[] = [];
  const counts: Record<string, number> = {};
  for (const o of s.observations) {
    const what = `${label}: convsearch ${o.args.join(' ')}`;
    counts[o.kind] = (counts[o.kind] ?? 0) + 1;
    assert.ok(o.result.status === 0 || o.result.status === 1, `${what}: exit ${o.result.status}\n${o.result.stderr}`);
    assert.ok(!STACK_LINE.test(o.result.stderr), `${what}: stack trace\n${o.result.stderr}`);
    assert.equal(o.result.stderr, '', `${what}: stderr`);
    const candidates = all.filter((x) => x.from <= o.end + SLACK_MS && x.until >= o.start - SLACK_MS);
    if (!candidates.some((x) => matches(o, x.state, x.commit, words))) {
      const anyTime = all.filter((x) => matches(o, x.state, x.commit, words)).map((x) => x.commit);
      inconsistent.push(
        `${what} (ran ${o.start}..${o.end}, states then: ${candidates.map((x) => x.commit).join(',')}; matches states ${anyTime.join(',') || 'none'})\n${o.result.stdout.slice(0, 600)}`,
      );
    }
  }
  assert.deepEqual(
    inconsistent.slice(0, 3),
    [],
    `${label}: ${inconsistent.length} of ${s.observations.length} replies match no committed state current while they ran`,
  );
  for (const kind of ['search', 'search-no-index', 'runs', 'conversations'])
    assert.ok((counts[kind] ?? 0) >= 2, `${label}: too few ${kind} runs`);

  // 3. once the writer stopped, convsearch changes nothing
  for (const f of s.finalChecks) {
    for (const r of f.results) assert.ok(r.status === 0 && r.stderr === '', `${label}, ${f.phase}: exit ${r.status}\n${r.stderr}`);
    assert.deepEqual(f.after, f.before, `${label}, ${f.phase}: store files changed`);
  }
  const closed = s.finalChecks[s.finalChecks.length - 1]!;
  // which side files each final round found, to tell a left -shm's origin should this ever fail
  const present = s.finalChecks
    .map((f) => `${f.phase}: ${['-wal', '-shm'].filter((k) => f.before[k] !== '-').join('+') || 'none'}`)
    .join('; ');
  assert.equal(closed.after['-shm'], '-', `a -shm was left after the writer closed (side files found: ${present})`);
  let note = '';
  if (label.startsWith('long')) assert.equal(closed.after['-wal'], '-', 'a -wal was left after the writer closed');
  else if (closed.after['-wal'] !== '-') {
    // Known residual race (see store/sqlite/open.ts): when the writer's close deletes -wal/-shm between
    // convsearch's look at them and SQLite's first read, SQLite's read-only open creates an empty -wal.
    // Empty: the store's content is untouched, but the file is a trace. Anything else would be a bug.
    assert.equal(closed.after['-wal'], EMPTY_SHA256, 'a non-empty -wal was left after the writer closed');
    note = ' (an empty -wal was left by the open race)';
  }

  const lat = s.commits.map((c) => c.latency).sort((x, y) => x - y);
  return (
    `${label}: ${s.commits.length} commits in ${(s.done.ms / 1000).toFixed(1)} s (max latency ${s.done.maxLatency.toFixed(1)} ms, p50 ${lat[lat.length >> 1]!.toFixed(1)} ms), ` +
    `${s.observations.length} reader runs (${Object.entries(counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}), 0 errors, 0 inconsistent; ` +
    `final rounds left the files byte-identical${note} (${s.finalChecks
      .map(
        (f) =>
          `${f.phase}: ${Object.entries(f.before)
            .filter(([, v]) => v !== '-')
            .map(([k]) => k)
            .join('+')}`,
      )
      .join('; ')})`
  );
}

test('a live writer holding one connection: readers see only committed states, never block it, change nothing', async () => {
  const s = await liveSession('long', 8000, 160, 11);
  const summary = checkSession(s, 'long-lived connection');
  console.log(`# ${summary}`);
  assert.ok(existsSync(join(CHILD)));
});

test('a live writer with a connection per call (Python path mode): the same, while -wal/-shm come and go', async () => {
  const s = await liveSession('per-call', 6000, 120, 23);
  const summary = checkSession(s, 'connection per call');
  console.log(`# ${summary}`);
});

test("the per-call writer's last operation removes the -wal and -shm a reader's lock left at the close before it (a bare open and close would not)", async () => {
  const db = join(tempDir('path-mode-close'), 'store.db');
  new StepStoreWriter(db).close();
  const sideFiles = (): string[] => ['-wal', '-shm'].filter((s) => existsSync(db + s));
  // another process in a read transaction while the writer's connection closes: that close cannot checkpoint
  const reader = spawn(
    process.execPath,
    [
      '-e',
      `const D = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))});
       const d = new D(${JSON.stringify(db)}, { readonly: true });
       d.exec('BEGIN'); d.prepare('SELECT COUNT(*) FROM runs').get(); process.stdout.write('reading\\n');
       process.stdin.on('end', () => { d.exec('COMMIT'); d.close(); }); process.stdin.resume();`,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve) => reader.stdout.once('data', () => resolve()));
  const writer = new Database(db);
  writer.prepare("INSERT INTO runs (run_id, metadata, started_at) VALUES ('r', '{}', '2026-01-01T00:00:00+00:00')").run();
  writer.close();
  assert.deepEqual(sideFiles(), ['-wal', '-shm'], 'the close beside a reader left the side files');
  const exited = new Promise((resolve) => reader.on('exit', resolve));
  reader.stdin.end();
  await exited;
  new Database(db).close();
  assert.deepEqual(sideFiles(), ['-wal', '-shm'], 'a connection that never read never opened the log');
  pathModeCall(db);
  assert.deepEqual(sideFiles(), [], 'the next operation of the store removed them');
});
