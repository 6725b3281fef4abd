/**
 * Order and lists (issue 12 §3): --sort time and --reverse for hits, -l/--runs-with-matches, and the
 * order flags of `runs` and `conversations`, each checked against the default answer reordered here, on
 * the index and without it.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { cli, ROOT } from '../helpers/cli.js';
import { buildCompactionStore, buildUndatedStore } from '../helpers/compaction-store.js';
import { checkEvents, checkShape, CONVERSATIONS_EVENTS, RUNS_EVENTS, SEARCH_RUNS_DOC, SEARCH_RUNS_EVENTS } from '../helpers/shapes.js';

const DEMO = join(ROOT, 'examples', 'sessions.db');
let db: string;
let undated: string;
before(() => {
  db = buildCompactionStore();
  undated = buildUndatedStore();
});

interface HitDoc {
  rank: number;
  run_id: string;
  agent_name: string | null;
  conversation_id: string | null;
  message_index: number;
  score: number;
  timestamp: string | null;
  text: string;
}
interface RunMatch {
  run_id: string;
  conversation_id: string | null;
  agent_name: string | null;
  matches: number;
  best_score: number;
}

async function both(args: string[]): Promise<{ stdout: string; status: number | null; stderr: string }> {
  const a = await cli(args);
  const b = await cli([...args, '--no-index']);
  const c = await cli([...args, '--no-index'], { env: { CONVSEARCH_THREADS: '2' } });
  assert.equal(b.stdout, a.stdout, args.join(' '));
  assert.equal(c.stdout, a.stdout, args.join(' '));
  assert.equal(b.status, a.status);
  return a;
}
const hits = async (args: string[]): Promise<HitDoc[]> => (JSON.parse((await both([...args, '--json'])).stdout) as { hits: HitDoc[] }).hits;
const key = (h: { run_id: string; message_index?: number }): string => `${h.run_id}[${h.message_index ?? ''}]`;
const WORDS = ['node', 'policy', 'cache', 'lru', 'runbook', 'eviction'];

describe('--sort and --reverse', () => {
  test('--sort time: the same hits, oldest first, ties by rank; ranks kept', async () => {
    for (const extra of [
      ['-C', '0', '-m', '1000'],
      ['-C', '1', '-m', '8', '--collapse'],
    ]) {
      const base = ['search', ...WORDS, '--db', db, '--scope', 'all', ...extra];
      const byScore = await hits(base);
      const byTime = await hits([...base, '--sort', 'time']);
      const t = (h: HitDoc) => Date.parse(h.timestamp!);
      const expected = byScore.slice().sort((a, b) => t(a) - t(b) || a.rank - b.rank);
      assert.deepEqual(byTime, expected, extra.join(' '));
      assert.deepEqual(await hits([...base, '--sort', 'time', '--reverse']), expected.slice().reverse());
      assert.deepEqual(await hits([...base, '--reverse']), byScore.slice().reverse());
      assert.deepEqual(await hits([...base, '--sort', 'score']), byScore);
    }
  });

  test('a message without a timestamp sorts at its snapshot time', async () => {
    const sorted = await hits(['search', 'zebra', '--db', undated, '--scope', 'all', '-C', '0', '--sort', 'time']);
    assert.deepEqual(
      sorted.map((h) => [h.message_index, h.timestamp]),
      [
        [0, '2026-03-01T09:00:01Z'],
        [1, '2026-03-01T09:00:02Z'],
        [2, null],
        [3, '2026-03-01T15:00:01Z'],
      ],
    );
  });

  test('every format follows the order but --format tool, which answers like the reference', async () => {
    const base = ['search', ...WORDS, '--db', db, '--scope', 'all', '-C', '0'];
    const order = (await hits([...base, '--sort', 'time', '--reverse'])).map(key);
    const plain = (await both([...base, '--sort', 'time', '--reverse', '--plain'])).stdout.trimEnd().split('\n');
    assert.deepEqual(
      plain.map((l) => {
        const [r, i] = l.split(':');
        return `${r}[${i}]`;
      }),
      order,
    );
    const human = (await both([...base, '--sort', 'time', '--reverse', '--color', 'never'])).stdout;
    assert.deepEqual(
      [...human.matchAll(/^#\d+ · .* · run (\S+) · .* · \[(\d+)\]/gm)].map((m) => `${m[1]}[${m[2]}]`),
      order,
    );
    assert.equal(
      (await both([...base, '--sort', 'time', '--reverse', '--format', 'tool'])).stdout,
      (await both([...base, '--format', 'tool'])).stdout,
    );
  });
});

describe('-l/--runs-with-matches', () => {
  const base = ['search', ...WORDS, '--db', db, '--scope', 'all'];

  test('one line per run: conversation, agent, matching messages and best score, best first', async () => {
    const all = await hits([...base, '-C', '0', '-m', '1000']);
    const runs = new Map<string, { n: number; best: number; first: number; h: HitDoc }>();
    all.forEach((h) => {
      const r = runs.get(h.run_id);
      if (r) {
        r.n++;
        r.best = Math.max(r.best, h.score);
      } else runs.set(h.run_id, { n: 1, best: h.score, first: runs.size, h });
    });
    const doc = JSON.parse((await both([...base, '-l', '--json'])).stdout) as { runs: RunMatch[]; summary: { total_matches: number } };
    checkShape(doc, SEARCH_RUNS_DOC);
    const byBest = [...runs.values()].sort((a, b) => b.best - a.best);
    assert.deepEqual(
      doc.runs.map((r) => [r.run_id, r.matches, r.best_score, r.agent_name, r.conversation_id]),
      byBest.map((r) => [r.h.run_id, r.n, r.best, r.h.agent_name, r.h.conversation_id]),
    );
    assert.equal(doc.summary.total_matches, all.length);
    const lines = await both([...base, '-l']);
    assert.equal(lines.status, 0);
    assert.equal(
      lines.stdout,
      doc.runs.map((r) => `${r.run_id}\t${r.conversation_id}\t${r.agent_name ?? '-'}\t${r.matches}\t${r.best_score.toFixed(1)}\n`).join(''),
    );
    assert.equal((await both([...base, '-l', '--reverse'])).stdout, lines.stdout.trimEnd().split('\n').reverse().join('\n') + '\n');
    assert.equal((await both([...base, '--runs-with-matches', '--plain'])).stdout, lines.stdout);
    const events = checkEvents((await both([...base, '-l', '--ndjson'])).stdout, SEARCH_RUNS_EVENTS);
    assert.deepEqual(
      events.filter((e) => e.type === 'run').map((e) => e.data),
      doc.runs,
    );
  });

  test('counts agree with --count-by run, under filters and --collapse; exit 1 when no run matches', async () => {
    for (const extra of [
      [],
      ['--collapse'],
      ['--agent', 'researcher', '--role', 'user'],
      ['--parent', 'lx-2', '--collapse'],
      ['-m', '1'],
    ]) {
      const l = (await both([...base, '-l', ...extra])).stdout.trimEnd().split('\n').filter(Boolean);
      const by = (await both([...base, '--count-by', 'run', ...extra])).stdout.trimEnd().split('\n').filter(Boolean);
      assert.deepEqual(
        new Set(
          l.map((x) => {
            const f = x.split('\t');
            return `${f[0]}:${f[3]}`;
          }),
        ),
        new Set(by),
        extra.join(' '),
      );
    }
    const none = await both(['search', 'zzzzz', '--db', db, '--scope', 'all', '-l']);
    assert.equal(none.status, 1);
    assert.equal(none.stdout, '');
    const check = await cli([...base, '-l', '--expect-min', '1000']);
    assert.equal(check.status, 1);
    for (const conflict of [['--count'], ['--format', 'tool'], ['--count-by', 'run']]) {
      const r = await cli([...base, '-l', ...conflict]);
      assert.equal(r.status, 2, conflict.join(' '));
      assert.match(r.stderr, /^convsearch: error: -l and .* ask for different outputs; pass one\n$/);
    }
  });
});

describe('runs --reverse; conversations --sort, --limit, --reverse', () => {
  const listed = async (args: string[], key: 'runs' | 'conversations') => {
    const doc = JSON.parse((await both([...args, '--db', DEMO, '--json'])).stdout) as Record<string, Array<Record<string, unknown>>>;
    return doc[key]!;
  };

  test('runs --reverse turns the order around before --limit', async () => {
    const all = (await listed(['runs'], 'runs')).map((r) => r.run_id);
    assert.deepEqual(
      (await listed(['runs', '--reverse'], 'runs')).map((r) => r.run_id),
      all.slice().reverse(),
    );
    assert.deepEqual(
      (await listed(['runs', '--reverse', '--limit', '3'], 'runs')).map((r) => r.run_id),
      all.slice().reverse().slice(0, 3),
    );
    const byMessages = (await listed(['runs', '--sort', 'messages'], 'runs')).map((r) => r.run_id);
    assert.deepEqual(
      (await listed(['runs', '--sort', 'messages', '--reverse', '--limit', '2'], 'runs')).map((r) => r.run_id),
      byMessages.slice().reverse().slice(0, 2),
    );
    const events = checkEvents((await both(['runs', '--db', DEMO, '--ndjson', '--reverse', '--limit', '1'])).stdout, RUNS_EVENTS);
    assert.equal(events[0]!.data.reverse, true);
  });

  test('conversations --sort started|messages|runs, --reverse, --limit', async () => {
    const all = await listed(['conversations'], 'conversations');
    const ids = (cs: Array<Record<string, unknown>>) => cs.map((c) => c.conversation_id);
    const by = (k: string) =>
      all
        .map((c, i) => ({ c, i }))
        .sort((a, b) => (b.c[k] as number) - (a.c[k] as number) || a.i - b.i)
        .map((x) => x.c);
    assert.deepEqual(ids(await listed(['conversations', '--sort', 'started'], 'conversations')), ids(all));
    assert.deepEqual(ids(await listed(['conversations', '--sort', 'messages'], 'conversations')), ids(by('messages')));
    assert.deepEqual(ids(await listed(['conversations', '--sort', 'runs'], 'conversations')), ids(by('runs')));
    assert.deepEqual(
      ids(await listed(['conversations', '--sort', 'messages', '--limit', '2'], 'conversations')),
      ids(by('messages').slice(0, 2)),
    );
    assert.deepEqual(ids(await listed(['conversations', '--reverse', '--limit', '1'], 'conversations')), ids(all.slice(-1)));
    const events = checkEvents(
      (await both(['conversations', '--db', DEMO, '--ndjson', '--sort', 'runs', '--limit', '2'])).stdout,
      CONVERSATIONS_EVENTS,
    );
    assert.deepEqual(events[0]!.data, { sort: 'runs', reverse: false, limit: 2 });
    assert.equal(events.filter((e) => e.type === 'conversation').length, 2);
    const bad = await cli(['conversations', '--db', DEMO, '--sort', 'size']);
    assert.equal(bad.status, 2);
  });
});
