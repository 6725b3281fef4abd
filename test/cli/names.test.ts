/**
 * Names people recognise (docs/backends.md, "Derived run ids" and "Conversation metadata"): derived
 * `sp-` run ids decoded beside the raw id, and the harness's conversation catalog shown in
 * `conversations` and hit headers; the same answer with the index and without it.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cli } from '../helpers/cli.js';
import { sha } from '../helpers/evidence.js';
import {
  buildNamesStore,
  ESCAPES,
  HOSTILE_TITLE,
  INNER,
  LIBRARIAN,
  NAMED_TITLE,
  NOT_BASE64,
  NOT_UTF8,
  PLAIN,
  REPRODUCER,
  SNEAKY,
} from '../helpers/names-store.js';
import { checkShape, CONVERSATION_METADATA, RUN_ID_DECODED } from '../helpers/shapes.js';
import { addRun, addSnapshot, buildStore, tempDir, userMsg } from '../helpers/stores.js';
import { snapshotText, writeRun, writeSnapshot } from '../helpers/file-store.js';

let db: string;
let digest: string;
before(() => {
  db = buildNamesStore();
  digest = sha(db);
});

/** Both ways of answering: through the index (built on the first call) and by replaying the store. */
const both = async (args: string[]) => {
  const indexed = await cli([...args, '--db', db]);
  const replayed = await cli([...args, '--db', db, '--no-index']);
  assert.equal(indexed.stdout, replayed.stdout, `${args.join(' ')}: stdout differs with --no-index`);
  assert.equal(indexed.stderr, replayed.stderr, `${args.join(' ')}: stderr differs with --no-index`);
  assert.equal(indexed.status, replayed.status);
  return indexed;
};

const RAW_ESCAPE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b\u202e]/;

