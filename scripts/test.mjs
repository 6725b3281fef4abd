#!/usr/bin/env node
// `npm test` after the build: every dist/test/**/*.test.js, one file per core. Node 20's runner, handed
// the directory, would also run each other .js under a test/ folder (the 22 compiled helpers: a process
// each that tests nothing, counted as a passing test), and by default runs one file fewer than there are
// cores (on 2 cores, one at a time, while most files use one thread). Arguments go to `node --test`.
//
//   node scripts/test.mjs [--test-name-pattern=...]
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, sep } from 'node:path';

const DIR = join('dist', 'test');
/**
 * Files that take far longer than the rest start first (the shared index in Postgres alone took 130 s
 * of CI's 240 s): one that starts late in alphabetical turn runs on with the other core idle.
 */
const FIRST = ['sidecar/shared/shared-index.test.js', 'sidecar/tiered-merge.test.js', 'store/sqlite/live-writer.test.js'];
const rank = (f) => {
  const i = FIRST.indexOf(f.split(sep).join('/'));
  return i < 0 ? FIRST.length : i;
};
const files = readdirSync(DIR, { recursive: true })
  .filter((f) => f.endsWith('.test.js'))
  .sort()
  .sort((a, b) => rank(a) - rank(b))
  .map((f) => join(DIR, f));
const r = spawnSync(
  process.execPath,
  ['--test', '--test-reporter=spec', `--test-concurrency=${availableParallelism()}`, ...process.argv.slice(2), ...files],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
