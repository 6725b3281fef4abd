import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cli } from '../helpers/cli.js';
import { addRun, addSnapshot, buildStore, userMsg } from '../helpers/stores.js';
import { buildUxStore, EVIL_RUN } from '../helpers/ux-store.js';

let db: string;
before(() => {
  db = buildUxStore();
});

interface RunsDoc {
  runs: Array<{
    run_id: string;
    messages: number;
    snapshots: number;
    interrupted_snapshots: number;
    last_step: number | null;
    parent_run_id: string | null;
  }>;
}

const runIds = async (...args: string[]): Promise<string[]> => {
  const r = await cli(['runs', '--db', db, '--json', ...args]);
  assert.equal(r.status, 0, r.stderr);
  return (JSON.parse(r.stdout) as RunsDoc).runs.map((x) => x.run_id);
};

describe('runs', () => {
  test('a table with every column, in corpus order', async () => {
    const r = await cli(['runs', '--db', db, '--color', 'never']);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[1]!, /│ run +│ conversation +│ agent +│ parent +│ started +│ snapshots +│ messages +│ last step │/);
    assert.match(r.stdout, /│ run-a2 +│ conv-x +│ billing +│ run-a1 +│ 2025-03-01 09:05:00Z +│ 1 +│ +4 │ +1 │/);
    assert.match(r.stdout, /│ run-b1 .*│ 1 \(\+1 interrupted\) +│ +2 │ +2 │/);
    assert.equal(r.stderr, '', 'into a pipe nothing is left out');
    const widths = new Set(lines.map((l) => [...l].length));
    assert.equal(widths.size, 1, 'every row of the grid has the same width');
  });

  test('filters: conversation, agent, since/until, parent tree; limit and sort', async () => {
    assert.deepEqual(await runIds(), ['run-a1', 'run-a2', 'run-b1', 'run-c1', EVIL_RUN]);
    assert.deepEqual(await runIds('--conversation', 'conv-y'), ['run-b1', 'run-c1']);
    assert.deepEqual(await runIds('--agent', 'billing'), ['run-a2', 'run-c1']);
    assert.deepEqual(await runIds('--since', '2025-03-02', '--until', '2025-03-03'), ['run-b1', 'run-c1']);
    assert.deepEqual(await runIds('--until', '2025-03-01T09:04:59Z'), ['run-a1']);
    assert.deepEqual(await runIds('--since', '2025-03-01T10:05:00+01:00'), ['run-a2', 'run-b1', 'run-c1', EVIL_RUN]);
    assert.deepEqual(await runIds('--parent', 'run-a1'), ['run-a1', 'run-a2', 'run-c1'], 'the delegate tree, transitively');
    assert.deepEqual(await runIds('--parent', 'run-a2'), ['run-a2', 'run-c1']);
    assert.deepEqual(await runIds('--limit', '2'), ['run-a1', 'run-a2']);
    assert.deepEqual(await runIds('--sort', 'messages'), ['run-a1', 'run-a2', 'run-b1', 'run-c1', EVIL_RUN]);
    assert.deepEqual(await runIds('--sort', 'messages', '--limit', '1', '--agent', 'billing'), ['run-a2']);
  });

  test('bad filter values are usage errors; an unknown --parent too (exit 2)', async () => {
    assert.equal((await cli(['runs', '--db', db, '--since', 'yesterday'])).status, 2);
    assert.equal((await cli(['runs', '--db', db, '--limit', '-1'])).status, 2);
    assert.equal((await cli(['runs', '--db', db, '--sort', 'size'])).status, 2);
    const r = await cli(['runs', '--db', db, '--parent', 'nope']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^convsearch: error: no run 'nope' in the store/);
  });

  test('snapshot counts and last step', async () => {
    const doc = JSON.parse((await cli(['runs', '--db', db, '--json'])).stdout) as RunsDoc;
    const b1 = doc.runs.find((r) => r.run_id === 'run-b1')!;
    assert.deepEqual([b1.snapshots, b1.interrupted_snapshots, b1.messages, b1.last_step], [1, 1, 2, 2]);
  });

  test('a table larger than one write (1,200 runs, ~120 KB) is written whole and in order, every line of the grid once', async () => {
    const many = buildStore((w) => {
      for (let i = 0; i < 1200; i++) {
        addRun(w, `run-${String(i).padStart(4, '0')}`, `conv-${i % 7}`, i);
        addSnapshot(w, `run-${String(i).padStart(4, '0')}`, [userMsg(`question ${i}`, i)]);
      }
    });
    const r = await cli(['runs', '--db', many, '--color', 'never']);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.length > 1 << 16, `${r.stdout.length} characters`);
    assert.ok(r.stdout.endsWith('┘\n'));
    const lines = r.stdout.slice(0, -1).split('\n');
    assert.equal(lines.length, 1200 + 4);
    assert.equal(new Set(lines.map((l) => [...l].length)).size, 1, 'every row of the grid has the same width');
    const shown = lines.slice(3, -1).map((l) => /^│ (\S+)/.exec(l)![1]);
    const json = JSON.parse((await cli(['runs', '--db', many, '--json'])).stdout) as RunsDoc;
    assert.deepEqual(
      shown,
      json.runs.map((x) => x.run_id),
    );
  });

  test('--wide is accepted and changes nothing off a terminal', async () => {
    const plain = await cli(['runs', '--db', db, '--color', 'never']);
    const wide = await cli(['runs', '--db', db, '--color', 'never', '--wide']);
    assert.equal(wide.status, 0, wide.stderr);
    assert.equal(wide.stdout, plain.stdout);
    assert.equal(wide.stderr, '');
  });
});

