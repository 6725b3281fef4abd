/**
 * `convsearch export`: a run's, a conversation's or a query's replayed records, checked against the
 * stores themselves. Byte preservation is judged by slicing the raw snapshot text here (a scanner of
 * this file's own, not the code under test) and the raw export text alike; replay semantics against
 * `show`; the hit runs against `search`; redaction, -o and terminal safety against real files.
 */
import { test } from 'node:test';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  request,
  response,
  retryPromptPart,
  textPart,
  thinkingPart,
  toolCallPart,
  toolReturnPart,
  userPromptPart,
  utc,
  type JsonObject,
} from '../../scripts/lib/messages.js';
import { main } from '../../src/cli/main.js';
import { exportText, NotFoundError, openSession, Redactor } from '../../src/lib.js';
import { BIN, cli, FIXTURES, runCliAsync } from '../helpers/cli.js';
import { cliEnv, sha256File, storeDigest, tempDir } from '../helpers/hardening.js';
import { addRawSnapshot, addRun, buildStore } from '../helpers/stores.js';
import type { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { buildUxStore, buildWideStore, EVIL_RUN } from '../helpers/ux-store.js';

const PARITY = join(FIXTURES, 'parity');
const SHARED = join(FIXTURES, '..', '..', '..', 'shared', 'parity');
/** The fixture stores, and the shared parity folder's when it is there (it may hold more). */
const STORES = [PARITY, ...(existsSync(SHARED) ? [SHARED] : [])].flatMap((dir) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.db'))
    .map((f) => join(dir, f)),
);
const MEDIA = join(PARITY, 'media.db');
const SMALL = join(PARITY, 'small.db');

/**
 * The top-level elements of a JSON array's text, as exact slices: a scanner of its own (strings with
 * their escapes, nesting), independent of src/py/json-scan.ts.
 */
function arrayElements(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      if (depth === 1 && start < 0) start = i;
    } else if (c === '[' || c === '{') {
      if (depth === 1 && start < 0) start = i;
      depth++;
    } else if (c === ']' || c === '}') {
      depth--;
      if (depth === 1 && start >= 0) {
        out.push(text.slice(start, i + 1));
        start = -1;
      }
    }
  }
  return out;
}

/** The raw `messages` elements of one JSON Lines record (a line of jsonl output). */
function rawMessages(line: string): string[] {
  const open = line.indexOf('"messages":[');
  assert.ok(open > 0, 'a record has messages');
  assert.ok(line.endsWith(']}'), 'messages is the record’s last field');
  return arrayElements(line.slice(open + '"messages":'.length, -1));
}

/**
 * Rows of a query on a private copy of the store: opening the store itself, even read-only, lets SQLite
 * create a -wal and -shm beside a WAL-mode file, and the fixtures are evidence too.
 */
function rows<T>(db: string, sql: string, ...params: unknown[]): T[] {
  const copy = join(tempDir('export-rows'), 'copy.db');
  copyFileSync(db, copy);
  const conn = new Database(copy, { fileMustExist: true });
  try {
    return conn.prepare(sql).all(...params) as T[];
  } finally {
    conn.close();
  }
}

function completeSnapshots(db: string, runId: string): string[][] {
  return rows<{ messages: string }>(db, "SELECT messages FROM snapshots WHERE run_id = ? AND state = 'complete' ORDER BY seq", runId).map(
    (r) => arrayElements(r.messages),
  );
}

const runIds = (db: string): string[] => rows<{ run_id: string }>(db, 'SELECT run_id FROM runs ORDER BY rowid').map((r) => r.run_id);

const jsonlLines = (stdout: string): string[] => stdout.split('\n').filter((l) => l !== '');

const T = utc('2025-06-01T10:00:00Z');

/** A store of one run (conversation `conv-<run>`) whose one complete snapshot holds `messages`; `more` adds to it. */
function oneRunStore(runId: string, messages: JsonObject[], more: (w: StepStoreWriter) => void = () => {}): string {
  return buildStore((w) => {
    addRun(w, runId, `conv-${runId}`);
    w.saveSnapshot({ runId, stepIndex: 1, state: 'complete', timestamp: T, messages });
    more(w);
  });
}

