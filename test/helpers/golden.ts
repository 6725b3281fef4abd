/**
 * The reference's golden cases (`<parity>/golden/<store>/<NN>.json`): what one CLI call must print and
 * exit with, and the hits `--json` must rank. Shared by the SQLite and the backend parity tests.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface GoldenCase {
  args: string[];
  output: string;
  exit: number;
  hits?: Array<{ run_id: string; message_index: number; score: number; shown: boolean }>;
}

/** Every case file under `dir`, in a stable order (files starting with `_` are notes, not cases). */
export function goldenCases(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...goldenCases(p));
    else if (name.endsWith('.json') && !name.startsWith('_')) out.push(p);
  }
  return out;
}

export function readGolden(file: string): GoldenCase {
  return JSON.parse(readFileSync(file, 'utf8')) as GoldenCase;
}

/** The case's arguments with its `--db` (relative to the parity folder) made absolute: runnable from anywhere. */
export function argsFrom(dir: string, args: readonly string[]): string[] {
  return args.map((a, i) => (args[i - 1] === '--db' ? resolve(dir, a) : a));
}

/** The case's arguments for `--json` instead of `--format tool`. */
export function jsonArgs(args: string[]): string[] {
  return [...args.filter((_, i) => args[i] !== '--format' && args[i - 1] !== '--format'), '--json'];
}

/** Problems with a `--json` reply against the case's shown hits (run, position, score within 1e-9); none is a pass. */
export function hitProblems(c: GoldenCase, stdout: string): string[] {
  const doc = JSON.parse(stdout) as { hits: Array<{ run_id: string; message_index: number; score: number }> };
  const want = (c.hits ?? []).filter((h) => h.shown);
  if (doc.hits.length !== want.length) return [`${doc.hits.length} hits, expected ${want.length}`];
  return doc.hits.flatMap((h, k) => {
    const w = want[k]!;
    return h.run_id === w.run_id && h.message_index === w.message_index && Math.abs(h.score - w.score) <= 1e-9
      ? []
      : [`hit ${k}: ${h.run_id}#${h.message_index} ${h.score}, expected ${w.run_id}#${w.message_index} ${w.score}`];
  });
}