describe('conversations', () => {
  test('table and JSON: runs, time span, messages, agents', async () => {
    const r = await cli(['conversations', '--db', db, '--color', 'never']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /│ conv-x +│ +2 │ 2025-03-01 09:00:00Z +│ 2025-03-01 09:05:00Z +│ +10 │ support, billing +│/);
    const doc = JSON.parse((await cli(['conversations', '--db', db, '--json'])).stdout) as {
      conversations: Array<{ conversation_id: string; agents: string[] }>;
    };
    assert.deepEqual(doc.conversations.map((c) => c.conversation_id).slice(0, 2), ['conv-x', 'conv-y']);
  });
});

describe('show', () => {
  test("the run's full record, numbered, with role, time and first snapshot", async () => {
    const r = await cli(['show', 'run-a1', '--db', db, '--color', 'never']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      /^run run-a1 · conversation conv-x · agent support · started 2025-03-01 09:00:00Z · 2 snapshots · 6 messages · last step 2\n/,
    );
    assert.match(
      r.stdout,
      /\n\[3\] tool-call delete_user · 2025-03-01 09:00:\d\dZ · snapshot seq 2 step 2\n {4}Tool Call \[delete_user\]: \{"user_id": 7, "reason": "refund abuse"\}\n/,
    );
    assert.match(r.stdout, /\n\[0\] user · .* · snapshot seq 1 step 1\n/);
  });

  test('--at n -C k shows a window, with the message marked (numbers as in search hits)', async () => {
    const r = await cli(['show', 'run-a1', '--db', db, '--at', '3', '-C', '1', '--color', 'never']);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(
      [...r.stdout.matchAll(/^(..)\[(\d+)\]/gm)].map((m) => `${m[1]}${m[2]}`),
      ['  2', '> 3', '  4'],
    );
    assert.match(r.stdout, /showing \[2\]\.\.\[4\] of 6 messages around \[3\]/);
    const doc = JSON.parse((await cli(['show', 'run-a1', '--db', db, '--at', '0', '-C', '2', '--json'])).stdout) as {
      messages: Array<{ index: number }>;
      window: unknown;
    };
    assert.deepEqual(
      doc.messages.map((m) => m.index),
      [0, 1, 2],
    );
    assert.deepEqual(doc.window, { at: 0, context: 2, first: 0, last: 2 });
    assert.equal((await cli(['show', 'run-a1', '--db', db, '--at', '6'])).status, 2);
    assert.equal((await cli(['show', 'run-a1', '--db', db, '-C', '2'])).status, 2, '-C needs --at');
  });

  test('--include-interrupted lists what interrupted snapshots held, labelled as outside the record', async () => {
    const plain = await cli(['show', 'run-b1', '--db', db, '--color', 'never']);
    assert.ok(!plain.stdout.includes('xylophone'));
    const r = await cli(['show', 'run-b1', '--db', db, '--include-interrupted', '--color', 'never']);
    assert.match(
      r.stdout,
      /── interrupted snapshot seq \d+ step 2: not part of the searchable record ──\n\n\(2\) user · .*\n {4}User: And tomorrow\? Draft the xylophone plan\./,
    );
    const doc = JSON.parse((await cli(['show', 'run-b1', '--db', db, '--include-interrupted', '--json'])).stdout) as {
      interrupted: Array<{ step: number; messages: Array<{ position: number; text: string }> }>;
      messages: unknown[];
    };
    assert.equal(doc.messages.length, 2);
    assert.deepEqual(
      doc.interrupted.map((x) => [x.step, x.messages.map((m) => [m.position, m.text])]),
      [[2, [[2, 'User: And tomorrow? Draft the xylophone plan.']]]],
    );
    const search = await cli(['search', 'xylophone', '--db', db, '--scope', 'all']);
    assert.equal(search.status, 1, 'interrupted-only text is not searchable');
  });

  test('an unknown run: exit 2 and one line on stderr', async () => {
    const r = await cli(['show', 'nope', '--db', db]);
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^convsearch: error: no run 'nope' in the store\n$/);
  });
});