test('json and jsonl hold each message byte for byte as its complete snapshot stores it, in show’s order', async () => {
  let whole = 0;
  for (const db of STORES) {
    for (const runId of runIds(db)) {
      const where = `${db} ${runId}`;
      const r = await cli(['export', '--run', runId, '--db', db, '--format', 'jsonl', '--no-index']);
      assert.equal(r.status, 0, `${where}: ${r.stderr}`);
      const lines = jsonlLines(r.stdout);
      assert.equal(lines.length, 1, `${where}: one record per line`);
      const record = JSON.parse(lines[0]!) as { run_id: string; message_count: number; messages: unknown[] };
      const exported = rawMessages(lines[0]!);
      assert.equal(record.run_id, runId);
      assert.equal(exported.length, record.message_count);
      assert.equal(record.messages.length, exported.length, `${where}: the raw slices are the parsed elements`);
      for (const [i, m] of exported.entries()) assert.deepEqual(JSON.parse(m), record.messages[i]);

      // every message is a byte-identical element of a complete snapshot (never of an interrupted one alone)
      const snapshots = completeSnapshots(db, runId);
      for (const m of exported)
        assert.ok(
          snapshots.some((s) => s.includes(m)),
          `${where}: ${m.slice(0, 80)}… is stored as exported`,
        );
      // where the last snapshot holds the whole record (no compaction dropped any), it is that snapshot, element for element
      const last = snapshots.at(-1) ?? [];
      if (last.length === exported.length) {
        assert.deepEqual(exported, last, where);
        whole++;
      }

      // the same messages, in the same order, as show numbers and dates them (md's headings too)
      const show = await cli(['show', runId, '--db', db, '--json']);
      const shown = JSON.parse(show.stdout) as { messages: Array<{ index: number; kind: string; timestamp: string | null }> };
      const md = (await cli(['export', '--run', runId, '--db', db, '--format', 'md'])).stdout;
      const headings = [...md.matchAll(/^## \[(\d+)\] (request|response)(?: · (.*))?$/gm)].map((h) => ({
        index: Number(h[1]),
        kind: h[2],
        timestamp: h[3] ?? null,
      }));
      assert.equal(shown.messages.length, exported.length, `${where}: show's record length`);
      assert.deepEqual(
        headings,
        shown.messages.map(({ index, kind, timestamp }) => ({ index, kind, timestamp })),
        where,
      );
      for (const [i, s] of shown.messages.entries()) assert.equal((record.messages[i] as { kind: string }).kind, s.kind, `${where} [${i}]`);

      // json is the same records, an array of them
      const json = await cli(['export', '--run', runId, '--db', db]);
      assert.deepEqual(JSON.parse(json.stdout), [record]);
      assert.deepEqual(rawMessages(json.stdout.trim().slice(1, -1).trim()), exported, `${where}: json keeps the same bytes`);
    }
  }
  assert.ok(whole >= 15, `most parity runs are checked element for element (${whole})`);
  for (const db of STORES) for (const side of ['-wal', '-shm']) assert.ok(!existsSync(db + side), `no ${db}${side} left behind`);
});

test('a conversation exports its runs in corpus order; --scope all every run; jsonl parses line by line', async () => {
  const conv = await cli(['export', '--conversation', 'conv-alpha', '--db', SMALL, '--format', 'jsonl']);
  assert.equal(conv.status, 0, conv.stderr);
  const lines = jsonlLines(conv.stdout);
  assert.deepEqual(
    lines.map((l) => (JSON.parse(l) as { run_id: string }).run_id),
    ['run-alpha-1', 'run-alpha-2'],
  );
  const runs = JSON.parse((await cli(['runs', '--db', SMALL, '--json'])).stdout) as { runs: Array<{ run_id: string; messages: number }> };
  const all = jsonlLines((await cli(['export', '--scope', 'all', '--db', SMALL, '--format', 'jsonl'])).stdout).map(
    (l) => JSON.parse(l) as { run_id: string; message_count: number; conversation_id: string | null; started_at: string },
  );
  assert.deepEqual(
    all.map((r) => [r.run_id, r.message_count]),
    runs.runs.map((r) => [r.run_id, r.messages]),
    'every run, in the order and with the message counts runs lists',
  );
  const small = all.find((r) => r.run_id === 'run-alpha-1')!;
  assert.equal(small.conversation_id, 'conv-alpha');
  assert.equal(small.started_at, '2025-03-01T09:00:04+00:00');
});

