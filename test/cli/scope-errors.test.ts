import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli } from '../helpers/cli.js';
import { request, response, textPart, userPromptPart, utc } from '../../scripts/lib/messages.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { buildUxStore, tempDir } from '../helpers/ux-store.js';

let db: string;
before(() => {
  db = buildUxStore();
});

const PATHS: Array<[string, string[]]> = [
  ['index', []],
  ['no index', ['--no-index']],
];

describe('a scope naming what the store lacks is an error (exit 2), whatever the output and checks', () => {
  for (const [label, extra] of PATHS) {
    test(`unknown conversation: one line naming it and the closest ids (${label})`, async () => {
      const r = await cli(['search', 'refund', '--db', db, '--conversation', 'conv-X', ...extra]);
      assert.equal(r.status, 2);
      assert.equal(r.stdout, '');
      assert.equal(
        r.stderr,
        "convsearch: error: no conversation 'conv-X' in the store (no run has that conversation id); did you mean conv-x, conv-y?\n",
      );
    });

    test(`unknown run, and a run outside the conversation, read alike (${label})`, async () => {
      const unknown = await cli(['search', 'refund', '--db', db, '--scope', 'all', '--run', 'run-a3', ...extra]);
      assert.equal(unknown.status, 2);
      assert.match(unknown.stderr, /^convsearch: error: no run 'run-a3' in the store; did you mean run-a1, run-a2/);
      const outside = await cli(['search', 'refund', '--db', db, '--conversation', 'conv-x', '--run', 'run-b1', ...extra]);
      const missing = await cli(['search', 'refund', '--db', db, '--conversation', 'conv-x', '--run', 'run-q1', ...extra]);
      assert.equal(outside.status, 2);
      assert.equal(missing.status, 2);
      assert.equal(outside.stderr, "convsearch: error: no run 'run-b1' in conversation 'conv-x'; did you mean run-a1, run-a2?\n");
      assert.equal(missing.stderr, "convsearch: error: no run 'run-q1' in conversation 'conv-x'; did you mean run-a1, run-a2?\n");
    });

    test(`--format tool still prints the reference reply; JSON documents carry the error (${label})`, async () => {
      const tool = await cli(['search', 'refund', '--db', db, '--conversation', 'nope', '--format', 'tool', ...extra]);
      assert.equal(tool.status, 2);
      assert.match(tool.stdout, /^No persisted history in this conversation yet\. /);
      const run = await cli(['search', 'refund', '--db', db, '--scope', 'all', '--run', 'run-zz', '--format', 'tool', ...extra]);
      assert.equal(run.stdout, "No persisted history for run 'run-zz'.\n");
      const json = await cli(['search', 'refund', '--db', db, '--conversation', 'conv-x', '--run', 'run-b1', '--json', ...extra]);
      assert.equal(json.status, 2);
      const doc = JSON.parse(json.stdout) as { hits: unknown[]; error: Record<string, unknown> };
      assert.deepEqual(doc.hits, []);
      assert.deepEqual(doc.error, {
        kind: 'scope-not-found',
        missing: 'run',
        id: 'run-b1',
        conversation_id: 'conv-x',
        suggestions: ['run-a1', 'run-a2'],
        message: "no run 'run-b1' in conversation 'conv-x'; did you mean run-a1, run-a2?",
      });
      const nd = await cli(['search', 'refund', '--db', db, '--conversation', 'nope', '--ndjson', ...extra]);
      assert.equal(nd.status, 2);
      const end = nd.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; data: { error: unknown } })
        .find((e) => e.type === 'end');
      assert.ok(end);
      assert.equal((end.data.error as { missing: string }).missing, 'conversation');
    });

    test(`every CI flag and every other format exits 2 with nothing on stdout (${label})`, async () => {
      for (const flags of [
        ['--expect-none'],
        ['--expect-min', '1'],
        ['-q'],
        ['--plain'],
        ['--count'],
        ['--count-by', 'run'],
        ['--expect-none', '--tool', 'delete_user'],
      ]) {
        const r = await cli(['search', 'delete_user', '--db', db, '--conversation', 'conv-X', ...flags, ...extra]);
        assert.equal(r.status, 2, flags.join(' '));
        assert.equal(r.stdout, '', flags.join(' '));
        assert.match(r.stderr, /no conversation 'conv-X'/, flags.join(' '));
      }
    });
  }

  test('a conversation that exists but holds nothing searchable is not an error: exit 1', async () => {
    const path = join(tempDir(), 'interrupted.db');
    const w = new StepStoreWriter(path);
    w.registerRun({ runId: 'run-i1', conversationId: 'conv-i', startedAt: '2025-03-01T09:00:00Z' });
    const t = utc('2025-03-01T09:00:01Z');
    w.saveSnapshot({
      runId: 'run-i1',
      stepIndex: 1,
      state: 'interrupted',
      timestamp: t,
      messages: [
        request([userPromptPart('refund please', { timestamp: t })], { timestamp: t }),
        response([textPart('ok')], { timestamp: t }),
      ],
    });
    w.close();
    for (const [, extra] of PATHS) {
      const conv = await cli(['search', 'refund', '--db', path, '--conversation', 'conv-i', '--format', 'tool', ...extra]);
      assert.equal(conv.status, 1, conv.stderr);
      assert.match(conv.stdout, /^No persisted history in this conversation yet\./);
      assert.equal(conv.stderr, '');
      const run = await cli(['search', 'refund', '--db', path, '--scope', 'all', '--run', 'run-i1', '--format', 'tool', ...extra]);
      assert.equal(run.status, 1, run.stderr);
      assert.equal(run.stdout, "No persisted history for run 'run-i1'.\n");
    }
  });
});

