/**
 * Whole-process latency: what a user in a shell loop, an fzf preview or a CI script feels. Each command
 * runs as its own `node bin/convsearch.js …` process, stdout to /dev/null, `n` times interleaved with
 * `node -e 0` (so that drift on a shared machine hits both alike); median and p95 of the wall time.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, percentile } from './phase.js';

/** The repository root (the bench runs from dist/scripts/bench). */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const BIN = join(ROOT, 'bin', 'convsearch.js');
/** The demo store bundled with the repository. */
export const DEMO = join(ROOT, 'examples', 'sessions.db');

export interface Latency {
  label: string;
  median: number;
  p95: number;
  n: number;
  /** Allowed median minus `node -e 0`'s, in ms (the issue's targets); none for the baseline. */
  budget?: number;
}

export interface Probe {
  label: string;
  /** Arguments to node: a script and its arguments, or `['-e', '0']`. */
  args: (i: number) => string[];
  budget?: number;
}

/** One `node …args` process, its wall time in ms (stdout dropped; an exit status past 1 throws). */
export function once(args: readonly string[], env: NodeJS.ProcessEnv = process.env): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env, encoding: 'utf8' });
  const ms = performance.now() - t;
  if (r.status !== 0 && r.status !== 1) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/** Runs every probe `n` times (after one untimed warm-up each), round-robin. */
export function measureLatencies(probes: readonly Probe[], n: number, env: NodeJS.ProcessEnv = process.env): Latency[] {
  const times = probes.map(() => [] as number[]);
  for (const p of probes) once(p.args(0), env);
  for (let i = 0; i < n; i++) for (const [k, p] of probes.entries()) times[k]!.push(once(p.args(i), env));
  return probes.map((p, k) => {
    const sorted = times[k]!.sort((a, b) => a - b);
    return { label: p.label, median: percentile(sorted, 50), p95: percentile(sorted, 95), n, budget: p.budget };
  });
}

/** The CLI probes the issue sets targets for; `search` cycles through `queries` (store-wide). */
export function cliProbes(store: string, index: string, queries: readonly string[]): Probe[] {
  const cli = (...a: string[]): string[] => [BIN, ...a];
  return [
    { label: 'node -e 0', args: () => ['-e', '0'] },
    { label: 'convsearch --version', args: () => cli('--version'), budget: 30 },
    { label: 'convsearch --help', args: () => cli('--help'), budget: 30 },
    {
      label: 'convsearch search <q> --scope all (warm)',
      args: (i) => cli('search', ...queries[i % queries.length]!.split(' '), '--scope', 'all', '--db', store, '--index', index),
      budget: 50,
    },
    { label: 'convsearch runs (warm)', args: () => cli('runs', '--db', store, '--index', index), budget: 60 },
    { label: 'convsearch conversations (warm)', args: () => cli('conversations', '--db', store, '--index', index), budget: 60 },
  ];
}

export function latencyTable(rows: readonly Latency[]): string[] {
  const base = rows.find((r) => r.budget === undefined)?.median ?? 0;
  const lines = ['| whole process | median | p95 | median − node -e 0 | target | n |', '|---|---|---|---|---|---|'];
  for (const r of rows) {
    const over = r.median - base;
    const target = r.budget === undefined ? '–' : `≤ +${r.budget} ms ${over <= r.budget ? 'holds' : 'misses'}`;
    lines.push(
      `| ${r.label} | ${fmt(r.median)} | ${fmt(r.p95)} | ${r.budget === undefined ? '–' : `+${fmt(over)}`} | ${target} | ${r.n} |`,
    );
  }
  return lines;
}