describe('derived run ids', () => {
  test('runs: a decoded column beside the raw id; malformed ids shown raw; hostile names escaped', async () => {
    const r = await both(['runs']);
    assert.equal(r.status, 0, r.stderr);
    const row = (id: string) => r.stdout.split('\n').find((l) => l.includes(`│ ${id} `))!;
    assert.match(r.stdout, /│ decoded run id +│/);
    assert.ok(row(LIBRARIAN).includes(`│ code_librarian/${INNER} │`), row(LIBRARIAN));
    assert.ok(row(REPRODUCER).includes('│ reproducer/r-2 '));
    assert.ok(row(SNEAKY).includes('│ lib\\u200brarian\\u202e/r-3 '), row(SNEAKY));
    for (const raw of [PLAIN, NOT_BASE64, NOT_UTF8, ESCAPES]) assert.match(row(raw), new RegExp(`│ ${raw.replace(/[*]/g, '\\*')} +│ - +│`));
    assert.doesNotMatch(r.stdout, RAW_ESCAPE);
    assert.doesNotMatch(r.stdout, /pwned/, 'a name with control characters is not decoded at all');
  });

  test('runs --json: the raw ids unchanged, the decoded agent and inner id beside them', async () => {
    const r = await both(['runs', '--json']);
    const runs = JSON.parse(r.stdout).runs as Array<Record<string, unknown>>;
    const by = new Map(runs.map((x) => [x.run_id as string, x]));
    assert.deepEqual([...by.keys()], [LIBRARIAN, REPRODUCER, PLAIN, SNEAKY, NOT_BASE64, NOT_UTF8, ESCAPES]);
    assert.deepEqual(by.get(LIBRARIAN)!.run_id_decoded, { agent: 'code_librarian', inner_run_id: INNER });
    checkShape(by.get(LIBRARIAN)!.run_id_decoded, RUN_ID_DECODED);
    assert.deepEqual(by.get(REPRODUCER)!.parent_run_id_decoded, { agent: 'code_librarian', inner_run_id: INNER });
    assert.equal(by.get(REPRODUCER)!.parent_run_id, LIBRARIAN);
    // JSON keeps exact values: the invisible characters are there, as decoded
    assert.deepEqual(by.get(SNEAKY)!.run_id_decoded, { agent: 'lib\u200brarian\u202e', inner_run_id: 'r-3' });
    for (const raw of [PLAIN, NOT_BASE64, NOT_UTF8, ESCAPES]) {
      assert.equal(by.get(raw)!.run_id_decoded, null, raw);
      assert.equal(by.get(raw)!.parent_run_id_decoded, null);
    }
  });

  test('show and hit headers name the run both ways; --plain and the tool text keep the raw id alone', async () => {
    // show replays the run: it has no index to bypass
    const show = await cli(['show', REPRODUCER, '--db', db]);
    assert.equal(show.status, 0, show.stderr);
    const head = show.stdout.split('\n')[0]!;
    assert.ok(head.startsWith(`run ${REPRODUCER} (reproducer/r-2) · conversation conv-named`), head);
    assert.ok(head.includes(`parent ${LIBRARIAN} (code_librarian/${INNER})`), head);
    const json = JSON.parse((await cli(['show', SNEAKY, '--db', db, '--json'])).stdout);
    assert.deepEqual(json.run.run_id_decoded, { agent: 'lib\u200brarian\u202e', inner_run_id: 'r-3' });
    assert.match((await cli(['show', SNEAKY, '--db', db])).stdout.split('\n')[0]!, /^run sp-\S+ \(lib\\u200brarian\\u202e\/r-3\) · /);

    const hits = await both(['search', 'refund', '--scope', 'all', '-m', '20', '-C', '0']);
    assert.ok(hits.stdout.includes(`run ${LIBRARIAN} (code_librarian/${INNER}) · conversation conv-named`));
    assert.ok(hits.stdout.includes(`run ${NOT_UTF8} · conversation conv-corrupt`));
    assert.doesNotMatch(hits.stdout, RAW_ESCAPE);
    const plain = await both(['search', 'refund', '--scope', 'all', '--plain']);
    assert.ok(plain.stdout.split('\n').some((l) => l.startsWith(`${LIBRARIAN}:`)));
    assert.doesNotMatch(plain.stdout, /code_librarian\//);
    const tool = await both(['search', 'refund', '--scope', 'all', '--format', 'tool']);
    assert.ok(tool.stdout.includes(`run: ${LIBRARIAN} | conversation: conv-named`));
    assert.doesNotMatch(tool.stdout, /title|code_librarian\//, 'the reference text is untouched');
  });

  test('several stores: an id two stores share is qualified, and still decoded (the parent too)', async () => {
    const other = buildNamesStore();
    const doc = JSON.parse((await cli(['runs', '--db', db, '--db', other, '--json'])).stdout);
    const reproducers = doc.runs.filter((x: { run_id: string }) => x.run_id.endsWith(`:${REPRODUCER}`));
    assert.equal(reproducers.length, 2);
    for (const x of reproducers) {
      assert.equal(x.run_id, `${x.store}:${REPRODUCER}`);
      assert.deepEqual(x.run_id_decoded, { agent: 'reproducer', inner_run_id: 'r-2' });
      assert.equal(x.parent_run_id, `${x.store}:${LIBRARIAN}`);
      assert.deepEqual(x.parent_run_id_decoded, { agent: 'code_librarian', inner_run_id: INNER });
    }
  });

  test('a FileStepStore: derived ids decode the same (its directory named by the id), and there is no catalog', async () => {
    const root = tempDir();
    writeRun(root, REPRODUCER, { conversationId: 'c1' });
    writeSnapshot(root, REPRODUCER, '0.json', snapshotText(REPRODUCER, 1, 'refund from a file store'));
    const doc = JSON.parse((await cli(['search', 'refund', '--db', root, '--scope', 'all', '--json'])).stdout);
    assert.equal(doc.hits[0].run_id, REPRODUCER);
    assert.deepEqual(doc.hits[0].run_id_decoded, { agent: 'reproducer', inner_run_id: 'r-2' });
    assert.equal(doc.hits[0].conversation_metadata, null);
    assert.deepEqual(doc.warnings, []);
    const conv = await cli(['conversations', '--db', root, '--json']);
    assert.equal(JSON.parse(conv.stdout).conversations[0].metadata, null);
    assert.equal(conv.stderr, '');
  });

  test('export: records carry the decoded ids (ASCII JSON), Markdown headings name them escaped', async () => {
    const json = await cli(['export', '--run', SNEAKY, '--db', db, '--format', 'jsonl']);
    assert.equal(json.status, 0, json.stderr);
    assert.ok(json.stdout.includes('"run_id_decoded":{"agent":"lib\\u200brarian\\u202e","inner_run_id":"r-3"}'), json.stdout.slice(0, 400));
    const record = JSON.parse(json.stdout);
    assert.deepEqual(record.run_id_decoded, { agent: 'lib\u200brarian\u202e', inner_run_id: 'r-3' });
    assert.equal(record.parent_run_id_decoded, null);
    const child = JSON.parse((await cli(['export', '--run', REPRODUCER, '--db', db, '--format', 'jsonl'])).stdout);
    assert.deepEqual(child.parent_run_id_decoded, { agent: 'code_librarian', inner_run_id: INNER });
    const md = (await cli(['export', '--run', SNEAKY, '--db', db, '--format', 'md'])).stdout;
    assert.ok(md.includes('- decoded run id: lib\\u200brarian\\u202e / `r-3`'), md.slice(0, 300));
    assert.doesNotMatch(md, RAW_ESCAPE);
    const raw = (await cli(['export', '--run', ESCAPES, '--db', db, '--format', 'md'])).stdout;
    assert.doesNotMatch(raw, /decoded run id|pwned/);
  });

  test('hits, locations and -l runs carry run_id_decoded in JSON', async () => {
    const doc = JSON.parse((await both(['search', 'refund', '--scope', 'all', '-m', '20', '--collapse', '--json'])).stdout);
    const hit = doc.hits.find((h: { run_id: string }) => h.run_id === LIBRARIAN);
    assert.deepEqual(hit.run_id_decoded, { agent: 'code_librarian', inner_run_id: INNER });
    assert.deepEqual(hit.locations[0].run_id_decoded, { agent: 'code_librarian', inner_run_id: INNER });
    assert.equal(doc.hits.find((h: { run_id: string }) => h.run_id === NOT_BASE64).run_id_decoded, null);
    const t = JSON.parse((await both(['search', 'refund', '--scope', 'all', '--timeline', 'run', '--json'])).stdout).timeline;
    assert.deepEqual(t.buckets[0], { run: LIBRARIAN, run_id_decoded: { agent: 'code_librarian', inner_run_id: INNER }, count: 2 });
    assert.equal(t.buckets.find((b: { run: string }) => b.run === PLAIN).run_id_decoded, null);
    const days = JSON.parse((await both(['search', 'refund', '--scope', 'all', '--timeline', '--json'])).stdout).timeline;
    assert.deepEqual(Object.keys(days.buckets[0]), ['day', 'count']);
    const l = JSON.parse((await both(['search', 'refund', '--scope', 'all', '-l', '--json'])).stdout);
    const m = l.runs.find((x: { run_id: string }) => x.run_id === REPRODUCER);
    assert.deepEqual(m.run_id_decoded, { agent: 'reproducer', inner_run_id: 'r-2' });
  });
});

describe('conversation metadata', () => {
  test('conversations: title, outcome and tags columns; a hostile title escaped; an unreadable row a counted warning', async () => {
    const r = await both(['conversations']);
    assert.equal(r.status, 0);
    const lines = r.stdout.split('\n');
    assert.match(lines[1]!, /│ conversation │ title +│ outcome +│ tags +│ runs │/);
    const row = (id: string) => lines.find((l) => l.startsWith(`│ ${id} `))!;
    assert.match(row('conv-named'), new RegExp(`│ ${NAMED_TITLE} +│ completed +│ payments, refunds +│`));
    assert.match(row('conv-plain'), /│ conv-plain +│ - +│ - +│ - +│/);
    assert.ok(row('conv-hostile').includes('│ pwn\\e[2J\\e]0;owned\\x07 title │ failed '), row('conv-hostile'));
    assert.ok(row('conv-hostile').includes('t\\u200bag'));
    assert.match(row('conv-corrupt'), /│ conv-corrupt +│ - +│ - +│ - +│/);
    assert.ok(!lines.some((l) => l.includes('conv-no-runs')), 'a catalogued conversation without runs is no row');
    assert.doesNotMatch(r.stdout, RAW_ESCAPE);
    assert.equal(
      r.stderr,
      'convsearch: warning: 1 conversation metadata row(s) that cannot be read, not shown (conversation conv-corrupt: metadata is not JSON; use --json for details)\n',
    );
  });

  test('conversations --limit: only the rows shown are read from the catalog, and only their problems told', async () => {
    const first = await both(['conversations', '--limit', '2']);
    assert.match(first.stdout, /conv-named/);
    assert.doesNotMatch(first.stdout, /conv-corrupt/);
    assert.equal(first.stderr, '', 'conv-corrupt is not listed: its row is not read');
    const last = await both(['conversations', '--reverse', '--limit', '1']);
    assert.match(last.stdout, /│ conv-corrupt /);
    assert.match(last.stderr, /1 conversation metadata row\(s\) that cannot be read/);
  });

  test('conversations --json and --ndjson: metadata or null, the unreadable row in warnings', async () => {
    const doc = JSON.parse((await both(['conversations', '--json'])).stdout);
    const by = new Map(doc.conversations.map((c: { conversation_id: string }) => [c.conversation_id, c]));
    const named = by.get('conv-named') as { metadata: unknown };
    assert.deepEqual(named.metadata, { title: NAMED_TITLE, tags: ['payments', 'refunds'], outcome: 'completed' });
    checkShape(named.metadata, CONVERSATION_METADATA);
    assert.deepEqual((by.get('conv-hostile') as { metadata: unknown }).metadata, {
      title: HOSTILE_TITLE,
      tags: ['t\u200bag'],
      outcome: 'failed',
    });
    assert.equal((by.get('conv-plain') as { metadata: unknown }).metadata, null);
    assert.equal((by.get('conv-corrupt') as { metadata: unknown }).metadata, null);
    assert.deepEqual(doc.warnings, [
      {
        kind: 'store-notice',
        notice: 'unreadable-conversation-metadata',
        run_id: null,
        seq: null,
        detail: 'conversation conv-corrupt: metadata is not JSON',
      },
    ]);
    const events = (await both(['conversations', '--ndjson'])).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      events.filter((e) => e.type === 'conversation').map((e) => e.data),
      doc.conversations,
    );
  });

  test('hit headers and hit JSON carry the conversation metadata; an unreadable row is told when a hit shows it', async () => {
    const r = await both(['search', 'refund', '--conversation', 'conv-named', '-C', '0']);
    assert.equal(r.status, 0);
    for (const header of r.stdout.split('\n').filter((l) => l.startsWith('#'))) {
      assert.ok(
        header.includes(`· conversation conv-named · title ${NAMED_TITLE} · tags payments, refunds · outcome completed · agent `),
        header,
      );
    }
    assert.doesNotMatch(r.stderr, /metadata/);
    const hostile = await both(['search', 'refund', '--conversation', 'conv-hostile', '-C', '0']);
    assert.ok(hostile.stdout.includes('title pwn\\e[2J\\e]0;owned\\x07 title · tags t\\u200bag · outcome failed'));
    assert.doesNotMatch(hostile.stdout, RAW_ESCAPE);

    const doc = JSON.parse((await both(['search', 'refund', '--scope', 'all', '-m', '20', '--json'])).stdout);
    const meta = (id: string) => doc.hits.find((h: { run_id: string }) => h.run_id === id).conversation_metadata;
    assert.deepEqual(meta(REPRODUCER), { title: NAMED_TITLE, tags: ['payments', 'refunds'], outcome: 'completed' });
    assert.equal(meta(PLAIN), null);
    assert.equal(meta(ESCAPES), null);
    assert.deepEqual(
      doc.warnings.map((w: { notice: string }) => w.notice),
      ['unreadable-conversation-metadata'],
    );
    const corrupt = await both(['search', 'refund', '--conversation', 'conv-corrupt', '-C', '0']);
    assert.match(corrupt.stderr, /1 conversation metadata row\(s\) that cannot be read, not shown \(conversation conv-corrupt/);
  });

  test('report: hit cards and transcripts name the decoded run and the conversation title, HTML-escaped', async () => {
    const out = join(tempDir(), 'report.html');
    const r = await cli(['report', 'refund', '--db', db, '--conversation', 'conv-named', '-o', out, '-q']);
    assert.equal(r.status, 0, r.stderr);
    const html = readFileSync(out, 'utf8');
    assert.ok(html.includes(`decoded code_librarian/${INNER}`));
    assert.ok(html.includes(`title ${NAMED_TITLE} (completed)`));
    assert.ok(html.includes('decoded reproducer/r-2 · conversation conv-named'), 'the transcript of the delegate');
    const hostile = join(tempDir(), 'hostile.html');
    await cli(['report', 'refund', '--db', db, '--scope', 'all', '-m', '20', '-o', hostile, '-q']);
    const text = readFileSync(hostile, 'utf8');
    assert.ok(!text.includes('pwned'), 'a name with control characters is not decoded');
    // escapeHtml's rules, as for every store text in the page: controls coded, other characters as they are
    assert.ok(text.includes('decoded lib\u200brarian\u202e/r-3'));
    assert.ok(text.includes('title pwn\\x1b[2J\\x1b]0;owned\\x07 title (failed)'));
    assert.doesNotMatch(text, /\x1b/);
  });

  test('a store without the catalog: no metadata, no warning, the tables as they were', async () => {
    const plain = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [userMsg('refund please', 0)]);
    });
    const conv = await cli(['conversations', '--db', plain]);
    assert.match(conv.stdout.split('\n')[1]!, /^│ conversation │ runs │ first started +│ last started +│ messages │ agents │$/);
    assert.equal(conv.stderr, '');
    const runs = await cli(['runs', '--db', plain]);
    assert.doesNotMatch(runs.stdout, /decoded/);
    const doc = JSON.parse((await cli(['conversations', '--db', plain, '--json'])).stdout);
    assert.equal(doc.conversations[0].metadata, null);
    assert.deepEqual(doc.warnings, []);
  });

  test('the store is evidence: unchanged, nothing written beside it', () => {
    assert.equal(sha(db), digest);
    assert.deepEqual(readdirSync(dirname(db)), ['sessions.db']);
    assert.ok(!existsSync(join(dirname(db), 'sessions.db-wal')));
  });
});
