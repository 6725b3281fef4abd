/**
 * `npm run bench [-- --mb 750] [--seed 42] [--repeat 3] [--runs 15] [--regenerate] [--quick] [--no-scaling] [--no-long-run]
 * [--huge-mb 200] [--no-backends | --backends-only] [--appends-only] [--shared-index]`: speed of convsearch on a synthetic store. Besides the in-process phases it
 * prints whole-process latencies (whole-process.ts), a scaling table (scaling.ts; `--no-scaling` leaves it
 * out) and one long run's costs (long-run.ts; `--no-long-run` leaves them out, `--long-run-only`: just them). `--quick` measures only the whole-process latencies (building the index first if needed): with
 * `--mb 100` a run takes well under a minute. The full run also measures the raw read of the store copied into a
 * FileStepStore tree, Postgres and Redis (throwaway servers), against the SQLite read, and each backend's
 * open + stamp, index build and warm search (issue 21's table has a row for each server; `--no-backends`
 * leaves them out, `--backends-only` measures only them). `--appends-only`
 * measures only a search with nothing changed against the update and the search after one appended run,
 * and the search after each of 16 consecutive appends (median and worst: a merge of segments lands on some).
 * `--shared-index` measures only the shared index in Postgres on a simulated fleet (shared-index.ts).
 *
 * The full run ends with issue 21's targets (targets.ts): every row of the issue's table, measured, against
 * the read + JSON.parse floor of the same run, with "holds" or "misses".
 *
 * Every figure is measured in this one run, each phase in a fresh child process so that its peak RSS
 * is its own. Figures are printed, never asserted: speed targets live here, not in unit tests.
 */
