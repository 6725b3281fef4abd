/** Shared by the hardening suites: temp dirs, file hashes, and a CLI environment with a private index cache. */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { mulberry32 } from '../../scripts/lib/random.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A temp dir removed when the test file ends. */
export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `convsearch-${prefix}-`));
  dirs.push(d);
  return d;
}

/**
 * Environment overrides for runCli/runCliAsync: the default index goes to a private cache dir, so the
 * suites never touch ~/.cache and never share an index with another suite.
 */
export function cliEnv(cacheDir: string): NodeJS.ProcessEnv {
  return { XDG_CACHE_HOME: cacheDir };
}

export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** sha256 of a store and of each side file that exists (`-` for a missing one). */
export function storeDigest(path: string, suffixes: readonly string[] = ['', '-wal', '-shm']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of suffixes) out[s || 'db'] = existsSync(path + s) ? sha256File(path + s) : '-';
  return out;
}

/** A stack trace line as Node prints it (`    at fn (file:line:col)`). */
export const STACK_LINE = /^\s+at .+(\(|:\d+:\d+)/m;

export const prng = mulberry32;
