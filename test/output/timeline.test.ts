import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { sparkline, timeline, timelineLine, withSession } from '../../src/lib.js';
import { FIXTURES } from '../helpers/cli.js';

const SMALL = join(FIXTURES, 'parity', 'small.db');

/** Runs the CLI in-process with stdout a terminal of `columns` columns. */
async function onTerminal(args: string[], columns = 100): Promise<{ stdout: string; status: number }> {
  let stdout = '';
  const status = await main(['node', 'convsearch', ...args], {
    stdout: { write: (s: string) => void (stdout += s), isTTY: true, columns },
    stderr: { write: () => undefined },
    env: { TERM: 'dumb', NO_COLOR: '1' },
    cwd: process.cwd(),
    readStdin: () => '',
  });
  return { stdout, status };
}

test('sparkline: one bar per bucket scaled to the largest, a space for none, merged past the width', () => {
  const b = (...counts: number[]) => counts.map((count, i) => ({ key: String(i), count }));
  assert.equal(sparkline(b(1, 0, 8, 4), 10), '▁ █▄');
  assert.equal(sparkline(b(1, 1, 0, 0, 3, 3), 3), '▃ █');
  assert.equal(sparkline([], 10), '');
});

test('timeline of a parity store: per day spans every day between the first and last match; per run sums to the match count', async () => {
  await withSession(SMALL, { index: false }, (session) => {
    const outcome = session.search({ query: 'the', scope: 'all', maxMatches: 1 });
    const byDay = timeline(outcome, 'day');
    const byRun = timeline(outcome, 'run');
    assert.ok(outcome.matches.total > 1, 'the query matches several messages');
    assert.equal(byRun.buckets.length, outcome.matches.byRun.length);
    assert.equal(
      byRun.buckets.reduce((n, b) => n + b.count, 0),
      outcome.matches.total,
    );
    assert.equal(byDay.buckets.reduce((n, b) => n + b.count, 0) + byDay.undated, outcome.matches.total);
    assert.equal(byDay.buckets[0]!.key, byDay.from);
    assert.equal(byDay.buckets.at(-1)!.key, byDay.to);
    for (let i = 1; i < byDay.buckets.length; i++) {
      const gap = Date.parse(byDay.buckets[i]!.key) - Date.parse(byDay.buckets[i - 1]!.key);
      assert.equal(gap, 86_400_000, 'consecutive days, none left out');
    }
    const line = timelineLine(byDay, 80);
    assert.ok(line.includes(byDay.from!), line);
    assert.ok([...line].length <= 80, line);
  });
});

test('search --timeline: the sparkline line above the hits on a terminal, nothing off one, the counts in --json', async () => {
  const args = ['search', 'the', '--db', SMALL, '--scope', 'all', '--no-index', '--timeline'];
  const tty = await onTerminal(args);
  const first = tty.stdout.split('\n')[0]!;
  assert.match(first, /^\d+ match(es)? per day, \d{4}-\d{2}-\d{2}( … \d{4}-\d{2}-\d{2})? ▕[ ▁▂▃▄▅▆▇█]+▏$/);
  const perRun = await onTerminal([...args.slice(0, -1), '--timeline', 'run']);
  assert.match(perRun.stdout.split('\n')[0]!, / per run, /);

  let piped = '';
  await main(['node', 'convsearch', ...args], {
    stdout: { write: (s: string) => void (piped += s) },
    stderr: { write: () => undefined },
    env: {},
    cwd: process.cwd(),
    readStdin: () => '',
  });
  assert.ok(!piped.includes('per day'), 'no sparkline into a pipe');

  let json = '';
  await main(['node', 'convsearch', ...args, '--json'], {
    stdout: { write: (s: string) => void (json += s) },
    stderr: { write: () => undefined },
    env: {},
    cwd: process.cwd(),
    readStdin: () => '',
  });
  const doc = JSON.parse(json) as {
    timeline: { by: string; total: number; buckets: Array<{ day: string; count: number }> };
    summary: { total_matches: number };
  };
  assert.equal(doc.timeline.by, 'day');
  assert.equal(doc.timeline.total, doc.summary.total_matches);
  assert.equal(
    doc.timeline.buckets.reduce((n, b) => n + b.count, 0),
    doc.summary.total_matches,
  );
});
