import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cli } from '../helpers/cli.js';
import { buildUxStore, buildWideStore } from '../helpers/ux-store.js';

let db: string;
before(() => {
  db = buildUxStore();
});

interface Doc {
  hits: Array<{
    run_id: string;
    message_index: number;
    score: number;
    roles: string[];
    parts: Array<{ role: string; tool_name: string | null }>;
  }>;
}

const json = async (args: string[]): Promise<Doc> => JSON.parse((await cli([...args, '--json'])).stdout) as Doc;

describe('CI checks: exit status and quiet', () => {
  test('0 when hits are found, 1 when none, 2 on an error', async () => {
    assert.equal((await cli(['search', 'refund', '--db', db, '--scope', 'all'])).status, 0);
    assert.equal((await cli(['search', 'zzzz', '--db', db, '--scope', 'all'])).status, 1);
    assert.equal((await cli(['search', 'refund', '--db', db])).status, 2, 'no scope');
    assert.equal((await cli(['search', 'refund', '--db', '/nonexistent/x.db', '--scope', 'all'])).status, 2);
  });

  test('-q prints nothing and only sets the status', async () => {
    for (const [args, status] of [
      [['search', 'refund', '--db', db, '--scope', 'all', '-q'], 0],
      [['search', 'zzzz', '--db', db, '--scope', 'all', '--quiet'], 1],
      [['search', 'refund', '--db', db, '--scope', 'all', '-q', '--expect-none'], 1],
      [['search', 'refund', '--db', db, '--scope', 'all', '-q', '--json'], 0],
    ] as Array<[string[], number]>) {
      const r = await cli(args);
      assert.equal(r.status, status, args.join(' '));
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, '');
    }
  });

  test('--expect-none: exit 1 with the hits on stderr when any is found, 0 when none', async () => {
    const bad = await cli([
      'search',
      'delete_user',
      '--conversation',
      'conv-x',
      '--db',
      db,
      '--role',
      'tool-call',
      '--tool',
      'delete_user',
      '--expect-none',
      '--plain',
    ]);
    assert.equal(bad.status, 1);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, /^run-a1:3:\d\.\d:Tool Call \[delete_user\]/);
    assert.match(bad.stderr, /--expect-none failed: 1 matching message found\n$/);
    const good = await cli([
      'search',
      'delete_user',
      '--conversation',
      'conv-y',
      '--db',
      db,
      '--role',
      'tool-call',
      '--tool',
      'delete_user',
      '--expect-none',
    ]);
    assert.equal(good.status, 0, good.stderr);
    assert.equal(good.stdout, '');
  });

  test('--expect-min n: 0 with at least n matching messages, 1 with fewer; n above -m is no error', async () => {
    const base = ['search', 'refund', 'policy', '--run', 'run-a1', '--db', db, '--role', 'assistant', '-C', '0'];
    const n = (await json(base)).hits.length;
    assert.ok(n >= 1);
    assert.equal((await cli([...base, '--expect-min', String(n)])).status, 0);
    const short = await cli([...base, '--expect-min', String(n + 1)]);
    assert.equal(short.status, 1);
    assert.match(short.stderr, new RegExp(`--expect-min ${n + 1} failed: ${n} matching messages? found\n`));
    assert.ok(short.stdout.length > 0, 'the hits that were found are still printed');
    // -m 1 shows one hit, the check still counts every match
    const one = await cli([...base, '-m', '1', '--expect-min', String(n)]);
    assert.equal(one.status, n >= 1 ? 0 : 1, one.stderr);
    assert.equal((await cli([...base, '-m', '1', '--expect-min', '11'])).status, 1);
  });

  test('--min-score drops hits below it and keeps scores as they were', async () => {
    const args = ['search', 'refund', 'policy', '--db', db, '--scope', 'all', '-C', '0', '-m', '50'];
    const all = (await json(args)).hits;
    const cut = all[Math.floor(all.length / 2)]!.score;
    const kept = (await json([...args, '--min-score', String(cut)])).hits;
    assert.deepEqual(
      kept.map((h) => [h.run_id, h.message_index, h.score]),
      all.filter((h) => h.score >= cut).map((h) => [h.run_id, h.message_index, h.score]),
    );
    assert.equal((await cli([...args, '--min-score', '1000'])).status, 1);
    assert.equal((await cli([...args, '--min-score', 'abc'])).status, 2);
  });

  test('--role and --tool pick hits without changing BM25 statistics', async () => {
    const args = ['search', 'refund', 'policy', 'order', '--db', db, '--scope', 'all', '-C', '0', '-m', '50'];
    const all = (await json(args)).hits;
    const score = new Map(all.map((h) => [`${h.run_id}:${h.message_index}`, h.score]));
    for (const [flags, keep] of [
      [['--role', 'assistant'], (h: Doc['hits'][0]) => h.roles.includes('assistant')],
      [['--role', 'user,tool-call'], (h: Doc['hits'][0]) => h.roles.includes('user') || h.roles.includes('tool-call')],
      [['--role', 'user', '--role', 'tool-call'], (h: Doc['hits'][0]) => h.roles.includes('user') || h.roles.includes('tool-call')],
      [['--tool', 'lookup_policy'], (h: Doc['hits'][0]) => h.parts.some((p) => p.tool_name === 'lookup_policy')],
    ] as Array<[string[], (h: Doc['hits'][0]) => boolean]>) {
      const got = (await json([...args, ...flags])).hits;
      assert.ok(got.length > 0, flags.join(' '));
      assert.deepEqual(
        got.map((h) => `${h.run_id}:${h.message_index}`),
        all.filter(keep).map((h) => `${h.run_id}:${h.message_index}`),
        flags.join(' '),
      );
      for (const h of got) assert.equal(h.score, score.get(`${h.run_id}:${h.message_index}`), 'same score as unfiltered');
    }
    assert.equal((await cli([...args, '--role', 'nobody'])).status, 2);
  });

  test('filters combine with scopes', async () => {
    const x = await json(['search', 'refund', '--conversation', 'conv-x', '--db', db, '--role', 'assistant', '-C', '0']);
    assert.ok(x.hits.length > 0);
    assert.ok(x.hits.every((h) => h.run_id === 'run-a1' || h.run_id === 'run-a2'));
    const retry = await json(['search', 'card', '--run', 'run-a2', '--db', db, '--role', 'retry', '--tool', 'charge_card', '-C', '0']);
    assert.deepEqual(
      retry.hits.map((h) => h.message_index),
      [2],
    );
  });

  test('filters and checks are printed by every format the same way', async () => {
    const args = ['search', 'refund', '--db', db, '--scope', 'all', '--role', 'tool-call', '-C', '0'];
    const hits = (await json(args)).hits;
    const plain = (await cli([...args, '--plain'])).stdout.trim().split('\n');
    assert.deepEqual(
      plain.map((l) => l.split(':').slice(0, 2).join(':')),
      hits.map((h) => `${h.run_id}:${h.message_index}`),
    );
    const tool = (await cli([...args, '--format', 'tool'])).stdout;
    assert.match(tool, new RegExp(`^Found ${hits.length} match\\(es\\)`));
  });
});

