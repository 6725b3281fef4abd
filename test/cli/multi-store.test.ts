/**
 * `--db` repeated, or a directory of .db files: several stores searched as one from the command line.
 * Every hit, listing row and JSON object names its store; run ids two stores share are qualified and
 * accepted back; the index and a replay print the same bytes; the stores are never written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { simulateRun, type JsonObject, type SimResult } from '../../scripts/lib/messages.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { runCliAsync, type CliResult } from '../helpers/cli.js';
import { cliEnv, sha256File, storeDigest, tempDir } from '../helpers/hardening.js';
import { placeIndex } from '../../src/sidecar/placement.js';
import { openStoreReader } from '../../src/store/open-reader.js';
import Database from 'better-sqlite3';

const dir = tempDir('multi');
const cache = tempDir('multi-cache');
const env = cliEnv(cache);
const SET = join(dir, 'set');
mkdirSync(SET);

const T0 = Date.UTC(2025, 4, 1, 9, 0, 0) * 1000;
const text = (content: string): JsonObject => ({ content, id: null, provider_name: null, provider_details: null, part_kind: 'text' });
const SYSTEM = 'You are a careful assistant.';
const sim = (runId: string, conversationId: string, minutes: number, prompt: string, reply: string): SimResult =>
  simulateRun({
    runId,
    conversationId,
    startedAt: T0 + minutes * 60_000_000,
    systemPrompt: SYSTEM,
    prompt,
    steps: [{ parts: [text(reply)] }],
  });

function write(path: string, runs: SimResult[]): void {
  const w = new StepStoreWriter(path);
  w.writeSimulatedRuns(runs);
  w.close();
}

// x.db and y.db both hold run r1, starting with the same system prompt and user prompt
const X = join(SET, 'x.db');
const Y = join(SET, 'y.db');
write(X, [sim('r1', 'conv-1', 0, 'zebrafish tank setup', 'zebrafish reply one'), sim('rx', 'conv-1', 1, 'kestrel nest', 'kestrel reply')]);
write(Y, [sim('r1', 'conv-1', 3, 'zebrafish tank setup', 'zebrafish reply two'), sim('ry', 'conv-2', 4, 'ocelot den', 'ocelot zebrafish')]);
const before = [storeDigest(X), storeDigest(Y)];

const cli = (args: string[]): Promise<CliResult> => runCliAsync(args, { env });
const BOTH = ['--db', X, '--db', Y];

function same(a: CliResult, b: CliResult, what: string): void {
  assert.equal(a.stdout, b.stdout, `${what}: stdout`);
  assert.equal(a.stderr, b.stderr, `${what}: stderr`);
  assert.equal(a.status, b.status, `${what}: status`);
}

test('search over two stores: every hit names its store, shared run ids are qualified, nothing is lost', async () => {
  const r = await cli(['search', 'zebrafish', 'tank', '--scope', 'all', '--json', ...BOTH]);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as {
    total_messages: number;
    hits: Array<{ run_id: string; store: string; message_index: number; score: number }>;
  };
  // every store's own messages: 2 + 2 + 2 + 2 (y.db's ry keeps its own: its prompt differs)
  assert.equal(out.total_messages, 8);
  const firstPrompts = out.hits.filter((h) => h.message_index === 0 && h.run_id.endsWith(':r1'));
  assert.deepEqual(
    firstPrompts.map((h) => [h.store, h.run_id]),
    [
      [X, `${X}:r1`],
      [Y, `${Y}:r1`],
    ],
    'both stores keep r1’s first prompt',
  );
  assert.equal(firstPrompts[0]!.score, firstPrompts[1]!.score);
  for (const h of out.hits) assert.ok(h.store === X || h.store === Y);
  assert.ok(
    out.hits.some((h) => h.run_id === 'ry' && h.store === Y),
    'an id one store holds stays bare',
  );
});

test('several stores: the index and --no-index print the same bytes, in every format', async () => {
  for (const format of [
    ['--color', 'never'],
    ['--json'],
    ['--format', 'tool'],
    ['--plain'],
    ['--count-by', 'run'],
    ['--collapse', '--json'],
  ]) {
    for (const query of ['zebrafish', 'reply tank', 'ocelot kestrel']) {
      const args = ['search', query, '--scope', 'all', ...format, ...BOTH];
      same(await cli(args), await cli([...args, '--no-index']), `${query} ${format.join(' ')}`);
    }
  }
});

test('a directory of .db files is the same set of stores', async () => {
  for (const cmd of [
    ['search', 'zebrafish', '--scope', 'all', '--json'],
    ['runs', '--json'],
  ]) {
    same(await cli([...cmd, '--db', SET]), await cli([...cmd, ...BOTH]), cmd.join(' '));
  }
});

test('--run and show take a qualified id back; a bare shared id is an error that names both', async () => {
  const one = await cli(['search', 'zebrafish', '--run', `${Y}:r1`, '--plain', ...BOTH]);
  assert.equal(one.status, 0, one.stderr);
  // the run's full record as in its own store, named by its store
  const alone = await cli(['search', 'zebrafish', '--run', 'r1', '--plain', '--db', Y]);
  assert.equal(alone.stdout, 'r1:1:0.2:Assistant: zebrafish reply two\n');
  assert.equal(one.stdout, `${Y}:${alone.stdout}`);
  const bare = await cli(['search', 'zebrafish', '--run', 'r1', ...BOTH]);
  assert.equal(bare.status, 2);
  assert.equal(bare.stderr, `convsearch: error: run id 'r1' is in 2 stores: name one as ${X}:r1 or ${Y}:r1\n`);
  const shown = await cli(['show', `${X}:r1`, '--json', ...BOTH]);
  assert.equal(shown.status, 0, shown.stderr);
  const view = JSON.parse(shown.stdout) as { run: { run_id: string; store: string }; messages: Array<{ text: string }> };
  assert.deepEqual([view.run.run_id, view.run.store], [`${X}:r1`, X]);
  assert.match(JSON.stringify(view.messages), /zebrafish reply one/);
  assert.equal((await cli(['show', 'r1', ...BOTH])).status, 2);
});

test('runs over several stores: each row names its store, in started_at order', async () => {
  const r = await cli(['runs', '--json', ...BOTH]);
  assert.equal(r.status, 0, r.stderr);
  const rows = (JSON.parse(r.stdout) as { runs: Array<{ run_id: string; store: string; messages: number }> }).runs;
  assert.deepEqual(
    rows.map((x) => [x.store, x.run_id, x.messages]),
    [
      [X, `${X}:r1`, 2],
      [X, 'rx', 2],
      [Y, `${Y}:r1`, 2],
      [Y, 'ry', 2],
    ],
  );
  same(await cli(['runs', '--json', ...BOTH]), await cli(['runs', '--json', '--no-index', ...BOTH]), 'runs index/no-index');
  const table = await cli(['runs', '--color', 'never', '--wide', ...BOTH]);
  assert.match(table.stdout, /│ store\s+│ run/);
});

test('conversations over several stores: one row per conversation of each store, each naming its store', async () => {
  const r = await cli(['conversations', '--json', ...BOTH]);
  assert.equal(r.status, 0, r.stderr);
  const rows = (
    JSON.parse(r.stdout) as { conversations: Array<{ conversation_id: string; store: string; runs: number; messages: number }> }
  ).conversations;
  // conv-1 is in both stores: two rows, each counting its own store's messages (no history shared)
  assert.deepEqual(
    rows.map((c) => [c.store, c.conversation_id, c.runs, c.messages]),
    [
      [X, 'conv-1', 2, 4],
      [Y, 'conv-1', 1, 2],
      [Y, 'conv-2', 1, 2],
    ],
  );
  same(r, await cli(['conversations', '--json', '--no-index', ...BOTH]), 'conversations index/no-index');
  const most = await cli(['conversations', '--json', '--sort', 'messages', '--limit', '1', ...BOTH]);
  assert.deepEqual(
    (JSON.parse(most.stdout) as { conversations: Array<{ store: string }> }).conversations.map((c) => c.store),
    [X],
  );
  assert.match((await cli(['conversations', '--color', 'never', '--wide', ...BOTH])).stdout, /│ store\s+│ conversation/);
});

test('tools and completion read several stores too', async () => {
  const tools = await cli(['tools', '--json', ...BOTH]);
  assert.equal(tools.status, 0, tools.stderr);
  assert.deepEqual((JSON.parse(tools.stdout) as { tools: unknown[] }).tools, []);
  const words = await cli(['__complete', 'runs', ...BOTH]);
  assert.equal(words.stdout, `${X}:r1\nrx\n${Y}:r1\nry\n`);
});

test('the same store named twice is one store, answered as one --db answers', async () => {
  const args = ['search', 'zebrafish', '--scope', 'all', '--json'];
  same(await cli([...args, '--db', X, '--db', `${SET}/./x.db`]), await cli([...args, '--db', X]), 'x.db twice');
});

test('--index with several stores is refused', async () => {
  const r = await cli(['search', 'zebrafish', '--scope', 'all', '--index', join(dir, 'one.idx'), ...BOTH]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--index names one index file/);
});

test("one store's damaged index is rebuilt, and blamed on no other store", async () => {
  const args = ['search', 'zebrafish', 'reply', '--scope', 'all', '--json', ...BOTH];
  const want = await cli([...args, '--no-index']);
  assert.equal((await cli(args)).status, 0); // both indexes built
  const indexOf = (path: string): string => {
    const store = openStoreReader(path);
    try {
      const saved = process.env.XDG_CACHE_HOME;
      process.env.XDG_CACHE_HOME = cache;
      try {
        return placeIndex(store.identity, store.label, undefined).path;
      } finally {
        process.env.XDG_CACHE_HOME = saved;
      }
    } finally {
      store.close();
    }
  };
  const [xIndex, yIndex] = [indexOf(X), indexOf(Y)];
  assert.notEqual(xIndex, yIndex);
  const yBefore = sha256File(yIndex);
  const db = new Database(xIndex);
  const changed = db.prepare("UPDATE messages SET fields = replace(fields, 'e', 'f') WHERE fields LIKE '%e%'").run().changes;
  db.close();
  assert.ok(changed > 0);
  const r = await cli(args);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, want.stdout);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, /^convsearch: warning: index (.*) was damaged \(.*\); rebuilt it$/);
  assert.ok(lines[0]!.includes(xIndex), r.stderr);
  assert.equal(sha256File(yIndex), yBefore, "the other store's index is left alone");
});

test('--parent over several stores: a delegate tree stays in its store; either name of the parent works', async () => {
  const P = join(dir, 'p.db');
  const Q = join(dir, 'q.db');
  const child = (runId: string, parentRunId: string, minutes: number): SimResult =>
    simulateRun({
      runId,
      conversationId: 'conv-p',
      parentRunId,
      startedAt: T0 + minutes * 60_000_000,
      prompt: `heron task ${runId}`,
      steps: [{ parts: [text('heron done')] }],
    });
  write(P, [
    sim('p1', 'conv-p', 0, 'heron plan', 'heron delegated'),
    child('p1-c', 'p1', 1),
    sim('solo', 'conv-s', 2, 'heron solo', 'heron alone'),
    child('solo-c', 'solo', 3),
  ]);
  write(Q, [sim('p1', 'conv-q', 0, 'heron plan', 'heron elsewhere'), child('q-c', 'p1', 1)]);
  const runsOf = async (args: string[]): Promise<string[]> => {
    const r = await cli(['search', 'heron', '--scope', 'all', '-C', '0', '-m', '50', '--json', '--db', P, '--db', Q, ...args]);
    assert.equal(r.status, 0, r.stderr);
    return [...new Set((JSON.parse(r.stdout) as { hits: Array<{ run_id: string }> }).hits.map((h) => h.run_id))].sort();
  };
  assert.deepEqual(await runsOf(['--parent', `${P}:p1`]), [`${P}:p1`, 'p1-c']);
  assert.deepEqual(await runsOf(['--parent', `${Q}:p1`]), [`${Q}:p1`, 'q-c']);
  assert.deepEqual(await runsOf(['--parent', 'solo']), ['solo', 'solo-c']);
  assert.deepEqual(await runsOf(['--parent', `${P}:solo`]), ['solo', 'solo-c']);
  const listed = await cli(['runs', '--json', '--parent', `${P}:solo`, '--db', P, '--db', Q]);
  assert.equal(listed.status, 0, listed.stderr);
  const rows = (JSON.parse(listed.stdout) as { runs: Array<{ run_id: string; parent_run_id: string | null; store: string }> }).runs;
  assert.deepEqual(
    rows.map((r) => [r.store, r.run_id, r.parent_run_id]),
    [
      [P, 'solo', null],
      [P, 'solo-c', 'solo'],
    ],
  );
  const qRows = await cli(['runs', '--json', '--parent', `${Q}:p1`, '--db', P, '--db', Q]);
  assert.deepEqual(
    (JSON.parse(qRows.stdout) as { runs: Array<{ run_id: string; parent_run_id: string | null }> }).runs.map((r) => [
      r.run_id,
      r.parent_run_id,
    ]),
    [
      [`${Q}:p1`, null],
      ['q-c', `${Q}:p1`],
    ],
  );
});

test('the stores are never written', () => {
  assert.deepEqual([storeDigest(X), storeDigest(Y)], before);
  assert.deepEqual(readdirSync(SET).sort(), ['x.db', 'y.db']);
});
