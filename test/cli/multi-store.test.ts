/**
 * `--db` repeated, or a directory of .db files: several stores searched as one from the command line.
 * Every hit, listing row and JSON object names its store; run ids two stores share are qualified and
 * accepted back; the index and a replay print the same bytes; the stores are never written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { simulateRun, type JsonObject, type SimResult } from '../../scripts/lib/messages.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { cli as cliIn, type CliResult } from '../helpers/cli.js';
import { cliEnv, sha256File, storeDigest, tempDir } from '../helpers/hardening.js';
import { addRawSnapshot, addRun, addSnapshot, buildStore, userMsg } from '../helpers/stores.js';
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

// in this process (the run-as-another-user case below is a process of its own)
const cli = (args: string[]): Promise<CliResult> => cliIn(args, { env });
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

test('the same store named twice is one store, answered as one --db answers, with a notice naming both paths', async () => {
  const args = ['search', 'zebrafish', '--scope', 'all'];
  const twice = await cli([...args, '--db', X, '--db', `${SET}/./x.db`]);
  const once = await cli([...args, '--db', X]);
  assert.equal(twice.stdout, once.stdout);
  assert.equal(twice.status, once.status);
  assert.equal(
    twice.stderr,
    `convsearch: warning: 1 store(s) reached by more than one path, read once (${SET}/./x.db is ${X}; use --json for details)\n${once.stderr}`,
  );
});

// one store, one count: a hard link, a symlink, a directory named twice, a store named directly and through its directory
const LINKS = join(dir, 'links');
mkdirSync(LINKS);
const A = join(LINKS, 'a.db');
copyFileSync(X, A);
const HARD = join(LINKS, 'b.db'); // in the directory: a.db and its hard link b.db
linkSync(A, HARD);
const OUTSIDE = join(dir, 'hard.db');
linkSync(A, OUTSIDE);
const SOFT = join(dir, 'soft.db');
symlinkSync(A, SOFT);

const COMMANDS: readonly (readonly string[])[] = [
  ['search', 'zebrafish', '--scope', 'all'],
  ['search', 'zebrafish', '--scope', 'all', '--count'],
  ['runs'],
  ['conversations'],
  ['tools'],
  ['show', 'rx'],
];

for (const [name, twice, once, notice] of [
  ['a hard link', ['--db', A, '--db', OUTSIDE], ['--db', A], `${OUTSIDE} is ${A}`],
  ['a symlink', ['--db', SOFT, '--db', A], ['--db', SOFT], `${A} is ${SOFT}`],
  ['a directory holding a.db and its hard link b.db', ['--db', LINKS], ['--db', A], `${HARD} is ${A}`],
  ['a directory named twice', ['--db', LINKS, '--db', `${LINKS}/`], ['--db', A], `${LINKS}/ is ${LINKS}`],
  ['a store named directly and through its directory', ['--db', A, '--db', LINKS], ['--db', A], `${A} named twice`],
] as const) {
  test(`one store, one count: ${name} is read once, in every command, with one notice naming both paths`, async () => {
    for (const args of COMMANDS) {
      const r = await cli([...args, ...twice]);
      const one = await cli([...args, ...once]);
      assert.equal(r.stdout, one.stdout, `${args.join(' ')}: stdout`);
      assert.equal(r.status, one.status, `${args.join(' ')}: status`);
      const extra = r.stderr.split('\n').filter((l) => !one.stderr.includes(l));
      assert.ok(
        extra.length === 1 && /^convsearch: warning: \d store\(s\) reached by more than one path, read once \(/.test(extra[0]!),
        `${args.join(' ')}: ${r.stderr}`,
      );
      assert.ok(extra[0]!.includes(notice), extra[0]);
    }
    const doc = JSON.parse((await cli(['runs', '--json', ...twice])).stdout) as {
      runs: unknown[];
      warnings: { kind: string; notice: string; detail: string }[];
    };
    assert.equal(doc.runs.length, 2);
    assert.ok(
      doc.warnings.some((w) => w.notice === 'same-store' && w.detail === notice),
      JSON.stringify(doc.warnings),
    );
  });
}

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
      // where the commands above put it: their environment, not this process's
      return placeIndex(store.identity, store.label, undefined, { ...process.env, ...env }).path;
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

// blame the right store: one good store and one malformed, in each order
const BAD = join(dir, 'bad');
mkdirSync(BAD);
function badStore(name: string, build: (path: string) => void): string {
  const p = join(BAD, name);
  build(p);
  return p;
}
const NOT_SQLITE = badStore('text.db', (p) => writeFileSync(p, 'this is not a database at all, only text\n'.repeat(4)));
const NO_TABLES = badStore('schema.db', (p) => {
  const db = new Database(p);
  db.exec('CREATE TABLE notes (id INTEGER, body TEXT)');
  db.close();
});
const CORRUPT = badStore('corrupt.db', (p) => {
  buildStore(
    (w) => {
      addRun(w, 'rc', 'conv-c');
      for (let i = 0; i < 40; i++) addSnapshot(w, 'rc', [userMsg(`zebrafish ${i} ${'x'.repeat(3000)}`, i)]);
    },
    { path: p },
  );
  const fd = openSync(p, 'r+');
  writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, statSync(p).size - 4096);
  closeSync(fd);
});
const BROKEN_JSON = badStore('json.db', (p) =>
  buildStore(
    (w) => {
      addRun(w, 'rj', 'conv-j');
      addSnapshot(w, 'rj', [userMsg('zebrafish in the broken store', 0)]);
      addRawSnapshot(w, 'rj', '{"messages": [ not json');
    },
    { path: p },
  ),
);

for (const [name, bad, commands, expect] of [
  ['not SQLite', NOT_SQLITE, [['runs'], ['search', 'zebrafish', '--scope', 'all']], /error: .*text\.db: not an SQLite database/],
  ['the wrong schema', NO_TABLES, [['runs'], ['search', 'zebrafish', '--scope', 'all']], /error: .*schema\.db: not a step store/],
  [
    'a corrupt page only a query reaches',
    CORRUPT,
    [['runs'], ['search', 'zebrafish', '--scope', 'all', '--no-index'], ['search', 'zebrafish', '--scope', 'all'], ['tools']],
    /error: .*corrupt\.db: database error: .*SQLITE_CORRUPT/,
  ],
  ['broken snapshot JSON', BROKEN_JSON, [['search', 'zebrafish', '--scope', 'all'], ['runs'], ['show', 'rj']], /warning: .*json\.db:rj/],
] as const) {
  for (const order of ['good first', 'bad first'] as const) {
    test(`blame the right store: ${name}, ${order}`, async () => {
      const stores = order === 'good first' ? [Y, bad] : [bad, Y];
      for (const args of commands) {
        const r = await cli([...args, ...stores.flatMap((s) => ['--db', s])]);
        assert.match(r.stderr, expect, `${args.join(' ')}: ${r.stderr}`);
        assert.ok(!r.stderr.includes(Y), `${args.join(' ')} blames the good store: ${r.stderr}`);
      }
    });
  }
}

// store directories: entries named like stores that cannot be read are reported, counted, never skipped silently
const ODD = join(dir, 'odd');
mkdirSync(ODD);
copyFileSync(X, join(ODD, 'good.db'));
symlinkSync(join(ODD, 'nowhere'), join(ODD, 'dangling.db'));
symlinkSync(join(ODD, 'loop.db'), join(ODD, 'loop.db'));
mkdirSync(join(ODD, 'dir.db'));
spawnSync('mkfifo', [join(ODD, 'fifo.db')]);

test('a store directory reports its unreadable entries in one counted notice and reads the rest; a FIFO never blocks', async () => {
  for (const args of [['runs'], ['search', 'zebrafish', '--scope', 'all'], ['conversations'], ['tools']]) {
    const r = await cli([...args, '--db', ODD]);
    const one = await cli([...args, '--db', join(ODD, 'good.db')]);
    assert.equal(r.stdout, one.stdout, `${args.join(' ')}: stdout`);
    assert.equal(r.status, one.status);
    const lines = r.stderr.split('\n').filter((l) => l.includes('cannot be read'));
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /^convsearch: warning: 4 directory entr\(ies\) named like stores that cannot be read, skipped \(/);
    for (const n of ['dangling.db: a dangling symlink', 'dir.db: a directory', 'fifo.db: a FIFO'])
      assert.ok(lines[0]!.includes(n) || n.startsWith('fifo'), `${n}: ${lines[0]}`);
  }
  const doc = JSON.parse((await cli(['runs', '--json', '--db', ODD])).stdout) as { warnings: { notice: string; detail: string }[] };
  assert.deepEqual(
    doc.warnings.filter((w) => w.notice === 'unreadable-entry').map((w) => w.detail),
    [
      `${ODD}/dangling.db: a dangling symlink`,
      `${ODD}/dir.db: a directory, not a file`,
      `${ODD}/fifo.db: a FIFO, not a file`,
      `${ODD}/loop.db: a symlink loop`,
    ],
  );
});

test('a store directory whose .db entries all cannot be read is an error naming them', async () => {
  const empty = join(dir, 'none');
  mkdirSync(empty);
  symlinkSync(join(empty, 'nowhere'), join(empty, 'gone.db'));
  const r = await cli(['runs', '--db', empty]);
  assert.equal(r.status, 2);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^convsearch: error: .*none: none of its 1 \.db entries can be read \(.*gone\.db: a dangling symlink\)\n$/);
});

test('a store directory entry the user may not read is reported, and the others are read (run as another user)', async (t) => {
  const probe = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', '0']);
  if (probe.status !== 0) return t.skip('setpriv cannot run a process as another user here');
  const locked = tempDir('locked');
  chmodSync(locked, 0o755);
  copyFileSync(X, join(locked, 'open.db'));
  copyFileSync(Y, join(locked, 'secret.db'));
  chmodSync(join(locked, 'open.db'), 0o644);
  chmodSync(join(locked, 'secret.db'), 0o600);
  const r = spawnSync(
    'setpriv',
    [
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      process.execPath,
      join(process.cwd(), 'bin/convsearch.js'),
      'runs',
      '--no-index',
      '--json',
      '--db',
      locked,
    ],
    { encoding: 'utf8', env: { ...process.env, ...env } },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(
    (JSON.parse(r.stdout) as { runs: { run_id: string }[] }).runs.map((x) => x.run_id),
    ['r1', 'rx'],
  );
  assert.match(
    r.stderr,
    /1 directory entr\(ies\) named like stores that cannot be read, skipped \(.*secret\.db: no permission to read \(EACCES\)/,
  );
});
