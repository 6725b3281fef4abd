import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildUxStore, cli } from '../helpers/ux-store.js';

let db: string;
before(() => {
  db = buildUxStore();
});

interface Doc {
  hits: Array<{ run_id: string; message_index: number; score: number; roles: string[]; parts: Array<{ role: string; tool_name: string | null }> }>;
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
    const bad = await cli(['search', 'delete_user', '--conversation', 'conv-x', '--db', db, '--role', 'tool-call', '--tool', 'delete_user', '--expect-none', '--plain']);
    assert.equal(bad.status, 1);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, /^run-a1:3:\d\.\d:Tool Call \[delete_user\]/);
    assert.match(bad.stderr, /--expect-none failed: 1 hit found\n$/);
    const good = await cli(['search', 'delete_user', '--conversation', 'conv-y', '--db', db, '--role', 'tool-call', '--tool', 'delete_user', '--expect-none']);
    assert.equal(good.status, 0, good.stderr);
    assert.equal(good.stdout, '');
  });

  test('--expect-min n: 0 with at least n hits, 1 with fewer; an unreachable n is a usage error', async () => {
    const base = ['search', 'refund', 'policy', '--run', 'run-a1', '--db', db, '--role', 'assistant', '-C', '0'];
    const n = (await json(base)).hits.length;
    assert.ok(n >= 1);
    assert.equal((await cli([...base, '--expect-min', String(n)])).status, 0);
    const short = await cli([...base, '--expect-min', String(n + 1)]);
    assert.equal(short.status, 1);
    assert.match(short.stderr, new RegExp(`--expect-min ${n + 1} failed: ${n} hits? found`));
    assert.ok(short.stdout.length > 0, 'the hits that were found are still printed');
    const impossible = await cli([...base, '--expect-min', '11']);
    assert.equal(impossible.status, 2);
    assert.match(impossible.stderr, /raise -m/);
    assert.equal((await cli([...base, '--expect-min', '11', '-m', '20'])).status, 1);
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