test('the runs of a query are the runs of the hits search shows, in hit order, each once', async () => {
  for (const args of [['billing'], ['billing', '-m', '2'], ['migration', 'schema', '-C', '0'], ['weather', '--role', 'user']]) {
    const search = await cli(['search', ...args, '--db', SMALL, '--scope', 'all', '--json']);
    const hits = (JSON.parse(search.stdout) as { hits: Array<{ run_id: string }> }).hits.map((h) => h.run_id);
    const exported = await cli(['export', ...args, '--db', SMALL, '--format', 'jsonl']);
    assert.equal(exported.status, 0, exported.stderr);
    assert.deepEqual(
      jsonlLines(exported.stdout).map((l) => (JSON.parse(l) as { run_id: string }).run_id),
      [...new Set(hits)],
      args.join(' '),
    );
  }
  const none = await cli(['export', 'zzzznothing', '--db', SMALL]);
  assert.equal(none.status, 1);
  assert.deepEqual(JSON.parse(none.stdout), []);
});

test('an unknown run or conversation: exit 2, one line naming it; in the library a NotFoundError before any output', async () => {
  const r = await cli(['export', '--run', 'run-alpha-9', '--db', SMALL]);
  assert.equal(r.status, 2);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^convsearch: error: no run 'run-alpha-9' in the store; did you mean run-alpha-1/);
  assert.equal(r.stderr.split('\n').length, 2);
  const c = await cli(['export', '--conversation', 'conv-alfa', '--db', SMALL, '--format', 'md']);
  assert.equal(c.status, 2);
  assert.match(c.stderr, /no conversation 'conv-alfa'/);
  const session = openSession(SMALL, { index: false });
  try {
    assert.throws(() => session.exportRuns({ runId: 'nope' }), NotFoundError);
    assert.throws(() => session.exportRuns({ conversationId: 'nope' }), NotFoundError);
  } finally {
    session.close();
  }
  const none = await cli(['export', '--db', SMALL]);
  assert.equal(none.status, 2);
  assert.match(none.stderr, /export needs --run <id>, --conversation <id>, --scope all or query words/);
});

test('warnings: an unreadable snapshot is reported once, whether a query or the run named its run', async () => {
  const db = oneRunStore('run-w', [request([userPromptPart('the zeppelin report', { timestamp: T })], { timestamp: T })], (w) =>
    addRawSnapshot(w, 'run-w', '[{"parts": [', { stepIndex: 2 }),
  );
  for (const args of [['zeppelin'], ['--run', 'run-w']]) {
    const r = await cli(['export', ...args, '--db', db, '--format', 'jsonl']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { message_count: number }).message_count, 1);
    const lines = r.stderr.split('\n').filter((l) => l.includes('unreadable'));
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /skipped 1 unreadable snapshot in run run-w/, args.join(' '));
  }
});

