import { Option } from 'commander';
import { existsSync } from 'node:fs';
import { pyFloatRepr } from '../render/python.js';
import { CommandError, UsageError } from './errors.js';

export function dbOption(): Option {
  return new Option('--db <path>', 'step store to read (default: $CONVSEARCH_DB, else ./sessions.db)').argParser((path: string, previous: string | undefined) => {
    // one store at a time (for now): a second --db must not silently replace the first
    if (previous !== undefined) throw new UsageError(`--db given twice (${previous}, ${path}): convsearch reads one store at a time; pass one --db`);
    return path;
  });
}

export const DEFAULT_DB = 'sessions.db';

/** `--db`, else `$CONVSEARCH_DB` when non-empty, else `./sessions.db`; with none of them, how to name one. */
export function resolveDb(flag: string | undefined): string {
  if (flag !== undefined) return flag;
  const env = process.env.CONVSEARCH_DB;
  if (env) return env;
  if (!existsSync(DEFAULT_DB)) {
    throw new CommandError(`no store to read: pass --db <path>, set $CONVSEARCH_DB, or run where ./${DEFAULT_DB} is`);
  }
  return DEFAULT_DB;
}

export function parseCount(flag: string, raw: string, pyName: string): number {
  if (!/^[+-]?\d+$/.test(raw.trim())) throw new UsageError(`${flag} expects an integer, got ${JSON.stringify(raw)}`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new UsageError(`${flag} is out of range: ${raw}`);
  if (n < 0) throw new UsageError(`${pyName} must be non-negative, got ${n}.`);
  return n;
}

function parseNumber(flag: string, raw: string): number {
  const t = raw.trim().toLowerCase();
  // Python float() spellings: nan/inf/infinity with optional sign
  const special: Record<string, number> = { nan: NaN, '+nan': NaN, '-nan': NaN, inf: Infinity, '+inf': Infinity, infinity: Infinity, '+infinity': Infinity, '-inf': -Infinity, '-infinity': -Infinity };
  if (t in special) return special[t]!;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) throw new UsageError(`${flag} expects a number, got ${JSON.stringify(raw)}`);
  return Number(t);
}

export function parseK1(raw: string): number {
  const k1 = parseNumber('--bm25-k1', raw);
  if (!Number.isFinite(k1) || k1 < 0) throw new UsageError(`bm25_k1 must be a non-negative finite number, got ${pyFloatRepr(k1)}.`);
  return k1;
}

export function parseB(raw: string): number {
  const b = parseNumber('--bm25-b', raw);
  if (!(b >= 0 && b <= 1)) throw new UsageError(`bm25_b must be between 0.0 and 1.0, got ${pyFloatRepr(b)}.`);
  return b;
}

export function colorOption(): Option {
  return new Option('--color <when>', 'colour: auto (a terminal whose TERM is not dumb), always or never; beats NO_COLOR and FORCE_COLOR')
    .choices(['auto', 'always', 'never'])
    .default('auto');
}

/** Accumulates a repeatable flag; each use may also hold a comma-separated list. */
export function collect(value: string, previous: string[] = []): string[] {
  return previous.concat(value.split(',').map((v) => v.trim()).filter((v) => v !== ''));
}

/** Accumulates a repeatable flag whose values may hold commas (`--phrase 'a, b'`). */
export function collectWhole(value: string, previous: string[] = []): string[] {
  return previous.concat(value);
}

export function parseScore(flag: string, raw: string): number {
  const x = parseNumber(flag, raw);
  if (!Number.isFinite(x)) throw new UsageError(`${flag} expects a finite number, got ${JSON.stringify(raw)}`);
  return x;
}

export function parseLimit(flag: string, raw: string): number {
  if (!/^\d+$/.test(raw.trim())) throw new UsageError(`${flag} expects a non-negative integer, got ${JSON.stringify(raw)}`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new UsageError(`${flag} is out of range: ${raw}`);
  return n;
}
