/** Shared by the hardening suites: temp dirs, file hashes, and a CLI environment with a private index cache. */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

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

/** Deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