test('the library exports without the command line: a session, its records, the printers', async () => {
  const session = openSession(MEDIA, { index: false });
  try {
    const found = session.exportRuns({ runId: 'run-media-1' });
    assert.deepEqual(
      found.runs.map((r) => r.runId),
      ['run-media-1'],
    );
    const [record] = [...found.records()];
    assert.equal(record!.messages.length, 4);
    const text = [...exportText(found.records(), { format: 'jsonl' })].join('');
    assert.deepEqual(
      rawMessages(text.trim()),
      record!.messages.map((m) => m.json),
    );
    const md = [...exportText(found.records(), { format: 'md' })].join('');
    assert.match(md, /^# Run `run-media-1`/);
  } finally {
    session.close();
  }
});

/** A store with every part a transcript marks: thinking, a retry, tool calls and returns, a system prompt. */
function transcriptStore(): string {
  const t = T;
  return oneRunStore('run-md', [
    request([userPromptPart('Rotate the database password, please.', { timestamp: t })], { timestamp: t }),
    response([thinkingPart('The user wants a rotation.\nFirst look up the secret.'), toolCallPart('lookup_secret', { name: 'db' }, 'c1')], {
      timestamp: t + 1_000_000,
    }),
    request(
      [retryPromptPart('secret name must be fully qualified', { toolName: 'lookup_secret', toolCallId: 'c1', timestamp: t + 2_000_000 })],
      {
        timestamp: t + 2_000_000,
      },
    ),
    response([toolCallPart('lookup_secret', { name: 'prod/db' }, 'c2')], { timestamp: t + 3_000_000 }),
    request([toolReturnPart('lookup_secret', 'found: prod/db (rotated 90 days ago)', 'c2', { timestamp: t + 4_000_000 })], {
      timestamp: t + 4_000_000,
    }),
    response([textPart('Rotated.')], { timestamp: t + 5_000_000 }),
  ]);
}

test('md: role headings, timestamps, tool calls with arguments, returns, retries, thinking marked, media noted by type and size', async () => {
  const md = await cli(['export', '--run', 'run-md', '--db', transcriptStore(), '--format', 'md']);
  assert.equal(md.status, 0, md.stderr);
  const out = md.stdout;
  for (const needle of [
    '# Run `run-md`',
    '- conversation: `conv-run-md`',
    '## [0] request · 2025-06-01T10:00:00Z',
    '### User\n\nRotate the database password, please.',
    '### Thinking *(model reasoning)*\n\n> The user wants a rotation.\n> First look up the secret.',
    '### Tool call `lookup_secret` · c1\n\n```json\n{"name": "db"}\n```',
    '### Retry `lookup_secret` · c1\n\n```\nsecret name must be fully qualified\n```',
    '### Tool return `lookup_secret` · c2\n\n```\nfound: prod/db (rotated 90 days ago)\n```',
    '## [5] response · 2025-06-01T10:00:05Z\n\n### Assistant\n\nRotated.',
  ])
    assert.ok(out.includes(needle), `${JSON.stringify(needle)} in\n${out}`);

  // media (externalized in the store, restored for the transcript): type and size, never the bytes
  const media = (await cli(['export', '--run', 'run-media-1', '--db', MEDIA, '--format', 'md'])).stdout;
  const notes = [...media.matchAll(/\*\[binary: image\/png, (\d+) bytes\]\*/g)].map((m) => Number(m[1]));
  assert.equal(notes.length, 2, media.slice(0, 600));
  const sizes = rows<{ size_bytes: number }>(MEDIA, 'SELECT size_bytes FROM media').map((r) => r.size_bytes);
  for (const n of notes) assert.ok(sizes.includes(n) || n < 65536, `${n} bytes is a stored media size (or inline, under the threshold)`);
  assert.ok(
    notes.some((n) => sizes.includes(n)),
    'an externalized image is measured from its stored bytes',
  );
  assert.ok(!/[A-Za-z0-9+/]{200}/.test(media), 'no base64 in the transcript');
});

test('store text never reaches a terminal raw: md escapes it always, JSON on a terminal as \\u escapes', async () => {
  const db = buildUxStore();
  const md = await cli(['export', '--run', EVIL_RUN, '--db', db, '--format', 'md']);
  assert.equal(md.status, 0, md.stderr);
  assert.ok(!md.stdout.includes('\x1b') && !md.stdout.includes('\x07') && !md.stdout.includes('\r') && !md.stdout.includes('\b'));
  assert.ok(md.stdout.includes('\\e]0;pwned\\x07'), 'the window-title sequence shows as text');
  assert.ok(md.stdout.includes('# Run `run-evil\\e[2J`'), 'ids escaped in headings');

  // odd characters stored raw (a writer other than Python's json.dumps): C1 CSI, bidi override, non-ASCII
  const raw = '[{"parts": [{"content": "csi \u009b2J rlo \u202e \u00e9 raw é \\ud800", "part_kind": "user-prompt"}], "kind": "request"}]';
  const odd = buildStore((w) => {
    addRun(w, 'run-odd', 'conv-odd');
    addRawSnapshot(w, 'run-odd', raw);
  });
  const piped = await cli(['export', '--run', 'run-odd', '--db', odd, '--format', 'jsonl']);
  assert.equal(piped.status, 0, piped.stderr);
  assert.deepEqual(rawMessages(piped.stdout.trim()), arrayElements(raw), 'into a pipe: the stored characters');
  let tty = '';
  const status = await main(['node', 'convsearch', 'export', '--run', 'run-odd', '--db', odd, '--format', 'jsonl'], {
    stdout: { write: (s: string) => void (tty += s), isTTY: true, columns: 80 },
    stderr: { write: () => {} },
    env: { XDG_CACHE_HOME: tempDir('export-tty-cache') },
    cwd: tempDir('export-tty-cwd'),
    readStdin: () => '',
  });
  assert.equal(status, 0);
  assert.ok(!/[\u0080-\u009f\u202a-\u202e]/.test(tty), 'no C1 control or bidi override raw on a terminal');
  assert.deepEqual(JSON.parse(tty), JSON.parse(piped.stdout), 'the same values, still valid JSON');
});

test('redaction changes string values only: a pattern matching "content" or ":" keeps every key and the JSON valid', async () => {
  const plain = jsonlLines((await cli(['export', '--run', 'run-alpha-2', '--db', SMALL, '--format', 'jsonl'])).stdout);
  const keysOf = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(keysOf) : v && typeof v === 'object' ? Object.entries(v).map(([k, x]) => [k, keysOf(x)]) : typeof v;
  // "content" (with its quotes) and part_kind are only ever keys here, and a backslash only ever part of
  // an escape (the values hold none): nothing to redact, the bytes unchanged
  const untouched = ['"content"', 'part_kind', '\\\\'];
  for (const pattern of [...untouched, ':', 'bil{1,2}ing', '"', 'run-alpha-2', 'billing']) {
    const r = await cli(['export', '--run', 'run-alpha-2', '--db', SMALL, '--format', 'jsonl', '--redact', pattern]);
    assert.equal(r.status, 0, r.stderr);
    const lines = jsonlLines(r.stdout);
    assert.equal(lines.length, 1);
    const redacted = JSON.parse(lines[0]!) as Record<string, unknown>;
    const original = JSON.parse(plain[0]!) as Record<string, unknown>;
    // the same keys everywhere, and every value of the same type (a string stays a string)
    assert.deepEqual(keysOf(redacted), keysOf(original), pattern);
    // the count on stderr is the number of marks in the output (a value never holds the mark before)
    const count = Number(/redacted (\d+) match/.exec(r.stderr)?.[1]);
    assert.equal(count, lines[0]!.split('[redacted]').length - 1, `${pattern}: ${r.stderr}`);
    if (untouched.includes(pattern)) assert.deepEqual([count, lines[0]], [0, plain[0]], pattern);
    else assert.ok(count > 0, pattern);
  }
  const colon = JSON.parse(
    jsonlLines((await cli(['export', '--run', 'run-alpha-2', '--db', SMALL, '--format', 'jsonl', '--redact', ':'])).stdout)[0]!,
  );
  assert.match(colon.started_at, /^2025-03-01T09\[redacted\]01\[redacted\]10/);
  assert.equal(colon.messages[0].kind, 'request', 'untouched values stay');

  // md: the same count goes to stderr
  const md = await cli(['export', '--run', 'run-alpha-2', '--db', SMALL, '--format', 'md', '--redact', 'billing']);
  assert.match(md.stderr, new RegExp(`redacted ${md.stdout.split('[redacted]').length - 1} match`));
  assert.ok(!md.stdout.includes('billing'));
});

test('--redact-preset secrets: an API key, a bearer token, a URL password and an e-mail address', async () => {
  const secrets = {
    key: 'sk-proj-Abc123Def456Ghi789Jkl0',
    token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    password: 'hunter2-Secret',
    email: 'alice.ops@example.com',
  };
  const text = `key ${secrets.key}; curl -H "Authorization: Bearer ${secrets.token}" postgres://admin:${secrets.password}@db.internal:5432/app, mail ${secrets.email}`;
  const db = oneRunStore('run-s', [
    request([userPromptPart(text, { timestamp: T })], { timestamp: T }),
    response([toolCallPart('psql', { dsn: text }, 'c1')], { timestamp: T }),
  ]);
  for (const format of ['json', 'jsonl', 'md']) {
    const r = await cli(['export', '--run', 'run-s', '--db', db, '--format', format, '--redact-preset', 'secrets']);
    assert.equal(r.status, 0, r.stderr);
    for (const [what, secret] of Object.entries(secrets)) assert.ok(!r.stdout.includes(secret), `${format}: the ${what} is gone`);
    assert.ok(r.stdout.includes('Bearer [redacted]'), format);
    assert.ok(r.stdout.includes('postgres://admin:[redacted]@db.internal:5432/app'), format);
    assert.match(r.stderr, /^convsearch: redacted 8 matches$/m, format); // four secrets, in the prompt and in the arguments
    if (format !== 'md') JSON.parse(r.stdout);
  }
});

test('a bad --redact pattern or preset: one line on stderr, exit 2, nothing written', async () => {
  for (const [flag, value, message] of [
    ['--redact', '(', /bad --redact pattern: .*Unterminated group/],
    ['--redact', 'x*', /matches the empty string/],
    ['--redact-preset', 'nope', /nope/],
  ] as const) {
    const r = await cli(['export', '--run', 'run-alpha-1', '--db', SMALL, flag, value]);
    assert.equal(r.status, 2, `${value}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});

test('-o never writes over a store, its side files, a link to one, or inside a store directory; the stores stay byte-identical', async () => {
  const dir = tempDir('export-o');
  const db = join(dir, 'sessions.db');
  copyFileSync(SMALL, db);
  const other = join(dir, 'other.db');
  copyFileSync(MEDIA, other);
  symlinkSync(db, join(dir, 'link.db'));
  linkSync(db, join(dir, 'hard.db'));
  const fileStore = join(dir, 'filestore');
  mkdirSync(fileStore);
  writeFileSync(`${db}-wal`, '');
  const before = { db: storeDigest(db), other: sha256File(other) };
  for (const [out, dbs] of [
    [db, [db]],
    [`${db}-wal`, [db]],
    [join(dir, 'link.db'), [db]],
    [join(dir, 'hard.db'), [db]],
    [other, [db, other]], // the second --db
    [join(dir, '.', 'sessions.db'), [db]],
  ] as const) {
    const r = await cli(['export', '--run', 'run-alpha-1', ...dbs.flatMap((d) => ['--db', d]), '-o', out]);
    assert.equal(r.status, 2, `${out}: ${r.stderr}`);
    assert.match(r.stderr, /^convsearch: error: refusing to write .*: it is the store/);
  }
  // a FileStepStore directory: nothing inside it
  const fixture = join(FIXTURES, 'backends', 'file', 'small');
  const r = await cli(['export', '--run', 'run-alpha-1', '--db', fixture, '-o', join(fixture, 'export.json')]);
  assert.equal(r.status, 2, r.stderr);
  assert.ok(!existsSync(join(fixture, 'export.json')));
  assert.deepEqual({ db: storeDigest(db), other: sha256File(other) }, before);
  assert.deepEqual(readdirSync(dir).sort(), ['filestore', 'hard.db', 'link.db', 'other.db', 'sessions.db', 'sessions.db-wal']);

  // a directory, or a missing one: one line, nothing written
  for (const [out, why] of [
    [dir, /cannot write .*: it is a directory$/m],
    [join(dir, 'missing', 'x.json'), /cannot write .*: no such directory$/m],
  ] as const) {
    const bad = await cli(['export', '--run', 'run-alpha-1', '--db', db, '-o', out]);
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr, why);
  }
  // an ordinary file beside the store is fine, and replaced whole
  const ok = join(dir, 'run.json');
  writeFileSync(ok, 'old contents');
  const w = await cli(['export', '--run', 'run-alpha-1', '--db', db, '-o', ok]);
  assert.equal(w.status, 0, w.stderr);
  assert.match(w.stderr, /wrote .*run\.json: 1 run, \d+ bytes/);
  assert.equal(JSON.parse(readFileSync(ok, 'utf8'))[0].run_id, 'run-alpha-1');
  assert.deepEqual(storeDigest(db), before.db);
});

test('-o writes atomically: several processes at once, each output whole, no temporary file left', async () => {
  const dir = tempDir('export-par');
  const cache = tempDir('export-par-cache');
  const runs = runIds(SMALL);
  const expected = await Promise.all(runs.map(async (id) => (await cli(['export', '--run', id, '--db', SMALL, '--format', 'md'])).stdout));
  // every run to its own file, and all of them to one shared file, at once
  const shared = join(dir, 'shared.md');
  const jobs = runs.flatMap((id) => [
    runCliAsync(['export', '--run', id, '--db', SMALL, '--format', 'md', '-o', join(dir, `${id}.md`)], { env: cliEnv(cache) }),
    runCliAsync(['export', '--run', id, '--db', SMALL, '--format', 'md', '-o', shared], { env: cliEnv(cache) }),
  ]);
  for (const r of await Promise.all(jobs)) assert.equal(r.status, 0, r.stderr);
  for (const [i, id] of runs.entries()) assert.equal(readFileSync(join(dir, `${id}.md`), 'utf8'), expected[i], id);
  assert.ok(expected.includes(readFileSync(shared, 'utf8')), 'the shared file is one whole export, never a mix');
  assert.deepEqual(readdirSync(dir).sort(), [...runs.map((id) => `${id}.md`), 'shared.md'].sort(), 'no temporary files');
});

test('-o killed part way: the target is the old file or a whole export, never a part; the next export removes what a kill left', async () => {
  const db = buildWideStore(300, 40, 'needle', join(tempDir('export-kill'), 'wide.db'));
  const dir = tempDir('export-kill-out');
  const cache = tempDir('export-kill-cache');
  const out = join(dir, 'out.md');
  const whole = (await cli(['export', '--conversation', 'conv-wide', '--db', db, '--format', 'md'])).stdout;
  let killedMidway = 0;
  for (const [signal, delay] of [
    ['SIGTERM', 150],
    ['SIGINT', 300],
    ['SIGKILL', 450],
    ['SIGKILL', 600],
    ['SIGTERM', 900],
  ] as const) {
    writeFileSync(out, 'old');
    const child = spawn(process.execPath, [BIN, 'export', '--conversation', 'conv-wide', '--db', db, '--format', 'md', '-o', out], {
      env: { ...process.env, XDG_CACHE_HOME: cache },
      stdio: 'ignore',
    });
    const exited = once(child, 'exit');
    await Promise.race([sleep(delay), exited]);
    child.kill(signal);
    await exited;
    const now = readFileSync(out, 'utf8');
    assert.ok(now === 'old' || now === whole, `${signal} after ${delay} ms: ${now.length} bytes`);
    if (readdirSync(dir).length > 1) killedMidway++;
  }
  // and one kill while the temporary file is being written (polled: a fast machine beats every delay above)
  for (const f of readdirSync(dir)) if (f !== 'out.md') unlinkSync(join(dir, f));
  writeFileSync(out, 'old');
  const child = spawn(process.execPath, [BIN, 'export', '--conversation', 'conv-wide', '--db', db, '--format', 'md', '-o', out], {
    env: { ...process.env, XDG_CACHE_HOME: cache },
    stdio: 'ignore',
  });
  const exited = once(child, 'exit');
  let ended = false;
  void exited.then(() => {
    ended = true;
  });
  while (!ended && readdirSync(dir).length < 2) await sleep(1);
  child.kill('SIGKILL');
  await exited;
  assert.equal(readFileSync(out, 'utf8'), 'old', 'killed while writing: the target is untouched');
  assert.equal(readdirSync(dir).length, 2, 'the killed export left its temporary file');
  killedMidway++;
  // a finished export replaces the target and removes the temporary files of the killed ones
  const done = await runCliAsync(['export', '--conversation', 'conv-wide', '--db', db, '--format', 'md', '-o', out], {
    env: cliEnv(cache),
  });
  assert.equal(done.status, 0, done.stderr);
  assert.equal(readFileSync(out, 'utf8'), whole);
  assert.deepEqual(readdirSync(dir), ['out.md'], `no temporary file left (${killedMidway} kills left one)`);
});

test('standard output is spooled outside the store directory, even with TMPDIR there', async () => {
  const dir = tempDir('export-spool');
  const db = buildWideStore(300, 40, 'needle', join(dir, 'wide.db'));
  const cache = tempDir('export-spool-cache');
  const spools = (): string[] =>
    ['/var/tmp', '/tmp'].flatMap((d) =>
      readdirSync(d)
        .filter((f) => f.startsWith('.export.convsearch-'))
        .map((f) => join(d, f)),
    );
  // killed while its spool exists (polled, not a fixed delay: a fast machine finishes before any delay)
  for (let round = 0; round < 3; round++) {
    const child = spawn(process.execPath, [BIN, 'export', '--conversation', 'conv-wide', '--db', db, '--format', 'md'], {
      env: { ...process.env, XDG_CACHE_HOME: cache, TMPDIR: dir },
      stdio: 'ignore',
    });
    const exited = once(child, 'exit');
    let done = false;
    void exited.then(() => {
      done = true;
    });
    const mine = (): string[] => spools().filter((f) => f.includes(`-${child.pid}-`));
    let seen: string[] = [];
    while (!done && seen.length === 0) {
      seen = mine();
      if (seen.length === 0) await sleep(1);
    }
    assert.deepEqual(readdirSync(dir), ['wide.db'], `the spool is not beside the store (round ${round})`);
    child.kill('SIGKILL');
    await exited;
    assert.equal(seen.length, 1, `the export spooled elsewhere (round ${round})`);
    assert.deepEqual(readdirSync(dir), ['wide.db'], `nothing beside the store after the kill (round ${round})`);
    // the next export removes a dead process's spool (a concurrent test's may have already)
    for (const f of mine()) unlinkSync(f);
  }
});

test('several stores (--db twice): records name their store, shared run ids are qualified and accepted back', async () => {
  const dir = tempDir('export-multi');
  const a = join(dir, 'a.db');
  const b = join(dir, 'b.db');
  copyFileSync(SMALL, a);
  copyFileSync(SMALL, b);
  const both = ['--db', a, '--db', b];
  const bare = await cli(['export', '--run', 'run-alpha-1', ...both]);
  assert.equal(bare.status, 2);
  assert.match(bare.stderr, /is in 2 stores/);
  const q = await cli(['export', '--run', `${b}:run-alpha-1`, ...both, '--format', 'jsonl']);
  assert.equal(q.status, 0, q.stderr);
  const rec = JSON.parse(q.stdout) as { run_id: string; store: string };
  assert.equal(rec.run_id, `${b}:run-alpha-1`);
  assert.equal(rec.store, b);
  const single = jsonlLines((await cli(['export', '--run', 'run-alpha-1', '--db', SMALL, '--format', 'jsonl'])).stdout)[0]!;
  assert.deepEqual(rawMessages(q.stdout.trim()), rawMessages(single), 'the same stored bytes');
  const all = jsonlLines((await cli(['export', '--scope', 'all', ...both, '--format', 'jsonl'])).stdout).map(
    (l) => JSON.parse(l) as { store: string },
  );
  assert.equal(all.length, 2 * runIds(SMALL).length);
  assert.deepEqual([...new Set(all.map((r) => r.store))].sort(), [a, b].sort());
  const hits = await cli(['export', 'billing', ...both, '--format', 'jsonl']);
  const search = JSON.parse((await cli(['search', 'billing', ...both, '--scope', 'all', '--json'])).stdout) as {
    hits: Array<{ run_id: string }>;
  };
  assert.deepEqual(
    jsonlLines(hits.stdout).map((l) => (JSON.parse(l) as { run_id: string }).run_id),
    [...new Set(search.hits.map((h) => h.run_id))],
  );
});

test('Redactor: patterns apply to what earlier ones left, each match counted once; keys never change', () => {
  const r = new Redactor(['[a-z]+'], ['secrets']);
  assert.equal(r.text('mail bob@example.com now'), '[redacted] [redacted] [redacted]');
  assert.equal(r.count, 3, 'the e-mail is one match, and the mark is not matched again');
  const j = new Redactor(['kind']);
  assert.equal(
    j.json('{"kind": "kind", "x": ["kind", 1, {"kind": null}]}'),
    '{"kind": "[redacted]", "x": ["[redacted]", 1, {"kind": null}]}',
  );
  assert.equal(j.count, 2);
  const u = new Redactor(['secret']);
  assert.equal(u.json('{"a": "caf\\u00e9 secret \\u001b"}'), '{"a": "caf\\u00e9 [redacted] \\u001b"}', 'rewritten as json.dumps writes it');
});
