/** What the bench's parts share: the phase protocol (one child process per phase), flags and formatting. */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

export interface PhaseResult {
  ms: number;
  rssMb: number;
  extra?: Record<string, number | string>;
}

const require = createRequire(import.meta.url);
const { HEAP_GROWING } = require('../../../bin/convsearch.js') as { HEAP_GROWING: string };

/** The bench's entry point: phases run as `node bench.js --phase <name> …`. */
const BENCH = join(dirname(fileURLToPath(import.meta.url)), 'bench.js');

export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1]! : fallback;
}

export const flag = (name: string): boolean => process.argv.includes(`--${name}`);

export const rssMb = (): number => process.resourceUsage().maxRSS / 1024;

/**
 * The heap growth bin/convsearch.js sets before an index is written in bulk (the sink's bulkWrite,
 * WorkHooks.onBulkWrite), given to the phases' library calls at the same moment, so that a phase's peak
 * RSS and its threads' start-up are what the command's would be. Set as bin sets it, not on node's
 * command line, whose V8 flags a server reader's driver thread refuses (ERR_WORKER_INVALID_EXEC_ARGV).
 */
let heapSet = false;
export function bulkWrite(): void {
  if (heapSet) return;
  heapSet = true;
  setFlagsFromString(HEAP_GROWING);
}

/** Runs one phase in a fresh process, so that its peak RSS and its start-up are its own. */
export function runPhase(args: string[], env: NodeJS.ProcessEnv = {}): PhaseResult {
  const r = spawnSync(process.execPath, [BENCH, '--phase', ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, ...env },
  });
  if (r.status !== 0) throw new Error(`phase ${args[0]} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as PhaseResult;
}

export const fmt = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);

/** The value at percentile `p` of sorted `xs` (nearest rank). */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