/** The ranking every match: with -C 0 nothing hides as context, and -m above the matches shows them all. */
const everyMatch = ['-C', '0', '-m', '100000'];

describe('counts and checks mean every matching message, like grep -c', () => {
  let wide: string;
  before(() => {
    // 30 runs of 4 messages that all say "needle": more matches than -m 10 shows, more than -C 5 leaves apart
    wide = buildWideStore(30, 4);
  });

  for (const [label, extra] of [
    ['index', []],
    ['no index', ['--no-index']],
    ['no index, threads', ['--no-index']],
  ] as Array<[string, string[]]>) {
    const env = label.endsWith('threads') ? { CONVSEARCH_THREADS: '2' } : {};
    test(`--count and --count-by do not change with -m and -C (${label})`, async () => {
      const args = ['search', 'needle', '--db', wide, '--scope', 'all', ...extra];
      const all = (JSON.parse((await cli([...args, ...everyMatch, '--json'], { env })).stdout) as Doc).hits;
      assert.equal(all.length, 120);
      for (const view of [[], ['-m', '1'], ['-C', '0'], ['-m', '1000'], ['-C', '0', '-m', '3'], ['-m', '0']]) {
        const count = await cli([...args, ...view, '--count'], { env });
        assert.equal(count.stdout, '120\n', view.join(' '));
        assert.equal(count.status, view.join(' ') === '-m 0' ? 1 : 0, `${view.join(' ')}: the status still says whether a hit is shown`);
        const perRun = (await cli([...args, ...view, '--count-by', 'run'], { env })).stdout;
        const perRunAll = new Map<string, number>();
        for (const h of all) perRunAll.set(h.run_id, (perRunAll.get(h.run_id) ?? 0) + 1);
        const expected = [...perRunAll].map(([run, n]) => `${run}:${n}`).join('\n') + '\n';
        assert.equal(perRun, expected, view.join(' '));
      }
      const doc = JSON.parse((await cli([...args, '--json'], { env })).stdout) as Doc & {
        summary: { hits: number; total_matches: number };
      };
      assert.deepEqual([doc.hits.length, doc.summary.hits, doc.summary.total_matches], [10, 10, 120]);
      const nd = (await cli([...args, '-m', '2', '--ndjson'], { env })).stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
      assert.deepEqual(nd.at(-1), {
        type: 'summary',
        schema_version: 1,
        data: { hits: 2, total_matches: 120, messages: 120, runs: 30, skipped_snapshots: 0 },
      });
    });

    test(`counts follow --role, --tool and --min-score (${label})`, async () => {
      const args = ['search', 'refund', 'policy', 'order', '--db', db, '--scope', 'all', ...extra];
      const all = (await json([...args, ...everyMatch])).hits;
      for (const [flags, keep] of [
        [[], () => true],
        [['--role', 'assistant'], (h: Doc['hits'][0]) => h.roles.includes('assistant')],
        [
          ['--tool', 'delete_user,lookup_*'],
          (h: Doc['hits'][0]) => h.parts.some((p) => p.tool_name === 'delete_user' || p.tool_name === 'lookup_policy'),
        ],
        [['--min-score', String(all[2]!.score)], (h: Doc['hits'][0]) => h.score >= all[2]!.score],
      ] as Array<[string[], (h: Doc['hits'][0]) => boolean]>) {
        const want = all.filter(keep).length;
        assert.ok(want > 0, flags.join(' '));
        assert.equal((await cli([...args, ...flags, '-m', '1', '--count'], { env })).stdout, `${want}\n`, flags.join(' '));
        assert.equal((await cli([...args, ...flags, '-m', '1', '--expect-min', String(want), '-q'], { env })).status, 0, flags.join(' '));
        assert.equal(
          (await cli([...args, ...flags, '-m', '1', '--expect-min', String(want + 1), '-q'], { env })).status,
          1,
          flags.join(' '),
        );
      }
    });
  }

  test('--expect-none fails on a match that -m does not show, and says how many there are', async () => {
    const r = await cli(['search', 'needle', '--db', wide, '--scope', 'all', '-m', '1', '--expect-none', '--plain']);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^run-0000:\d+:[\d.]+:/);
    assert.match(r.stderr, /--expect-none failed: 120 matching messages found \(1 shown\)\n$/);
    const m0 = await cli(['search', 'needle', '--db', wide, '--scope', 'all', '-m', '0', '--expect-none', '-q']);
    assert.equal(m0.status, 1, '-m 0 hides every hit, the check still sees them');
  });

  test('the human summary: showing N of M matching messages in R runs', async () => {
    const r = await cli(['search', 'needle', '--db', wide, '--scope', 'all', '--color', 'never']);
    assert.equal(r.status, 0);
    assert.equal(r.stderr, 'showing 10 of 120 matching messages in 30 runs (searched 120 messages in 30 runs)\n');
  });

  test('-m 0 is a usage error where nothing would print (human, --plain), an answer elsewhere', async () => {
    const args = ['search', 'needle', '--db', wide, '--scope', 'all', '-m', '0'];
    for (const view of [[], ['--plain'], ['--format', 'human']]) {
      const r = await cli([...args, ...view]);
      assert.equal(r.status, 2, view.join(' '));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^convsearch: error: -m 0 selects no hit to print.*use --count for the number of matching messages, or -q/);
    }
    const tool = await cli([...args, '--format', 'tool']);
    assert.deepEqual([tool.status, tool.stdout], [1, "Found 0 match(es) for 'needle' in 120 persisted messages:\n\n\n"]);
    const doc = JSON.parse((await cli([...args, '--json'])).stdout) as Doc & { summary: { total_matches: number } };
    assert.deepEqual([doc.hits.length, doc.summary.total_matches], [0, 120]);
    assert.equal((await cli([...args, '--count'])).stdout, '120\n');
    assert.deepEqual(await cli([...args, '-q']), { status: 1, stdout: '', stderr: '' });
  });

  test('when the filters remove every hit, the notice says how many matched and which flags removed them', async () => {
    const r = await cli(['search', 'weather', '--db', db, '--scope', 'all', '--role', 'assistant']);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      'no hits: 1 matching message, removed by --role assistant\n0 matching messages (searched 16 messages in 5 runs)\n',
    );
    const two = await cli(['search', 'refund', '--db', db, '--scope', 'all', '--role', 'system', '--tool', 'x*', '--min-score', '0.5']);
    assert.match(two.stderr, /^no hits: 6 matching messages, all removed by --role system --tool x\* --min-score 0\.5\n/);
  });
});

describe('--tool takes comma lists and globs, like --role', () => {
  test('a glob, a list and a repeated flag pick the same hits', async () => {
    const args = ['search', 'refund', 'order', 'card', 'user', '--db', db, '--scope', 'all', '-C', '0', '-m', '100'];
    const ids = async (...flags: string[]): Promise<string[]> =>
      (await json([...args, ...flags])).hits.map((h) => `${h.run_id}:${h.message_index}`);
    const calls = await ids('--tool', 'delete_user', '--tool', 'charge_card');
    assert.ok(calls.length >= 2);
    assert.deepEqual(await ids('--tool', 'delete_user,charge_card'), calls);
    assert.deepEqual(await ids('--tool', 'delete_*,charge_*'), calls);
    assert.deepEqual(await ids('--tool', 'de?ete_user,[c]harge_card'), calls);
    assert.deepEqual(await ids('--tool', 'delete'), [], 'whole names only');
    const doc = JSON.parse((await cli([...args, '--tool', 'delete_*,charge_card', '--json'])).stdout) as { filters: { tools: string[] } };
    assert.deepEqual(doc.filters.tools, ['delete_*', 'charge_card']);
  });
});
