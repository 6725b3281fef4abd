/**
 * Many readers and a writer (issue 19, point 5): 8 searches share one index while a child process
 * appends runs and snapshots to the store (live-writer-child.ts, the Python store's way). Every search
 * syncs the index, so 8 processes race to update it, and segments are compacted along the way.
 *
 * - while the store grows, every reader's count lies between a `--no-index` count taken before the
 *   readers started and one taken after they ended (the store only grows, so the count only grows);
 * - two more searches each round are killed (SIGKILL) at a random moment, often in the middle of their
 *   write to the index;
 * - once the writer stops, every reader of the shared index, a fresh index and `--no-index` give one answer,
 *   and the shared index's key filter holds every key of every run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { BIN, runCliAsync, type CliResult } from '../helpers/cli.js';
import { assertFilterHoldsEveryKey } from '../helpers/index-answers.js';
import { tempDir } from '../helpers/stores.js';

const CHILD = fileURLToPath(new URL('../helpers/live-writer-child.js', import.meta.url));
const READERS = 8;

function count(r: CliResult, what: string): number {
  // exit 1: nothing matched (the count says 0)
  assert.ok(r.status === 0 || r.status === 1, `${what}: exit ${r.status}: ${r.stderr}`);
  assert.equal(r.stderr, '', `${what}: stderr`);
  const text = r.stdout.trim();
  return text.startsWith('{') ? (JSON.parse(text) as { summary: { total_matches: number } }).summary.total_matches : Number(text);
}

test('8 searches sharing one index while the store grows answer as --no-index, and leave the index sound', async () => {
  const dir = tempDir();
  const db = join(dir, 'sessions.db');
  const idx = tempDir(); // the index lives outside the store's directory
  const index = join(idx, 'shared.idx');
  const base = ['search', 'liveword', '--db', db, '--scope', 'all'];
  const noIndex = async (): Promise<number> => count(await runCliAsync([...base, '--count', '--no-index']), '--no-index');
  // half the readers count, half read the JSON summary: two code paths over the same index
  const reader = (i: number): Promise<CliResult> =>
    runCliAsync([...base, '--index', index, ...(i % 2 === 0 ? ['--count'] : ['--json', '-m', '0'])]);

  // a search killed after `ms`, whatever it is doing then
  const killed = (ms: number): Promise<unknown> => {
    const p = spawn(process.execPath, [BIN, ...base, '--count', '--index', index], { stdio: 'ignore' });
    const timer = setTimeout(() => p.kill('SIGKILL'), ms);
    return new Promise((resolve) => p.on('close', resolve)).finally(() => clearTimeout(timer));
  };

  const child = spawn(process.execPath, [CHILD, '--db', db, '--mode', 'long', '--ms', '10000', '--max-commits', '80', '--seed', '19']);
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  let writing = true;
  void exited.then(() => (writing = false));
  const lines = createInterface({ input: child.stdout });
  const first = new Promise<void>((resolve) => lines.on('line', (l) => (l.includes('"commit"') ? resolve() : undefined)));
  await first;
  assert.ok(existsSync(db));
  let rounds = 0;
  try {
    while (writing || rounds < 3) {
      const low = await noIndex();
      const kills = [killed(100 + ((rounds * 137) % 400)), killed(200 + ((rounds * 251) % 500))];
      const answers = await Promise.all(Array.from({ length: READERS }, (_, i) => reader(i)));
      await Promise.all(kills);
      const high = await noIndex();
      answers.forEach((r, i) => {
        const n = count(r, `round ${rounds} reader ${i}`);
        assert.ok(low <= n && n <= high, `round ${rounds} reader ${i}: ${n} matches, --no-index said ${low} before and ${high} after`);
      });
      rounds++;
    }
  } finally {
    if (writing) child.kill();
  }
  assert.equal(await exited, 0);

  // the store holds still: one answer everywhere, and the shared index kept on disk is the right one
  const want = await noIndex();
  const settled = await Promise.all(Array.from({ length: READERS }, (_, i) => reader(i)));
  for (const [i, r] of settled.entries()) assert.equal(count(r, `settled reader ${i}`), want, `settled reader ${i}`);
  assert.equal(count(await runCliAsync([...base, '--count', '--index', index]), 'shared index'), want);
  assert.equal(count(await runCliAsync([...base, '--count', '--index', join(idx, 'fresh.idx')]), 'fresh index'), want);
  // what the next update's attribution asks: every key of every run is in the shared index's key filter
  assertFilterHoldsEveryKey(index, 'the shared index');
  assert.ok(rounds >= 3, `${rounds} rounds`);
});
