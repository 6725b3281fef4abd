/**
 * The scaling table (issue 21): for the bench's store (about 2,000 runs at the default size) and for
 * stores of 20,000 and 50,000 small runs, the index build's time and peak RSS, the warm whole-process
 * search, the update after one appended run, and the update after one step appended to a recent run
 * (what an agent's run does at each step). Cost that follows the change stays flat down the "update"
 * columns; cost that follows the store grows with the run count.
 */
import { copyFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { appendSnapshots, continueConversation } from './mutations.js';
import { fmt, runPhase, type PhaseResult } from './phase.js';
import { writeSyntheticStore } from './synthetic-store.js';
import { cliProbes, measureLatencies } from './whole-process.js';

export interface ScalingRow {
  label: string;
  storeMb: number;
  runs: number;
  build: PhaseResult;
  warm: { median: number; p95: number };
  baseline: number;
  /** The index update after one appended run (content check included): median of UPDATE_ROUNDS, and the range. */
  update: Spread;
  /** The same after one step (snapshot) appended to the most recent run. */
  step: Spread;
  indexMb: number;
}

export interface ScalingPlan {
  /** Where generated stores are kept between runs (shared by benches). */
  dir: string;
  /** This run's own copies and indexes. */
  workDir: string;
  indexDir: string;
  seed: number;
  regenerate: boolean;
  /** Latency samples per store. */
  n: number;
  queries: readonly string[];
}

/**
 * A synthetic store at `path`, generated unless it is there already. It is written under a name of this
 * process's and renamed into place: two benches at once never read a half-written store.
 */
export function ensureStore(path: string, make: (at: string) => void, regenerate: boolean): void {
  if (regenerate || !existsSync(path)) {
    process.stderr.write(`generating ${path} ...\n`);
    const at = `${path}.${process.pid}.tmp`;
    rmSync(at, { force: true });
    make(at);
    renameSync(at, path);
  }
}

/** A median of UPDATE_ROUNDS, and the range. */
interface Spread {
  median: number;
  min: number;
  max: number;
}

/**
 * Appended runs, each followed by the update it costs: one sample of a second on a shared machine moved
 * by a third between two benches of nearly the same code (50,000 runs: 0.91 s, then 1.20 s), so the column is their median.
 */
const UPDATE_ROUNDS = 5;

/** Measures on a copy of `pristine` (the appended runs must not change the generated store). */
function measure(plan: ScalingPlan, label: string, pristine: string, runs: number): ScalingRow {
  const store = join(plan.workDir, 'scaling-work.db');
  copyFileSync(pristine, store);
  const index = join(plan.indexDir, 'scaling-work.index.db');
  for (const s of ['', '-wal', '-shm']) rmSync(index + s, { force: true });
  process.stderr.write(`  scaling ${label}: build ...\n`);
  const build = runPhase(['sync', store, index]);
  process.stderr.write(`  scaling ${label}: warm latency ...\n`);
  const [base, search] = measureLatencies(
    // by the whole label: every probe's label but node's says 'convsearch'
    cliProbes(store, index, plan.queries).filter((p) => p.label === 'node -e 0' || p.label.startsWith('convsearch search ')),
    plan.n,
  );
  if (base?.label !== 'node -e 0' || !search?.label.startsWith('convsearch search '))
    throw new Error('scaling: the latency probes are not node -e 0 and a search');
  const indexMb = statSync(index).size / 1e6;
  process.stderr.write(`  scaling ${label}: update after one appended run (${UPDATE_ROUNDS} rounds) ...\n`);
  const update = updates(() => continueConversation(store), store, index);
  process.stderr.write(`  scaling ${label}: update after one step of a recent run (${UPDATE_ROUNDS} rounds) ...\n`);
  const step = updates(() => appendSnapshots(store, 1), store, index);
  rmSync(store, { force: true });
  return {
    label,
    storeMb: statSync(pristine).size / 1e6,
    runs,
    build,
    warm: { median: search!.median, p95: search!.p95 },
    baseline: base!.median,
    update,
    step,
    indexMb,
  };
}

/** UPDATE_ROUNDS times: `change` the store, then time the index update it costs. */
function updates(change: () => void, store: string, index: string): Spread {
  const ms: number[] = [];
  for (let i = 0; i < UPDATE_ROUNDS; i++) {
    change();
    ms.push(runPhase(['sync', store, index]).ms);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[UPDATE_ROUNDS >> 1]!, min: ms[0]!, max: ms.at(-1)! };
}

/** `main`: the bench's generated store (about 2,000 runs at the default --mb). */
export function runScaling(plan: ScalingPlan, main: string, counts: (store: string) => number): ScalingRow[] {
  const rows = [measure(plan, `${counts(main)} runs (the bench store)`, main, counts(main))];
  for (const n of [20_000, 50_000]) {
    const small = join(plan.dir, `synthetic-${n}-small-runs-seed${plan.seed}.db`);
    ensureStore(small, (at) => writeSyntheticStore(at, { targetBytes: 0, seed: plan.seed, smallRuns: n }), plan.regenerate);
    rows.push(measure(plan, `${n.toLocaleString('en')} small runs`, small, counts(small)));
  }
  return rows;
}

const spread = (s: Spread): string => `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})`;

export function scalingTable(rows: readonly ScalingRow[]): string[] {
  const lines = [
    `| store | size | runs | index build | build peak RSS | warm search median (p95) | − node -e 0 | update after one appended run, median of ${UPDATE_ROUNDS} (range) | update after one step of a recent run, median of ${UPDATE_ROUNDS} (range) | index size |`,
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.label} | ${r.storeMb.toFixed(0)} MB | ${r.runs} | ${fmt(r.build.ms)} | ${r.build.rssMb.toFixed(0)} MB | ${fmt(r.warm.median)} (${fmt(r.warm.p95)}) | +${fmt(r.warm.median - r.baseline)} | ${spread(r.update)} | ${spread(r.step)} | ${r.indexMb.toFixed(1)} MB (${(r.indexMb / r.storeMb).toFixed(3)}×) |`,
    );
  }
  return lines;
}
