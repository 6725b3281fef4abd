import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.js';

/** The repository root (tests run from dist/test/...). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const BIN = join(ROOT, 'bin', 'convsearch.js');
export const FIXTURES = join(ROOT, 'test', 'fixtures');

export interface CliResult {
  stdout: string;
  stderr: string;
  status: number | null;
}

export interface CliOptions {
  cwd?: string;
  /**
   * In-process only: the working directory the sink reports (where default places are looked for),
   * for a command line whose every path is absolute. `cwd` changes the process's instead.
   */
  sinkCwd?: string;
  /** Overrides; an empty string removes the variable. */
  env?: NodeJS.ProcessEnv;
  input?: string;
}

/** Indexes built by tests go to a private cache, never the user's. */
export const TEST_CACHE = mkdtempSync(join(tmpdir(), 'convsearch-test-cache-'));
/** An empty config directory: a CLAI 2 store of the user's is never found by a test (see api/discover.ts). */
export const TEST_CONFIG = mkdtempSync(join(tmpdir(), 'convsearch-test-config-'));
// every test process made its own: left behind, they filled /tmp (6,000 of them, 700 MB) and every
// store open's sweep of stale private copies lists that directory
process.on('exit', () => {
  for (const d of [TEST_CACHE, TEST_CONFIG]) rmSync(d, { recursive: true, force: true });
});

function cliEnv(overrides: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_COLOR: '',
    FORCE_COLOR: '',
    CLICOLOR_FORCE: '',
    CONVSEARCH_DB: '',
    XDG_CACHE_HOME: TEST_CACHE,
    XDG_CONFIG_HOME: TEST_CONFIG,
    ...overrides,
  };
  for (const k of Object.keys(env)) if (env[k] === '') delete env[k];
  return env;
}

/**
 * Runs a command line in this process, through the same `main` the bundle runs, with its output
 * caught: what `runCli` does without the cost of a process. Everything a command reads from outside
 * (environment, standard input) comes through the sink, so the answer is the process's; what needs a
 * real process (bin/, signals, terminals, several processes at once, another working directory) uses
 * runCli. The default environment is runCli's.
 */
export async function cli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  if (opts.cwd !== undefined && resolve(opts.cwd) !== process.cwd()) return runCli(args, opts);
  let stdout = '';
  let stderr = '';
  const status = await main(['node', 'convsearch', ...args], {
    stdout: { write: (s: string) => void (stdout += s) },
    stderr: { write: (s: string) => void (stderr += s) },
    env: cliEnv(opts.env),
    cwd: opts.sinkCwd ?? process.cwd(),
    readStdin: () => opts.input ?? '',
  });
  return { stdout, stderr, status };
}

/** Runs the built CLI as a user would (a process of its own), with a clean colour and store environment. */
export function runCli(args: string[], opts: CliOptions = {}): CliResult {
  const env = cliEnv(opts.env);
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: opts.cwd ?? ROOT,
    env,
    encoding: 'utf8',
    input: opts.input,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

/** Like runCli, without blocking: lets a suite run many CLI processes at once. */
export function runCliAsync(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? ROOT, env: cliEnv(opts.env) });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (status) =>
      resolvePromise({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), status }),
    );
    child.stdin.end(opts.input ?? '');
  });
}
