import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, FIXTURES, ROOT } from '../helpers/cli.js';
import {
  checkEvents,
  checkShape,
  CONVERSATIONS_DOC,
  CONVERSATIONS_EVENTS,
  CONVERSATION_METADATA,
  EXPLAIN,
  INDEX,
  LOCATION,
  RUN_ID_DECODED,
  RUN_MATCH,
  TOOLS_DOC,
  TOOLS_EVENTS,
  RUNS_DOC,
  RUNS_EVENTS,
  SEARCH_DOC,
  SEARCH_EVENTS,
  shapeKeys,
  SHOW_DOC,
  SHOW_EVENTS,
} from '../helpers/shapes.js';
import { buildUxStore } from '../helpers/ux-store.js';

let db: string;
before(() => {
  db = buildUxStore();
});

const search = (words: string[], ...extra: string[]) => ['search', ...words, '--db', db, '--scope', 'all', ...extra];

interface HitDoc {
  run_id: string;
  message_index: number;
  score: number;
  roles: string[];
  parts: Array<{ role: string; tool_name: string | null; text: string }>;
}

describe('--json and --ndjson follow the documented schemas', () => {
  test('search --json: one document with every hit', async () => {
    const r = await cli(search(['refund', 'policy'], '--json'));
    assert.equal(r.status, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as { hits: HitDoc[]; schema_version: number; outcome: string; summary: { hits: number } };
    checkShape(doc, SEARCH_DOC);
    assert.equal(doc.schema_version, 1);
    assert.equal(doc.outcome, 'found');
    assert.equal(doc.summary.hits, doc.hits.length);
    assert.ok(doc.hits.length > 0);
    assert.equal(r.stderr, '', 'no summary line or notice besides JSON');
  });

  test('search --json without hits, with the reference notice as message', async () => {
    const r = await cli(search(['nothingmatchesthis'], '--json'));
    assert.equal(r.status, 1);
    const doc = JSON.parse(r.stdout) as { hits: unknown[]; outcome: string; message: string };
    checkShape(doc, SEARCH_DOC);
    assert.equal(doc.outcome, 'no-matches');
    assert.equal(doc.message, "No matches for 'nothingmatchesthis' in 16 persisted messages.");
    const missing = await cli(['search', 'x', '--db', db, '--run', 'no-such-run', '--json']);
    assert.equal(JSON.parse(missing.stdout).outcome, 'no-run-history');
  });

  test('search --ndjson: begin, one hit per line, end, summary; same hits as --json', async () => {
    const r = await cli(search(['refund', 'policy'], '--ndjson'));
    assert.equal(r.status, 0, r.stderr);
    const events = checkEvents(r.stdout, SEARCH_EVENTS);
    const types = events.map((e) => e.type);
    assert.equal(types[0], 'begin');
    assert.deepEqual(types.slice(-2), ['end', 'summary']);
    assert.ok(types.slice(1, -2).every((t) => t === 'hit'));
    const doc = JSON.parse((await cli(search(['refund', 'policy'], '--json'))).stdout) as { hits: unknown[] };
    assert.deepEqual(
      events.filter((e) => e.type === 'hit').map((e) => e.data),
      doc.hits,
    );
    const none = checkEvents((await cli(search(['nothingmatchesthis'], '--ndjson'))).stdout, SEARCH_EVENTS);
    assert.deepEqual(
      none.map((e) => e.type),
      ['begin', 'end', 'summary'],
    );
  });

  test('hits carry roles, timestamps, parts (tool calls with their JSON arguments)', async () => {
    const doc = JSON.parse((await cli(search(['delete_user'], '--json', '-C', '0'))).stdout) as { hits: HitDoc[] };
    const call = doc.hits.find((h) => h.roles.includes('tool-call'))!;
    assert.ok(call);
    const part = call.parts.find((p) => p.role === 'tool-call')!;
    assert.equal(part.tool_name, 'delete_user');
    assert.deepEqual(JSON.parse(part.text), { user_id: 7, reason: 'refund abuse' });
  });

  test('runs, conversations and show: --json and --ndjson', async () => {
    checkShape(JSON.parse((await cli(['runs', '--db', db, '--json'])).stdout), RUNS_DOC);
    checkEvents((await cli(['runs', '--db', db, '--ndjson', '--limit', '2'])).stdout, RUNS_EVENTS);
    checkShape(JSON.parse((await cli(['conversations', '--db', db, '--json'])).stdout), CONVERSATIONS_DOC);
    checkEvents((await cli(['conversations', '--db', db, '--ndjson'])).stdout, CONVERSATIONS_EVENTS);
    checkShape(JSON.parse((await cli(['show', 'run-a1', '--db', db, '--json'])).stdout), SHOW_DOC);
    checkShape(
      JSON.parse((await cli(['show', 'run-b1', '--db', db, '--json', '--include-interrupted', '--at', '1', '-C', '0'])).stdout),
      SHOW_DOC,
    );
    const events = checkEvents((await cli(['show', 'run-b1', '--db', db, '--ndjson', '--include-interrupted'])).stdout, SHOW_EVENTS);
    assert.deepEqual(
      events.map((e) => e.type),
      ['begin', 'message', 'message', 'interrupted', 'end'],
    );
  });

  test('every documented key appears in docs/cli.md', () => {
    const docs = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
    const shapes = [
      SEARCH_DOC,
      INDEX,
      EXPLAIN,
      LOCATION,
      RUN_MATCH,
      RUN_ID_DECODED,
      CONVERSATION_METADATA,
      TOOLS_DOC,
      ...Object.values(TOOLS_EVENTS),
      RUNS_DOC,
      CONVERSATIONS_DOC,
      SHOW_DOC,
      ...Object.values(SEARCH_EVENTS),
      ...Object.values(RUNS_EVENTS),
      ...Object.values(SHOW_EVENTS),
    ];
    for (const key of shapeKeys(shapes))
      assert.ok(docs.includes(`\`${key}\``) || docs.includes(`"${key}"`), `docs/cli.md does not mention ${key}`);
    for (const type of ['begin', 'hit', 'end', 'summary', 'run', 'conversation', 'tool', 'message', 'interrupted']) {
      assert.ok(docs.includes(`"${type}"`) || docs.includes(`\`${type}\``), `docs/cli.md does not mention event ${type}`);
    }
  });

  test('--json ranking equals --format tool ranking on the parity stores', async () => {
    const dir = join(FIXTURES, 'parity');
    const args = ['search', 'billing', 'migration', '--db', join(dir, 'small.db'), '--scope', 'all'];
    const tool = await cli([...args, '--format', 'tool']);
    const json = JSON.parse((await cli([...args, '--json'])).stdout) as { hits: Array<{ run_id: string; message_index: number }> };
    const headers = [...tool.stdout.matchAll(/^\[score: [\d.]+ \| run: (\S+)/gm)].map((m) => m[1]);
    assert.deepEqual(
      json.hits.map((h) => h.run_id),
      headers,
    );
  });
});

describe('--plain and --count', () => {
  test('--plain: one line per hit, run_id:message_index:score:text, newlines escaped', async () => {
    const r = await cli(search(['refund'], '--plain', '-C', '0', '-m', '20'));
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.split('\n').slice(0, -1);
    const doc = JSON.parse((await cli(search(['refund'], '--json', '-C', '0', '-m', '20'))).stdout) as { hits: HitDoc[] };
    assert.equal(lines.length, doc.hits.length);
    lines.forEach((line, i) => {
      const m = /^([^:]+):(\d+):(\d+\.\d):(.*)$/.exec(line);
      assert.ok(m, line);
      assert.equal(m[1], doc.hits[i]!.run_id);
      assert.equal(Number(m[2]), doc.hits[i]!.message_index);
      assert.ok(!m[4]!.includes('\n'));
    });
    const multi = await cli(search(['lookup_policy'], '--plain', '-C', '0'));
    assert.ok(multi.stdout.includes('\\nTool Call [lookup_policy]'), 'a two-part message stays on one line');
  });

  test('--count and --count-by run', async () => {
    const n = await cli(search(['refund'], '--count', '-C', '0', '-m', '50'));
    assert.equal(n.status, 0);
    const doc = JSON.parse((await cli(search(['refund'], '--json', '-C', '0', '-m', '50'))).stdout) as { hits: HitDoc[] };
    assert.equal(n.stdout, `${doc.hits.length}\n`);
    const by = await cli(search(['refund'], '--count-by', 'run', '-C', '0', '-m', '50'));
    const counts = new Map<string, number>();
    for (const h of doc.hits) counts.set(h.run_id, (counts.get(h.run_id) ?? 0) + 1);
    const lines = by.stdout.trim().split('\n');
    assert.deepEqual(new Map(lines.map((l) => [l.slice(0, l.lastIndexOf(':')), Number(l.slice(l.lastIndexOf(':') + 1))])), counts);
    assert.deepEqual(
      lines.map((l) => l.split(':')[0]),
      ['run-a1', 'run-a2', 'run-c1'].filter((r) => counts.has(r)),
      'corpus order',
    );
    const zero = await cli(search(['nothingmatchesthis'], '--count'));
    assert.equal(zero.stdout, '0\n');
    assert.equal(zero.status, 1);
  });

  test('output flags that contradict each other are a usage error', async () => {
    for (const extra of [
      ['--json', '--plain'],
      ['--ndjson', '--count'],
      ['--format', 'tool', '--json'],
      ['--expect-none', '--expect-min', '1'],
    ]) {
      const r = await cli(search(['refund'], ...extra));
      assert.equal(r.status, 2, extra.join(' '));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^convsearch: error: .+\n$/);
    }
    const same = await cli(search(['refund'], '--format', 'json', '--json'));
    assert.equal(same.status, 0, 'the same format twice is fine');
  });
});