import { closeSync, copyFileSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import { openSqliteReader, SqliteReader } from '../../src/store/sqlite/reader.js';
import { openStoreReader } from '../../src/store/open-reader.js';
import { searchStores } from '../../src/api/search.js';
import { openIndexedSource } from '../../src/sidecar/with-index.js';
import { defaultThreads } from '../../src/parallel/threads.js';
import { DEFAULTS } from '../../src/api/defaults.js';
import type { SearchOptions } from '../../src/search/search.js';
import { writeSyntheticStore, rng, Vocabulary } from './synthetic-store.js';
import { phaseBackendRead, phaseBackendReplay, phaseBackendStamp, prepareBackends } from './backends.js';
import { writeHugeMessageStore } from './huge-message.js';
import { appendSnapshots, continueConversation, editOldSnapshot, liveWriter } from './mutations.js';
import { arg, bulkWrite, flag, fmt, percentile, rssMb, runPhase, type PhaseResult } from './phase.js';
import { measureLongRun, longRunTable } from './long-run.js';
import { ensureStore, runScaling, scalingTable } from './scaling.js';
import { sharedIndexBench } from './shared-index.js';
import { targetsTable } from './targets.js';
import { BIN, cliProbes, latencyTable, measureLatencies, type Probe, DEMO } from './whole-process.js';

const require = createRequire(import.meta.url);
/** Appends measured one after another (`--appends-only`): more than MAX_SEGMENTS, so merges land among them. */
const CONSECUTIVE_APPENDS = 16;
/** Whole-process searches of each backend (the issue's Postgres and Redis rows), and the queries they cycle through. */
const BACKEND_SEARCHES = 15;
const WARM_WORDS = ['kalo', 'quarzite', 'kalo quarzite'];

function options(query: string, scope: Partial<SearchOptions>): SearchOptions {
  return {
    query,
    scope: 'all',
    conversationId: null,
    runId: null,
    maxMatches: DEFAULTS.maxMatches,
    contextLines: DEFAULTS.contextLines,
    bm25: DEFAULTS.bm25,
    ...scope,
  };
}

// ---------------------------------------------------------------------------------------------
// Phases (each runs in its own process)

function phaseFloor(store: string, parse: boolean): PhaseResult {
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(`file:${store}?mode=ro&immutable=1`, { readonly: true });
  const t = performance.now();
  let bytes = 0;
  for (const row of db.prepare('SELECT messages FROM snapshots').raw().iterate() as IterableIterator<[string]>) {
    bytes += row[0].length;
    if (parse) JSON.parse(row[0]);
  }
  const ms = performance.now() - t;
  db.close();
  return { ms, rssMb: rssMb(), extra: { mb: Math.round(bytes / 1e6) } };
}

function phaseNoIndex(store: string, scope: Partial<SearchOptions>, query: string): PhaseResult {
  const t = performance.now();
  const s = openSqliteReader(store);
  const outcome = searchStores([{ label: s.label, store: s }], options(query, scope), false);
  s.close();
  return { ms: performance.now() - t, rssMb: rssMb(), extra: { outcome: outcome.kind } };
}

/** Fresh memory the fault-cost phase touches, a 4 KiB page at a time. */
const FAULT_PROBE_BYTES = 64 * 1024 * 1024;

/**
 * What the first touch of a page of fresh memory costs on this machine, the price of every phase's
 * `faults=` (10.8 µs on one 2-core VM: README): one byte written per 4 KiB of a fresh 64 MB array, the
 * time and the faults of that loop alone.
 */
function phaseFaultCost(): PhaseResult {
  const a = new Uint8Array(FAULT_PROBE_BYTES);
  const before = process.resourceUsage().minorPageFault;
  const t = performance.now();
  for (let i = 0; i < a.length; i += 4096) a[i] = 1;
  const ms = performance.now() - t;
  const faults = process.resourceUsage().minorPageFault - before;
  return { ms, rssMb: rssMb(), extra: { touched: faults, usEach: (ms * 1000) / Math.max(1, faults) } };
}

/** Bytes each read of the file-read phase takes (the time is the same from 128 KiB to 4 MiB here: README). */
const FILE_READ_CHUNK = 1024 * 1024;

/**
 * What the page map's pass cannot be quicker than where no live writer's log names the pages that
 * changed: a read of every byte of the store file from the page cache (read once before, so that it is
 * there), into one buffer used again and again, nothing hashed.
 */
function phaseFileRead(store: string): PhaseResult {
  const fd = openSync(store, 'r');
  const buffer = Buffer.allocUnsafe(FILE_READ_CHUNK);
  const pass = (): number => {
    let at = 0;
    for (let n: number; (n = readSync(fd, buffer, 0, buffer.length, at)) > 0; ) at += n;
    return at;
  };
  try {
    pass();
    const t = performance.now();
    const bytes = pass();
    return { ms: performance.now() - t, rssMb: rssMb(), extra: { mb: Math.round(bytes / 1e6) } };
  } finally {
    closeSync(fd);
  }
}

/** What a server store's driver thread pays before its first reply: the first reply of a worker thread that answers at once. */
async function phaseWorkerStart(): Promise<PhaseResult> {
  const t = performance.now();
  const worker = new Worker("require('node:worker_threads').parentPort.postMessage(0)", { eval: true });
  await new Promise((resolve) => worker.once('message', resolve));
  const ms = performance.now() - t;
  await worker.terminate();
  return { ms, rssMb: rssMb() };
}

/**
 * The lines under issue 21's table: what the rows that miss stand on, measured in this run. An appended
 * run's search checks every page of a file read without a live writer's log (the log names the pages a
 * commit wrote; the file does not), so it cannot be quicker than the warm search and a read of the file;
 * each server store's driver runs in a worker thread, whose start its first search waits for.
 */
function floorLines(store: string, warmMs: number): string[] {
  const read = summarized(Array.from({ length: 3 }, () => runPhase(['file-read', store])));
  const worker = summarized(Array.from({ length: 5 }, () => runPhase(['worker-start'])));
  return [
    '',
    `what the misses stand on, here: a read of the store file from the page cache took ${fmt(read.ms)} (${Number(read.extra!.mb)} MB, median of 3), so a search after an appended run (every page checked: no live writer's log names the ones it wrote) takes at least warm + ${fmt(read.ms)} = ${fmt(warmMs + read.ms)}; a worker thread's first reply took ${fmt(worker.ms)} (median of 5), which a server store's first search waits for (its driver runs in one)`,
  ];
}

/** The fault-cost phase's line under the tables. */
function faultCostLine(): string {
  const r = runPhase(['fault-cost']);
  const each = Number(r.extra!.usEach);
  return `page faults: ${each.toFixed(2)} µs each here (${Number(r.extra!.touched)} pages of fresh memory touched in ${fmt(r.ms)}); each phase's faults= at that price`;
}

/** `store`: any `--db` value (a SQLite file, a FileStepStore tree, a server URL). */
function phaseSync(store: string, index: string): PhaseResult {
  const t = performance.now();
  const s = openStoreReader(store);
  const opened = openIndexedSource(s, { path: index, onBulkWrite: bulkWrite });
  opened.db.close();
  s.close();
  const r = opened.report;
  return {
    ms: performance.now() - t,
    rssMb: rssMb(),
    extra: {
      ...(s instanceof SqliteReader ? { mode: s.mode } : {}),
      checked: r.contentChecked ? 'content' : 'stamp',
      replayed: r.runsReplayed,
      resumed: r.runsResumed,
      snapshots: r.snapshotsRead,
      digested: r.rowsDigested,
      hashed: r.pagesHashed,
      marks: r.marksRead,
      ...(r.merged || r.compacted ? { merge: r.compacted ? 'base' : 'tier', mergeRuns: r.mergeRunsRead } : {}),
    },
  };
}

/** One search through the index, as a user runs it: open, bring the index up to date, query. */
function phaseSearch(store: string, index: string, query: string): PhaseResult {
  const t = performance.now();
  const s = openSqliteReader(store); // the incremental phases change the SQLite store
  searchStores([{ label: s.label, store: s }], options(query, { scope: 'all' }), { path: index }, { onBulkWrite: bulkWrite });
  const mode = s.mode;
  s.close();
  return { ms: performance.now() - t, rssMb: rssMb(), extra: { mode } };
}

/** A CLI command in this process (its output is thrown away). */
async function phaseCli(args: string[]): Promise<PhaseResult> {
  const { main } = await import('../../src/cli/main.js');
  let bytes = 0;
  const sink = {
    stdout: { write: (s: string) => void (bytes += s.length) },
    stderr: { write: (s: string) => void process.stderr.write(s) },
    env: process.env,
    cwd: process.cwd(),
    readStdin: () => '',
    bulkWrite,
  };
  const t = performance.now();
  const exit = await main(['node', 'convsearch', ...args], sink);
  const ms = performance.now() - t;
  return { ms, rssMb: rssMb(), extra: { exit, kb: Math.round(bytes / 1024) } };
}

function phaseWarm(store: string, index: string, queries: Array<{ query: string; scope: Partial<SearchOptions> }>): PhaseResult {
  const times: number[] = [];
  for (const q of queries) {
    const t = performance.now();
    const s = openStoreReader(store);
    searchStores([{ label: s.label, store: s }], options(q.query, q.scope), { path: index }, { onBulkWrite: bulkWrite });
    s.close();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const pct = (p: number): number => percentile(times, p);
  return { ms: pct(50), rssMb: rssMb(), extra: { p50: pct(50), p95: pct(95), n: times.length } };
}

/** 50 queries of one to three common, mid and rare words; `storeWide`: all store-wide, else a third each store-wide, one conversation, one run. */
function queriesFor(store: string, storeWide: boolean): Array<{ query: string; scope: Partial<SearchOptions> }> {
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(`file:${store}?mode=ro&immutable=1`, { readonly: true });
  const runs = db.prepare('SELECT run_id, conversation_id FROM runs ORDER BY rowid').all() as Array<{
    run_id: string;
    conversation_id: string;
  }>;
  db.close();
  const random = rng(storeWide ? 8 : 7);
  const vocab = new Vocabulary(60_000, rng(42)); // the generator's vocabulary: same seed, same words
  const out: Array<{ query: string; scope: Partial<SearchOptions> }> = [];
  for (let i = 0; i < 50; i++) {
    // common, mid and rare words, one to three terms
    const words = Array.from({ length: 1 + (i % 3) }, (_, k) => vocab.words[Math.floor(random() ** (2 + k) * 20_000)]!);
    const run = runs[Math.floor(random() * runs.length)]!;
    const scope: Partial<SearchOptions> =
      storeWide || i % 3 === 0
        ? { scope: 'all' }
        : i % 3 === 1
          ? { scope: 'conversation', conversationId: run.conversation_id }
          : { scope: 'all', runId: run.run_id };
    out.push({ query: words.join(' '), scope });
  }
  return out;
}

async function main(): Promise<void> {
  const mb = Number(arg('mb', '750'));
  const seed = Number(arg('seed', '42'));
  const dir = join(tmpdir(), 'convsearch-bench');
  mkdirSync(dir, { recursive: true });
  if (flag('long-run-only')) {
    longRunOnly(dir);
    return;
  }
  const store = join(dir, `synthetic-${mb}mb-seed${seed}.db`);
  ensureStore(
    store,
    (at) => {
      const t = performance.now();
      const s = writeSyntheticStore(at, {
        targetBytes: mb * 1e6,
        seed,
        onProgress: (c, b) => process.stderr.write(`\r  ${c} conversations, ${Math.round(b / 1e6)} MB`),
      });
      process.stderr.write(
        `\n  ${s.runs} runs, ${s.conversations} conversations, ${s.snapshots} snapshots in ${((performance.now() - t) / 1000).toFixed(1)} s\n`,
      );
    },
    flag('regenerate'),
  );
  // this run's copies and indexes: benches at once never share a working file
  const workDir = mkdtempSync(join(dir, 'run-'));
  process.on('exit', () => rmSync(workDir, { recursive: true, force: true }));
  const work = join(workDir, 'work.db');
  copyFileSync(store, work);
  // never beside the store: convsearch refuses that
  const indexDir = join(workDir, 'index');
  mkdirSync(indexDir, { mode: 0o700 });
  const index = join(indexDir, 'work.index.db');
  for (const s of ['', '-wal', '-shm']) rmSync(index + s, { force: true });

  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(`file:${work}?mode=ro&immutable=1`, { readonly: true });
  const counts = db
    .prepare(
      'SELECT (SELECT COUNT(*) FROM runs) AS runs, (SELECT COUNT(DISTINCT conversation_id) FROM runs) AS convs, (SELECT COUNT(*) FROM snapshots) AS snaps',
    )
    .get() as Record<string, number>;
  const someConv = db.prepare('SELECT conversation_id FROM runs ORDER BY rowid LIMIT 1 OFFSET 7').pluck().get() as string;
  db.close();
  const storeMb = statSync(work).size / 1e6;
  process.stderr.write(`store: ${storeMb.toFixed(0)} MB, ${counts.runs} runs, ${counts.convs} conversations, ${counts.snaps} snapshots\n`);

  // timings on shared machines wander: each timed phase runs `repeat` times; the median is shown
  const repeat = Math.max(1, Number(arg('repeat', '3')));
  const rows: Array<[string, PhaseResult]> = [];
  const phase = (
    label: string,
    args: string[],
    opts: { env?: NodeJS.ProcessEnv; before?: () => void; once?: boolean; times?: number } = {},
  ): PhaseResult => {
    process.stderr.write(`  ${label} ...\n`);
    const runs: PhaseResult[] = [];
    for (let k = 0; k < (opts.once ? 1 : (opts.times ?? repeat)); k++) {
      opts.before?.();
      runs.push(runPhase(args, opts.env));
    }
    const r = summarized(runs);
    rows.push([label, r]);
    return r;
  };
  type PhaseSpec = [label: string, args: string[], opts?: { env?: NodeJS.ProcessEnv; before?: () => void }];
  /** Each phase `repeat` times, round-robin: recorded as phase() records them, each with its time per round. */
  const inRounds = (specs: readonly PhaseSpec[]): Array<PhaseResult & { perRound: number[] }> => {
    const results: PhaseResult[][] = specs.map(() => []);
    for (let k = 0; k < repeat; k++)
      specs.forEach(([label, args, opts], i) => {
        process.stderr.write(`  ${label} (round ${k + 1} of ${repeat}) ...\n`);
        opts?.before?.();
        results[i]!.push(runPhase(args, opts?.env));
      });
    return specs.map(([label], i) => {
      const r = summarized(results[i]!);
      rows.push([label, r]);
      return { ...r, perRound: results[i]!.map((x) => x.ms) };
    });
  };
  const dropIndex = (): void => {
    for (const s of ['', '-wal', '-shm']) rmSync(index + s, { force: true });
  };
  const backendWarm = new Map<string, number>();
  // part of the full run: the issue's table has rows for Postgres and Redis
  if (flag('backends-only') || !(flag('no-backends') || flag('appends-only') || flag('quick'))) {
    process.stderr.write('copying the store into the other backends ...\n');
    const { targets, stop } = await prepareBackends(work, workDir);
    try {
      phase('raw read of every complete snapshot: sqlite', ['backend-read', 'sqlite', work]);
      for (const [kind, target] of targets) phase(`raw read of every complete snapshot: ${kind}`, ['backend-read', kind, target]);
      phase('replay of every run (1 thread): sqlite', ['backend-replay', 'sqlite', work]);
      for (const [kind, target] of targets) phase(`replay of every run (1 thread): ${kind}`, ['backend-replay', kind, target]);
      // the issue's targets: index build, warm search and peak RSS on each backend, against SQLite's
      const warmSearches: Probe[] = [{ label: 'node -e 0', args: () => ['-e', '0'] }];
      for (const [kind, target] of [['sqlite', work] as const, ...targets]) {
        const backendIndex = join(indexDir, `backend-${kind}.index.db`);
        phase(`open + stamp (median of 7): ${kind}`, ['backend-stamp', kind, target], { once: true });
        phase(`index build from nothing: ${kind}`, ['sync', target, backendIndex], {
          before: () => {
            for (const x of ['', '-wal', '-shm']) rmSync(backendIndex + x, { force: true });
          },
        });
        phase(`warm indexed query (50 store-wide): ${kind}`, ['warm', target, backendIndex, 'all', work], { once: true });
        warmSearches.push({
          label: kind,
          args: (i) => [
            BIN,
            'search',
            WARM_WORDS[i % WARM_WORDS.length]!,
            '--db',
            target,
            '--index',
            backendIndex,
            '--scope',
            'all',
            '--json',
          ],
        });
      }
      // whole processes of every backend in turn (round-robin, with `node -e 0`): a machine that drifts
      // over the minutes between one backend's runs and the next moves them all alike, and Postgres and
      // Redis are held against the SQLite search measured beside them
      process.stderr.write('  warm search, whole CLI process, every backend in turn ...\n');
      const [node, ...warm] = measureLatencies(warmSearches, BACKEND_SEARCHES);
      for (const w of warm) {
        const extra = { p50: w.median, p95: w.p95, n: w.n, overNode: w.median - node!.median };
        rows.push([`warm search, whole CLI process (${w.n}, backends in turn): ${w.label}`, { ms: w.median, rssMb: NaN, extra }]);
        backendWarm.set(w.label, w.median);
      }
    } finally {
      stop();
    }
    if (flag('backends-only')) {
      printTable(storeMb, counts, rows, null);
      return;
    }
  }
  if (flag('appends-only')) {
    // issue 21's measure alone: what the first search after one appended run costs, against a warm one
    process.stderr.write('  bringing the index up to date ...\n');
    runPhase(['sync', work, index]);
    phase('search, nothing changed (stamp only)', ['search', work, index, 'kalo quarzite']);
    phase('update after appending one run (content check included)', ['sync', work, index], { before: () => continueConversation(work) });
    phase('search after appending one run (content check + update)', ['search', work, index, 'kalo quarzite'], {
      before: () => continueConversation(work),
    });
    // a merge of segments lands on some appends only: the range's top is the worst single append
    phase(
      `search after each of ${CONSECUTIVE_APPENDS} consecutive appended runs (median; range to the worst)`,
      ['search', work, index, 'kalo quarzite'],
      {
        before: () => continueConversation(work),
        times: CONSECUTIVE_APPENDS,
      },
    );
    printTable(storeMb, counts, rows, null);
    return;
  }
  const samples = Math.max(10, Number(arg('runs', '15')));
  const storeWide = queriesFor(work, true).map((q) => q.query);
  if (flag('quick')) {
    process.stderr.write('  bringing the index up to date ...\n');
    runPhase(['sync', work, index]);
    process.stderr.write(`  whole-process latencies (${samples} runs each) ...\n`);
    const latencies = measureLatencies(cliProbes(work, index, storeWide), samples);
    printTable(storeMb, counts, [], null);
    process.stdout.write(['', ...latencyTable(latencies), '', faultCostLine()].join('\n') + '\n');
    return;
  }
  // the floor and what is held against it, in rounds (each round runs each once, in turn): a machine
  // whose speed wanders over the minutes moves a round's phases alike, so each ratio is taken within
  // its round and the median of those is reported (the floor has measured anywhere from 1.7 to 2.7 s
  // on this kind of machine: enough alone to move the build from 2.1 to 1.6 × floor)
  const [read, parse, noIndex, , , build] = inRounds([
    ['floor: read all snapshot rows', ['floor-read', work]],
    ['floor: read + JSON.parse all', ['floor-parse', work]],
    [`--no-index, store-wide query (default: up to ${defaultThreads()} threads)`, ['no-index', work, 'all', '', 'kalo quarzite']],
    ['--no-index, store-wide query (1 thread)', ['no-index', work, 'all', '', 'kalo quarzite'], { env: { CONVSEARCH_THREADS: '1' } }],
    ['--no-index, one-conversation query', ['no-index', work, 'conversation', someConv, 'kalo quarzite']],
    ['index build from nothing', ['sync', work, index], { before: dropIndex }],
  ]);
  const ratios = { noIndex: roundRatio(noIndex!, parse!), build: roundRatio(build!, parse!) };
  phase('warm indexed query (50 varied scopes)', ['warm', work, index, 'varied'], { once: true });
  const warm = phase('warm indexed query (50 store-wide)', ['warm', work, index, 'all'], { once: true });
  process.stderr.write(`  whole-process latencies (${samples} runs each) ...\n`);
  const latencies = measureLatencies(cliProbes(work, index, storeWide), samples);
  phase('update after appending one run (content check included)', ['sync', work, index], { before: () => continueConversation(work) });
  const unchanged = phase('search, nothing changed (stamp only)', ['search', work, index, 'kalo quarzite']);
  const afterAppend = phase('search after appending one run (content check + update)', ['search', work, index, 'kalo quarzite'], {
    before: () => continueConversation(work),
  });
  let edits = 0;
  const afterEdit = phase('search after an in-place edit of one old snapshot (same length)', ['search', work, index, 'kalo quarzite'], {
    before: () => editOldSnapshot(work, edits++),
  });
  // a live writer: its connection stays open; the first search after its commit checks the content,
  // later ones while it is idle only stamp the store file and its -wal
  const live = liveWriter(work);
  try {
    phase('live writer: search after its commit (content check + update)', ['search', work, index, 'kalo quarzite'], {
      before: () => {
        const r = live.prepare('SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1').pluck().get() as string;
        live
          .prepare(
            'INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) SELECT run_id, step_index + 1, timestamp, state, messages FROM snapshots WHERE run_id = ? ORDER BY seq DESC LIMIT 1',
          )
          .run(r);
      },
    });
    phase('live writer idle: search (stamp of file and -wal only)', ['search', work, index, 'kalo quarzite']);
  } finally {
    live.close();
  }
  // after the searches above: it lengthens the last runs (30 snapshots each over its rounds), and an
  // appended run (continueConversation) starts from the last run's messages: before them, its history is the store's typical run's
  phase('update after appending 100 snapshots (content check included)', ['sync', work, index], {
    before: () => appendSnapshots(work, 100),
  });
  const indexMb = statSync(index).size / 1e6;
  // one huge message: the memory it costs to index and to search without an index
  const hugeMb = Number(arg('huge-mb', '200'));
  const huge = join(dir, `huge-message-${hugeMb}mb.db`);
  let hugeSize = 0;
  ensureStore(huge, (at) => void (hugeSize = writeHugeMessageStore(at, hugeMb)), flag('regenerate'));
  hugeSize ||= statSync(huge).size;
  const hugeIndex = join(indexDir, 'huge.index.db');
  const hugeBuild = phase(`one ${hugeMb} MB message: index build`, ['sync', huge, hugeIndex], {
    before: () => {
      for (const s of ['', '-wal', '-shm']) rmSync(hugeIndex + s, { force: true });
    },
    once: true,
  });
  const hugeNoIndex = phase(`one ${hugeMb} MB message: --no-index search`, ['no-index', huge, 'all', '', 'hugeneedle'], { once: true });
  // many small runs: the index build's memory and the listings
  for (const n of [8000, 20000]) {
    const small = join(dir, `synthetic-${n}-small-runs-seed${seed}.db`);
    ensureStore(small, (at) => void writeSyntheticStore(at, { targetBytes: 0, seed, smallRuns: n }), flag('regenerate'));
    const smallIndex = join(indexDir, `work-${n}.index.db`);
    const dropSmall = (): void => {
      for (const s of ['', '-wal', '-shm', '.nospace']) rmSync(smallIndex + s, { force: true });
    };
    phase(`${n} small runs (${(statSync(small).size / 1e6).toFixed(0)} MB): index build from nothing`, ['sync', small, smallIndex], {
      before: dropSmall,
    });
    phase(`${n} small runs: runs --json`, ['cli', 'runs', '--json', '--db', small, '--index', smallIndex]);
    phase(`${n} small runs: conversations --json`, ['cli', 'conversations', '--json', '--db', small, '--index', smallIndex]);
    phase(`${n} small runs: runs --json --no-index`, ['cli', 'runs', '--json', '--db', small, '--no-index'], { once: true });
  }

  printTable(storeMb, counts, rows, { parse: parse!, read: read!, warm, indexMb });
  process.stdout.write(['', ...latencyTable(latencies), '', faultCostLine()].join('\n') + '\n');
  const scaling = flag('no-scaling')
    ? []
    : runScaling(
        { dir, workDir, indexDir, seed, regenerate: flag('regenerate'), n: samples, queries: storeWide },
        store,
        (path: string): number => {
          const d = new Database(`file:${path}?mode=ro&immutable=1`, { readonly: true });
          const n = d.prepare('SELECT COUNT(*) FROM runs').pluck().get() as number;
          d.close();
          return n;
        },
      );
  if (scaling.length > 0) process.stdout.write(['', ...scalingTable(scaling)].join('\n') + '\n');
  if (!flag('no-long-run')) {
    const long = measureLongRun({ dir, workDir, indexDir, demo: DEMO, regenerate: flag('regenerate') });
    process.stdout.write(['', ...longRunTable(long)].join('\n') + '\n');
  }
  const median = (label: string): number => latencies.find((l) => l.label.startsWith(label))!.median;
  const targets = targetsTable({
    floor: parse!.ms,
    warm: unchanged.ms,
    afterAppend: afterAppend.ms,
    afterEdit: afterEdit.ms,
    node: median('node -e 0'),
    cliSearch: median('convsearch search'),
    cliRuns: median('convsearch runs'),
    cliConversations: median('convsearch conversations'),
    noIndex: noIndex!.ms,
    build: build!.ms,
    ratios,
    buildRss:
      scaling.length > 0
        ? scaling.map((r) => ({ label: r.label, mb: r.build.rssMb }))
        : [{ label: `${counts.runs} runs (the bench store)`, mb: build.rssMb }],
    huge: { messageMb: hugeSize / 1e6, buildRssMb: hugeBuild.rssMb, noIndexRssMb: hugeNoIndex.rssMb },
    backends: backendWarm.size > 0 ? backendWarm : null,
  });
  process.stdout.write(
    [
      '',
      `floor (read + JSON.parse of every snapshot): ${fmt(parse!.ms)} (rounds: ${parse!.perRound.map(fmt).join(', ')}); the ratios to it are medians of each round's own`,
      ...targets,
      ...floorLines(store, unchanged.ms),
    ].join('\n') + '\n',
  );
}

/** `--long-run-only`: the long run's table alone (long-run.ts), in a working directory of its own. */
function longRunOnly(dir: string): void {
  const workDir = mkdtempSync(join(dir, 'run-'));
  process.on('exit', () => rmSync(workDir, { recursive: true, force: true }));
  const indexDir = join(workDir, 'index');
  mkdirSync(indexDir, { mode: 0o700 });
  const long = measureLongRun({ dir, workDir, indexDir, demo: DEMO, regenerate: flag('regenerate') });
  process.stdout.write(`${longRunTable(long).join('\n')}\n`);
}

/** A phase's runs as one row: the median run's time and notes, the range of times, the highest peak RSS. */
function summarized(runs: readonly PhaseResult[]): PhaseResult {
  const sorted = [...runs].sort((a, b) => a.ms - b.ms);
  const median = sorted[sorted.length >> 1]!;
  return {
    ms: median.ms,
    rssMb: Math.max(...runs.map((x) => x.rssMb)),
    extra: runs.length > 1 ? { ...median.extra, range: `${sorted[0]!.ms.toFixed(0)}–${sorted.at(-1)!.ms.toFixed(0)} ms` } : median.extra,
  };
}

/** The median of a phase's time over the floor's, round by round (inRounds). */
function roundRatio(phase: { perRound: readonly number[] }, floor: { perRound: readonly number[] }): number {
  const r = phase.perRound.map((ms, k) => ms / floor.perRound[k]!).sort((a, b) => a - b);
  return r[r.length >> 1]!;
}

function printTable(
  storeMb: number,
  counts: Record<string, number>,
  rows: Array<[string, PhaseResult]>,
  floors: { parse: PhaseResult; read: PhaseResult; warm: PhaseResult; indexMb: number } | null,
): void {
  const floor = floors?.parse.ms ?? NaN;
  const lines = [
    `convsearch bench: ${storeMb.toFixed(0)} MB store, ${counts.runs} runs, ${counts.convs} conversations, ${counts.snaps} snapshots (node ${process.version})`,
  ];
  if (rows.length > 0) lines.push('', `| phase | time | × read+parse floor | peak RSS | notes |`, `|---|---|---|---|---|`);
  for (const [label, r] of rows) {
    const extra = r.extra
      ? Object.entries(r.extra)
          .map(([k, v]) => `${k}=${typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(1) : v}`)
          .join(' ')
      : '';
    const time = label.startsWith('warm') ? `p50 ${fmt(Number(r.extra!.p50))}, p95 ${fmt(Number(r.extra!.p95))}` : fmt(r.ms);
    const rss = Number.isFinite(r.rssMb) ? `${r.rssMb.toFixed(0)} MB` : '–'; // whole processes of their own: not measured
    lines.push(`| ${label} | ${time} | ${floors ? (r.ms / floor).toFixed(3) : '–'} | ${rss} | ${extra} |`);
  }
  if (floors) {
    lines.push(
      '',
      `index size: ${floors.indexMb.toFixed(1)} MB = ${(floors.indexMb / storeMb).toFixed(3)} × store (${storeMb.toFixed(0)} MB)`,
    );
    lines.push(
      `floors: read ${fmt(floors.read.ms)}, read + JSON.parse ${fmt(floors.parse.ms)}; warm store-wide p50 ${fmt(Number(floors.warm.extra!.p50))}`,
    );
  }
  process.stdout.write(lines.join('\n') + '\n');
}

/** Options with a value, and flags: anything else (a typo, `--help`) prints the usage instead of a 4-minute default run. */
const VALUED = ['mb', 'seed', 'repeat', 'runs', 'huge-mb', 'appended', 'fleet-runs', 'readers', 'stores'];
const FLAGS = [
  'regenerate',
  'quick',
  'no-scaling',
  'no-long-run',
  'long-run-only',
  'no-backends',
  'backends-only',
  'appends-only',
  'shared-index',
];

function argsKnown(): boolean {
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const name = args[i]!.replace(/^--/, '');
    if (args[i]!.startsWith('--') && VALUED.includes(name) && i + 1 < args.length) i++;
    else if (!args[i]!.startsWith('--') || !FLAGS.includes(name)) {
      process.stderr.write(
        `bench: unknown argument ${JSON.stringify(args[i])}\nusage: npm run bench -- ${VALUED.map((v) => `[--${v} N]`).join(' ')} ${FLAGS.map((f) => `[--${f}]`).join(' ')}\n(scripts/bench/bench.ts says what each does)\n`,
      );
      return false;
    }
  }
  return true;
}

if (process.argv[2] === '--phase') {
  const [, , , name, store, a, b, c] = process.argv;
  // (after the bench's own modules loaded: what follows is the phase's)
  const before = process.resourceUsage();
  let r: PhaseResult;
  if (name === 'cli') r = await phaseCli(process.argv.slice(4));
  else if (name === 'search') r = phaseSearch(store!, a!, b!);
  else if (name === 'floor-read') r = phaseFloor(store!, false);
  else if (name === 'fault-cost') r = phaseFaultCost();
  else if (name === 'file-read') r = phaseFileRead(store!);
  else if (name === 'worker-start') r = await phaseWorkerStart();
  else if (name === 'floor-parse') r = phaseFloor(store!, true);
  else if (name === 'no-index')
    r = phaseNoIndex(store!, a === 'conversation' ? { scope: 'conversation', conversationId: b! } : { scope: 'all' }, c!);
  else if (name === 'sync') r = phaseSync(store!, a!);
  else if (name === 'warm') r = phaseWarm(store!, a!, queriesFor(c ?? store!, b === 'all'));
  else if (name === 'backend-read') r = { ...phaseBackendRead(store!, a!), rssMb: rssMb() };
  else if (name === 'backend-replay') r = { ...phaseBackendReplay(store!, a!), rssMb: rssMb() };
  else if (name === 'backend-stamp') r = { ...phaseBackendStamp(store!, a!), rssMb: rssMb() };
  else throw new Error(`unknown phase ${name}`);
  // what the phase touched and ran, all its threads: steadier than its wall time on a shared VM, where a
  // first touch of a fresh page costs ~11 µs (README)
  const used = process.resourceUsage();
  const cpuMs = Math.round((used.userCPUTime + used.systemCPUTime - before.userCPUTime - before.systemCPUTime) / 1000);
  r = { ...r, extra: { ...r.extra, faults: used.minorPageFault - before.minorPageFault, cpuMs } };
  process.stdout.write(JSON.stringify(r) + '\n');
} else if (!argsKnown()) {
  process.exitCode = 2;
} else if (flag('shared-index')) {
  await sharedIndexBench();
} else {
  await main();
}
