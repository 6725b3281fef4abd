/**
 * The scaling table: index build time, warm whole-process search latency and index size for stores of
 * 1×, 2× and 4× the default size, and for a store of 20,000 small runs (where per-run costs show).
 * Cost that grows faster than the store shows as a rising "per 100 MB" column.
 */
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
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
  indexMb: number;
}

export interface ScalingPlan {
  dir: string;
  indexDir: string;
  seed: number;
  regenerate: boolean;
  /** Latency samples per store. */
  n: number;
  queries: readonly string[];
}

/** A synthetic store at `path`, generated unless it is there already. */
export function ensureStore(path: string, make: () => void, regenerate: boolean): void {
  if (regenerate || !existsSync(path)) {
    rmSync(path, { force: true });
    process.stderr.write(`generating ${path} ...\n`);
    make();
  }
}

function measure(plan: ScalingPlan, label: string, store: string, runs: number): ScalingRow {
  const index = join(plan.indexDir, `scaling-${label.replace(/\W+/g, '-')}.index.db`);
  for (const s of ['', '-wal', '-shm']) rmSync(index + s, { force: true });
  process.stderr.write(`  scaling ${label}: build ...\n`);
  const build = runPhase(['sync', store, index]);
  process.stderr.write(`  scaling ${label}: warm latency ...\n`);
  const [base, search] = measureLatencies(
    cliProbes(store, index, plan.queries).filter((p) => p.label.startsWith('node') || p.label.includes('search')),
    plan.n,
  );
  return {
    label,
    storeMb: statSync(store).size / 1e6,
    runs,
    build,
    warm: { median: search!.median, p95: search!.p95 },
    baseline: base!.median,
    indexMb: statSync(index).size / 1e6,
  };
}

export function runScaling(plan: ScalingPlan, baseMb: number, counts: (store: string) => number): ScalingRow[] {
  const rows: ScalingRow[] = [];
  for (const factor of [1, 2, 4]) {
    const mb = baseMb * factor;
    const store = join(plan.dir, `synthetic-${mb}mb-seed${plan.seed}.db`);
    ensureStore(store, () => writeSyntheticStore(store, { targetBytes: mb * 1e6, seed: plan.seed }), plan.regenerate);
    rows.push(measure(plan, `${factor}× (${mb} MB target)`, store, counts(store)));
  }
  const small = join(plan.dir, `synthetic-20000-small-runs-seed${plan.seed}.db`);
  ensureStore(small, () => writeSyntheticStore(small, { targetBytes: 0, seed: plan.seed, smallRuns: 20_000 }), plan.regenerate);
  rows.push(measure(plan, '20,000 small runs', small, counts(small)));
  return rows;
}

export function scalingTable(rows: readonly ScalingRow[]): string[] {
  const lines = [
    '| store | size | runs | index build | build per 100 MB | build peak RSS | warm search median (p95) | − node -e 0 | index size |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.label} | ${r.storeMb.toFixed(0)} MB | ${r.runs} | ${fmt(r.build.ms)} | ${fmt((r.build.ms / r.storeMb) * 100)} | ${r.build.rssMb.toFixed(0)} MB | ${fmt(r.warm.median)} (${fmt(r.warm.p95)}) | +${fmt(r.warm.median - r.baseline)} | ${r.indexMb.toFixed(1)} MB (${(r.indexMb / r.storeMb).toFixed(3)}×) |`,
    );
  }
  return lines;
}