describe('the same rule for show and the listings: an id the store lacks is an error with the closest ids', () => {
  test('show of an unknown run: exit 2, did you mean', async () => {
    const path = join(tempDir(), 'dashed.db');
    const w = new StepStoreWriter(path);
    for (const id of ['m-000', 'm-001', 'other']) {
      w.registerRun({ runId: id, conversationId: 'c', startedAt: '2025-03-01T09:00:00Z' });
      const t = utc('2025-03-01T09:00:01Z');
      w.saveSnapshot({
        runId: id,
        stepIndex: 1,
        timestamp: t,
        messages: [request([userPromptPart('hello', { timestamp: t })], { timestamp: t })],
      });
    }
    w.close();
    const r = await cli(['show', 'm000', '--db', path]);
    assert.deepEqual(r, { status: 2, stdout: '', stderr: "convsearch: error: no run 'm000' in the store; did you mean m-000, m-001?\n" });
    const far = await cli(['show', 'zzzzzz', '--db', path, '--json']);
    assert.deepEqual(far, { status: 2, stdout: '', stderr: "convsearch: error: no run 'zzzzzz' in the store\n" });
    assert.equal((await cli(['show', 'm-000', '--db', path])).status, 0);
  });

  test('runs --conversation and --parent naming what the store lacks: exit 2, did you mean', async () => {
    const conv = await cli(['runs', '--db', db, '--conversation', 'conv-X']);
    assert.deepEqual(conv, {
      status: 2,
      stdout: '',
      stderr: "convsearch: error: no conversation 'conv-X' in the store (no run has that conversation id); did you mean conv-x, conv-y?\n",
    });
    const parent = await cli(['runs', '--db', db, '--parent', 'run-a3', '--json']);
    assert.equal(parent.status, 2);
    assert.equal(parent.stdout, '');
    assert.match(parent.stderr, /^convsearch: error: no run 'run-a3' in the store; did you mean run-a1, run-a2/);
    // an id that exists but whose runs other filters drop is an empty list, not an error
    const empty = await cli(['runs', '--db', db, '--conversation', 'conv-x', '--agent', 'nobody', '--json']);
    assert.equal(empty.status, 0, empty.stderr);
    assert.deepEqual((JSON.parse(empty.stdout) as { runs: unknown[] }).runs, []);
  });
});

describe('naming the store', () => {
  test('no --db, no $CONVSEARCH_DB and no store in a default place: say how to name one, and where it looked', async () => {
    const empty = tempDir();
    const config = tempDir();
    for (const args of [['runs'], ['conversations'], ['show', 'x'], ['search', 'x', '--scope', 'all']]) {
      const r = await cli(args, { cwd: empty, env: { XDG_CONFIG_HOME: config } });
      assert.equal(r.status, 2, args.join(' '));
      assert.equal(
        r.stderr,
        'convsearch: error: no store to read: pass --db <path>, set $CONVSEARCH_DB, or put a step store in a default place; ' +
          `looked at ${join(empty, 'sessions.db')} (absent), ${join(config, 'pydantic-clai2', 'sessions.db')} (absent)\n`,
      );
    }
    // each way of naming it works
    assert.equal((await cli(['runs', '--json'], { cwd: empty, env: { CONVSEARCH_DB: db } })).status, 0);
    copyFileSync(db, join(empty, 'sessions.db'));
    assert.equal((await cli(['runs', '--json'], { cwd: empty })).status, 0);
  });

  test('--db given twice reads both stores, never a silent last-one-wins: a missing second store is an error', async () => {
    for (const args of [['runs'], ['show', 'run-a1'], ['search', 'refund', '--scope', 'all']]) {
      const r = await cli([...args, '--db', db, '--db', '/tmp/other.db']);
      assert.equal(r.status, 2, args.join(' '));
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, 'convsearch: error: /tmp/other.db: no such file\n');
    }
  });
});
