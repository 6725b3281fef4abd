import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, openSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { request, toolReturnPart, userPromptPart } from '../../scripts/lib/messages.js';
import { cli, runCliAsync, type CliResult } from '../helpers/cli.js';
import { addRawSnapshot, addRun, addSnapshot, assistantMsg, at, buildStore, dumps, tempDir, userMsg } from '../helpers/stores.js';

interface Expect {
  /** The one stderr line (without the newline), or null for an empty stderr. */
  stderr: string | RegExp | null;
  status: number;
  stdout?: string | RegExp;
  /** Checks on the `--json` document of the same command (warnings carry run_id/seq/reason). */
  json?: (doc: JsonDoc) => void;
}

interface JsonDoc {
  total_messages: number;
  hits: Array<{ run_id: string; message_index: number; text: string; excerpt: Array<{ index: number; text: string }> }>;
  warnings: Array<Record<string, unknown>>;
}

interface Case extends Expect {
  name: string;
  /** Builds the input; returns the --db path. */
  setup: () => string;
  /** The command (default: `search zebra --db <db> --scope all --format tool`). */
  args?: (db: string) => string[];
}

const search = (db: string, ...extra: string[]) => ['search', 'zebra', '--db', db, '--scope', 'all', '--format', 'tool', ...extra];

/** One valid run r1 (conversation c1) with a ZEBRA message, plus whatever `extra` adds. */
function store(extra: (w: import('../../scripts/lib/store-writer.js').StepStoreWriter) => void = () => {}): string {
  return buildStore((w) => {
    addRun(w, 'r1', 'c1');
    addSnapshot(w, 'r1', [userMsg('the ZEBRA file', 1), assistantMsg('ok', 2)]);
    extra(w);
  });
}

/** A store whose run r1 has the good snapshot (seq 1) and then `text` as snapshot seq 2. */
function badSnapshot(text: unknown): () => string {
  return () => store((w) => addRawSnapshot(w, 'r1', text, { stepIndex: 2 }));
}

const GOOD =
  '[{"parts": [{"content": "the ZEBRA file", "timestamp": "2026-01-02T03:04:06Z", "part_kind": "user-prompt"}], "kind": "request"}';
const FOUND = "Found 1 match(es) for 'zebra' in 2 persisted messages:\n\n";

function skipped(reason: string | RegExp, seq = 2): Expect {
  return {
    stderr: 'convsearch: warning: skipped 1 unreadable snapshot in run r1 (seq 2; use --json for details)',
    status: 0,
    stdout: new RegExp('^' + FOUND.replace(/[()]/g, '\\$&')),
    json: (doc) => {
      assert.equal(doc.warnings.length, 1);
      const w = doc.warnings[0]!;
      assert.equal(w.kind, 'unreadable-snapshot');
      assert.equal(w.run_id, 'r1');
      assert.equal(w.seq, seq);
      if (typeof reason === 'string') assert.equal(w.reason, reason);
      else assert.match(String(w.reason), reason);
    },
  };
}

function sqlite(build: (db: Database.Database) => void): () => string {
  return () => {
    const path = join(tempDir(), 'store.db');
    const db = new Database(path);
    db.pragma('user_version = 7'); // writes the header even without tables
    build(db);
    db.close();
    return path;
  };
}

const RUNS_DDL =
  'CREATE TABLE runs (run_id TEXT PRIMARY KEY, conversation_id TEXT, parent_run_id TEXT, agent_name TEXT, metadata TEXT NOT NULL, started_at TEXT NOT NULL)';
const SNAPSHOTS_DDL =
  "CREATE TABLE snapshots (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, step_index INTEGER NOT NULL, conversation_id TEXT, parent_run_id TEXT, agent_name TEXT, timestamp TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'complete', messages TEXT NOT NULL)";

/** A multi-page store whose last page is garbage: the header and schema still read fine. */
function corruptLastPage(): string {
  const p = buildStore((w) => {
    addRun(w, 'r1', 'c1');
    for (let i = 0; i < 40; i++) addSnapshot(w, 'r1', [userMsg(`message ${i} ` + 'x'.repeat(3000), i)]);
  });
  const fd = openSync(p, 'r+');
  writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, statSync(p).size - 4096);
  closeSync(fd);
  return p;
}

const BIG = 20 * 1024 * 1024;
const bigText = 'lorem '.repeat(BIG / 6 - 10) + 'ZEBRA tail';

const CASES: Case[] = [
  // --- the path itself
  { name: 'path missing', setup: () => join(tempDir(), 'nope.db'), stderr: /^convsearch: error: \/.*\/nope\.db: no such file$/, status: 2 },
  { name: 'a directory', setup: () => tempDir(), stderr: /^convsearch: error: \/.*: is a directory, not a step store$/, status: 2 },
  {
    name: 'an empty file',
    setup: () => {
      const p = join(tempDir(), 'empty.db');
      closeSync(openSync(p, 'w'));
      return p;
    },
    stderr: /^convsearch: error: \/.*\/empty\.db: empty file, not a step store$/,
    status: 2,
  },
  {
    name: 'a text file',
    setup: () => {
      const p = join(tempDir(), 'notes.txt');
      writeFileSync(p, 'just some notes\n');
      return p;
    },
    stderr: /^convsearch: error: \/.*\/notes\.txt: not an SQLite database$/,
    status: 2,
  },
  {
    name: 'a truncated SQLite file',
    setup: () => {
      const p = buildStore((w) => {
        addRun(w, 'r1', 'c1');
        for (let i = 0; i < 40; i++) addSnapshot(w, 'r1', [userMsg(`message ${i} ` + 'x'.repeat(3000), i)]);
      });
      truncateSync(p, Math.floor(statSync(p).size / 2));
      return p;
    },
    stderr: /^convsearch: error: \/.*\/sessions\.db: .*(malformed|corrupt|disk image).*$/i,
    status: 2,
  },
  {
    name: 'a corrupt page that only a query reaches names the file (runs)',
    setup: () => corruptLastPage(),
    args: (db) => ['runs', '--db', db],
    stderr: /^convsearch: error: \/.*\/sessions\.db: database error: database disk image is malformed \(SQLITE_CORRUPT\)$/,
    status: 2,
  },
  {
    name: 'a corrupt page that only a query reaches names the file (show)',
    setup: () => corruptLastPage(),
    args: (db) => ['show', 'r1', '--db', db],
    stderr: /^convsearch: error: \/.*\/sessions\.db: database error: database disk image is malformed \(SQLITE_CORRUPT\)$/,
    status: 2,
  },
  // --- the schema
  {
    name: 'SQLite with no tables',
    setup: sqlite(() => {}),
    stderr: /^convsearch: error: \/.*\/store\.db: not a step store \(no runs or snapshots table\)$/,
    status: 2,
  },
  {
    name: 'SQLite with the wrong tables',
    setup: sqlite((db) => db.exec('CREATE TABLE notes (id INTEGER, body TEXT); ' + RUNS_DDL)),
    stderr: /^convsearch: error: \/.*\/store\.db: not a step store \(no snapshots table\)$/,
    status: 2,
  },
  {
    name: 'runs lacks a column',
    setup: sqlite((db) =>
      db.exec('CREATE TABLE runs (run_id TEXT PRIMARY KEY, conversation_id TEXT, metadata TEXT NOT NULL); ' + SNAPSHOTS_DDL),
    ),
    stderr: /^convsearch: error: \/.*\/store\.db: runs table lacks column\(s\) parent_run_id, agent_name, started_at$/,
    status: 2,
  },
  {
    name: 'snapshots lacks a column',
    setup: sqlite((db) =>
      db.exec(RUNS_DDL + '; CREATE TABLE snapshots (seq INTEGER PRIMARY KEY, run_id TEXT, step_index INTEGER, timestamp TEXT)'),
    ),
    stderr: /^convsearch: error: \/.*\/store\.db: snapshots table lacks column\(s\) messages$/,
    status: 2,
  },
  {
    name: 'a runs row with wrong types (BLOB conversation_id) fails the whole call',
    setup: () =>
      store((w) =>
        w.db.prepare("INSERT INTO runs (run_id, conversation_id, metadata, started_at) VALUES ('r2', X'00ff', '{}', '2026-01-01')").run(),
      ),
    stderr: /^convsearch: error: \/.*\/sessions\.db: runs row 2 has wrong types \(run_id "r2"\)$/,
    status: 2,
  },
  {
    name: 'a runs row with wrong types (BLOB metadata) fails the whole call',
    setup: () =>
      store((w) =>
        w.db.prepare("INSERT INTO runs (run_id, conversation_id, metadata, started_at) VALUES ('r2', 'c1', X'7b7d', '2026-01-01')").run(),
      ),
    stderr: /^convsearch: error: \/.*\/sessions\.db: runs row 2 has wrong types \(run_id "r2"\)$/,
    status: 2,
  },
  {
    name: 'a runs row with wrong types fails runs and show too',
    setup: () =>
      store((w) =>
        w.db.prepare("INSERT INTO runs (run_id, conversation_id, metadata, started_at) VALUES (X'01', 'c1', '{}', '2026-01-01')").run(),
      ),
    args: (db) => ['runs', '--db', db],
    stderr: /^convsearch: error: \/.*\/sessions\.db: runs row 2 has wrong types \(run_id ".*"\)$/,
    status: 2,
  },
  // --- snapshot rows: skipped whole, reported, the run's other snapshots still count
  { name: 'messages that are not JSON', setup: badSnapshot('not json at all'), ...skipped(/^Expecting /) },
  { name: 'messages as a BLOB', setup: badSnapshot(Buffer.from(GOOD + ']')), ...skipped('messages column holds a BLOB, not JSON text') },
  { name: 'messages as an integer', setup: badSnapshot(42), ...skipped(/not JSON text|not an array|array/i) },
  { name: 'messages not an array', setup: badSnapshot('{"parts": []}'), ...skipped(/array/i) },
  { name: 'an array of non-objects', setup: badSnapshot('[1, "two", null]'), ...skipped('message 0 is not an object') },
  {
    name: 'an unknown message kind',
    setup: badSnapshot('[{"parts": [], "kind": "memo"}]'),
    ...skipped('message 0 has unknown kind "memo"'),
  },
  { name: 'a message without kind', setup: badSnapshot('[{"parts": []}]'), ...skipped('message 0 has unknown kind null') },
  { name: 'a message without parts', setup: badSnapshot(`${GOOD}, {"kind": "response"}]`), ...skipped('message 1 has no parts list') },
  {
    name: 'a part without part_kind',
    setup: badSnapshot('[{"parts": [{"content": "x"}], "kind": "request"}]'),
    ...skipped('message 0 part 0 has no part_kind'),
  },
  {
    name: 'a text part without content',
    setup: badSnapshot(`${GOOD}, {"parts": [{"part_kind": "text"}], "kind": "response"}]`),
    ...skipped('message 1 part 0 (text): content is not a string'),
  },
  {
    name: 'a tool return whose tool_name is a number',
    setup: badSnapshot(
      '[{"parts": [{"tool_name": 5, "content": "x", "tool_call_id": "c", "part_kind": "tool-return"}], "kind": "request"}]',
    ),
    ...skipped('message 0 part 0 (tool-return): tool_name is not a string'),
  },
  {
    name: 'a user prompt whose content is a number',
    setup: badSnapshot('[{"parts": [{"content": 5, "timestamp": "2026-01-02T03:04:06Z", "part_kind": "user-prompt"}], "kind": "request"}]'),
    ...skipped('message 0 part 0 (user-prompt): content is not a string or a list'),
  },
  {
    name: 'tool-call args that are a number',
    setup: badSnapshot(
      `${GOOD}, {"parts": [{"tool_name": "t", "args": 5, "tool_call_id": "c", "part_kind": "tool-call"}], "kind": "response"}]`,
    ),
    ...skipped('message 1 part 0 (tool-call): args is not an object, a string or null'),
  },
  {
    name: 'an instruction delta with an empty id',
    setup: badSnapshot(`[{"parts": [{"id": "", "content": "x", "part_kind": "instruction-delta"}], "kind": "request"}]`),
    ...skipped('message 0 part 0 (instruction-delta): id is not a non-empty string'),
  },
  {
    name: 'a raw control character inside a string',
    setup: badSnapshot('[{"parts": [], "kind": "re\u0001quest"}]'),
    ...skipped(/^Invalid control character/),
  },
  { name: 'truncated JSON', setup: badSnapshot(GOOD), ...skipped(/./) },
  // --- media markers
  {
    name: 'a media marker pointing to a missing row',
    setup: () =>
      store((w) => {
        addSnapshot(w, 'r1', [userMsg('the ZEBRA file', 1), assistantMsg('ok', 2), userMsg('w'.repeat(70_000), 3)], { stepIndex: 2 });
        w.db.exec('DELETE FROM media');
      }),
    ...skipped(/^media row [0-9a-f]{64} is missing$/),
  },
  {
    name: 'a bad sha256 URI',
    setup: badSnapshot(
      '[{"parts": [{"timestamp": "2026-01-02T03:04:06Z", "part_kind": "user-prompt", "__harness_external_media__": true, "__harness_external_text__": true, "__harness_external_uri__": "media+sha256://XYZ"}], "kind": "request"}]',
    ),
    ...skipped('invalid sha256 digest in "media+sha256://XYZ"'),
  },
  {
    name: 'an unsupported escaped-keys format',
    setup: () =>
      store((w) => {
        const content = { part_kind: 'note', content: 'w'.repeat(70_000), __harness_external_uri__: 'mine' };
        addSnapshot(
          w,
          'r1',
          [userMsg('the ZEBRA file', 1), assistantMsg('ok', 2), request([toolReturnPart('t', content, 'c', { timestamp: at(3) })])],
          { stepIndex: 2 },
        );
        w.db.exec("UPDATE snapshots SET messages = replace(messages, 'escaped-keys-v1', 'escaped-keys-v9') WHERE seq = 2");
      }),
    ...skipped('externalized media marker has an unsupported escaped-keys format: "escaped-keys-v9"'),
  },
  // --- parts the reader does not know: rendered as nothing, counted, the snapshot is kept
  {
    name: 'an unknown part_kind',
    setup: () =>
      store((w) =>
        addRawSnapshot(
          w,
          'r1',
          dumps([
            userMsg('the ZEBRA file', 1),
            assistantMsg('ok', 2),
            request([userPromptPart('more', { timestamp: at(3) }), { part_kind: 'hologram', content: 'ZEBRA' }]),
          ]),
        ),
      ),
    stderr: 'convsearch: warning: 1 part of unknown kind "hologram" in run r1 render nothing (kept in the record)',
    status: 0,
    stdout:
      "Found 1 match(es) for 'zebra' in 3 persisted messages:\n\n[score: 0.8 | run: r1 | conversation: c1]\n[0] User: the ZEBRA file\n[1] Assistant: ok\n[2] User: more\n",
    json: (doc) => assert.deepEqual(doc.warnings, [{ kind: 'unknown-part-kind', run_id: 'r1', part_kind: 'hologram', count: 1 }]),
  },
  // --- odd but valid content
  {
    name: 'lone surrogates in strings',
    args: (db) => search(db, '-C', '0'),
    setup: badSnapshot(
      '[{"parts": [{"content": "bad \\ud800 ZEBRA \\udfff end", "timestamp": "2026-01-02T03:04:06Z", "part_kind": "user-prompt"}], "kind": "request"}]',
    ),
    stderr: null,
    status: 0,
    json: (doc) => {
      assert.deepEqual(doc.warnings, []);
      assert.deepEqual(
        doc.hits.map((h) => h.text),
        ['User: the ZEBRA file', 'User: bad \ud800 ZEBRA \udfff end'],
      );
    },
  },
  {
    name: 'a 20 MB message (externalized to media) is searchable and its excerpt clipped',
    setup: () =>
      store((w) => addSnapshot(w, 'r1', [userMsg('the ZEBRA file', 1), assistantMsg('ok', 2), userMsg(bigText, 3)], { stepIndex: 2 })),
    args: (db) => ['search', 'tail', '--db', db, '--scope', 'all', '--format', 'tool', '-C', '0'],
    stderr: null,
    status: 0,
    stdout:
      "Found 1 match(es) for 'tail' in 3 persisted messages:\n\n[score: 0.5 | run: r1 | conversation: c1]\n[2] User: ..." +
      bigText.slice(-500) +
      '\n',
  },
  {
    name: 'a 20 MB message stored inline',
    setup: () =>
      buildStore(
        (w) => {
          addRun(w, 'r1', 'c1');
          addSnapshot(w, 'r1', [userMsg('ZEBRA ' + bigText, 1)]);
        },
        { media: 'none' },
      ),
    args: (db) => ['search', 'zebra', '--db', db, '--scope', 'all', '--format', 'tool'],
    stderr: null,
    status: 0,
    stdout:
      "Found 1 match(es) for 'zebra' in 1 persisted messages:\n\n[score: 0.4 | run: r1 | conversation: c1]\n[0] User: " +
      ('ZEBRA ' + bigText).slice(0, 500) +
      '...\n',
  },
  // --- ids and queries are echoed raw
  {
    name: 'a run id with quotes, a newline and control characters',
    setup: () => store(),
    args: (db) => ['search', 'zebra', '--db', db, '--scope', 'all', '--format', 'tool', '--run', 'it\'s "x"\n\x07\x1b[31m'],
    // the reply echoes the id raw (parity); the error line escapes it
    stderr: "convsearch: error: no run 'it's \"x\" \\x07\\e[31m' in the store",
    status: 2,
    stdout: "No persisted history for run 'it's \"x\"\n\x07\x1b[31m'.\n",
  },
  {
    name: 'a stored run id with quotes, a newline and control characters is found',
    setup: () =>
      buildStore((w) => {
        addRun(w, 'r"1\'\n\x07', 'c\t1');
        addSnapshot(w, 'r"1\'\n\x07', [userMsg('the ZEBRA file', 1)]);
      }),
    args: (db) => ['search', 'zebra', '--db', db, '--conversation', 'c\t1', '--format', 'tool', '--run', 'r"1\'\n\x07'],
    stderr: null,
    status: 0,
    stdout:
      "Found 1 match(es) for 'zebra' in 1 persisted messages:\n\n[score: 0.3 | run: r\"1'\n\x07 | conversation: c\t1]\n[0] User: the ZEBRA file\n",
  },
  {
    name: 'a query with quotes, a newline and control characters',
    setup: () => store(),
    args: (db) => ['search', 'it\'s "q"\n\x1b]0;x\x07', '--db', db, '--scope', 'all', '--format', 'tool'],
    stderr: null,
    status: 1,
    stdout: "No matches for 'it's \"q\"\n\x1b]0;x\x07' in 2 persisted messages.\n",
  },
  {
    name: 'an empty conversation id is a real filter',
    setup: () =>
      buildStore((w) => {
        addRun(w, 'r-empty', '', 0);
        addRun(w, 'r-null', null, 1);
        addSnapshot(w, 'r-empty', [userMsg('the ZEBRA file', 1)]);
        addSnapshot(w, 'r-null', [userMsg('the ZEBRA file', 1)]);
      }),
    args: (db) => ['search', 'zebra', '--db', db, '--conversation', '', '--format', 'tool'],
    stderr: null,
    status: 0,
    stdout:
      "Found 1 match(es) for 'zebra' in 1 persisted messages:\n\n[score: 0.3 | run: r-empty | conversation: ]\n[0] User: the ZEBRA file\n",
  },
  // --- options (validated in the reference's order, spec §7)
  {
    name: '--max-matches -1',
    setup: () => store(),
    args: (db) => search(db, '--max-matches', '-1'),
    stderr: 'convsearch: error: max_matches must be non-negative, got -1.',
    status: 2,
  },
  {
    name: '-m -1',
    setup: () => store(),
    args: (db) => search(db, '-m', '-1'),
    stderr: 'convsearch: error: max_matches must be non-negative, got -1.',
    status: 2,
  },
  {
    name: '--context -2',
    setup: () => store(),
    args: (db) => search(db, '--context', '-2'),
    stderr: 'convsearch: error: context_lines must be non-negative, got -2.',
    status: 2,
  },
  {
    name: '--bm25-b 2',
    setup: () => store(),
    args: (db) => search(db, '--bm25-b', '2'),
    stderr: 'convsearch: error: bm25_b must be between 0.0 and 1.0, got 2.0.',
    status: 2,
  },
  {
    name: '--bm25-b nan',
    setup: () => store(),
    args: (db) => search(db, '--bm25-b', 'nan'),
    stderr: 'convsearch: error: bm25_b must be between 0.0 and 1.0, got nan.',
    status: 2,
  },
  {
    name: '--bm25-k1 nan',
    setup: () => store(),
    args: (db) => search(db, '--bm25-k1', 'nan'),
    stderr: 'convsearch: error: bm25_k1 must be a non-negative finite number, got nan.',
    status: 2,
  },
  {
    name: '--bm25-k1 -1',
    setup: () => store(),
    args: (db) => search(db, '--bm25-k1', '-1'),
    stderr: 'convsearch: error: bm25_k1 must be a non-negative finite number, got -1.0.',
    status: 2,
  },
  {
    name: '--bm25-k1 inf',
    setup: () => store(),
    args: (db) => search(db, '--bm25-k1', 'inf'),
    stderr: 'convsearch: error: bm25_k1 must be a non-negative finite number, got inf.',
    status: 2,
  },
  {
    name: 'the first failing check wins (max_matches before bm25_b)',
    setup: () => store(),
    args: (db) => search(db, '--bm25-b', '2', '-m', '-1'),
    stderr: 'convsearch: error: max_matches must be non-negative, got -1.',
    status: 2,
  },
  {
    name: '--max-matches 2.5',
    setup: () => store(),
    args: (db) => search(db, '--max-matches', '2.5'),
    stderr: /^convsearch: error: --max-matches .*integer.*2\.5/,
    status: 2,
  },
  {
    name: '--context x',
    setup: () => store(),
    args: (db) => search(db, '--context', 'x'),
    stderr: /^convsearch: error: --context .*integer/,
    status: 2,
  },
  {
    name: 'search without a scope',
    setup: () => store(),
    args: (db) => ['search', 'zebra', '--db', db],
    stderr: /^convsearch: error: .*--conversation.*--scope all.*--run/,
    status: 2,
  },
  {
    name: '--scope all --conversation x',
    setup: () => store(),
    args: (db) => ['search', 'zebra', '--db', db, '--scope', 'all', '--conversation', 'x'],
    stderr: /^convsearch: error: .*--scope all.*--conversation|^convsearch: error: .*--conversation.*--scope all/,
    status: 2,
  },
  {
    name: 'validation happens before the store is opened',
    setup: () => join(tempDir(), 'missing.db'),
    args: (db) => search(db, '-m', '-1'),
    stderr: 'convsearch: error: max_matches must be non-negative, got -1.',
    status: 2,
  },
];

function assertExpected(r: CliResult, c: Expect, label: string): void {
  assert.doesNotMatch(r.stderr, /^\s+at /m, `${label}: stack trace on stderr:\n${r.stderr}`);
  assert.equal(r.status, c.status, `${label}: exit status\nstdout: ${r.stdout.slice(0, 2000)}\nstderr: ${r.stderr}`);
  if (c.stderr === null) {
    assert.equal(r.stderr, '', `${label}: stderr`);
  } else {
    assert.ok(r.stderr.endsWith('\n'), `${label}: stderr ends with a newline: ${JSON.stringify(r.stderr)}`);
    const lines = r.stderr.slice(0, -1).split('\n');
    assert.equal(lines.length, 1, `${label}: exactly one stderr line, got ${JSON.stringify(r.stderr)}`);
    assert.match(lines[0]!, /^convsearch: (error|warning): /);
    if (typeof c.stderr === 'string') assert.equal(lines[0], c.stderr, label);
    else assert.match(lines[0]!, c.stderr, label);
  }
  if (c.stdout !== undefined) {
    if (typeof c.stdout === 'string') assert.equal(r.stdout, c.stdout, `${label}: stdout`);
    else assert.match(r.stdout, c.stdout, `${label}: stdout`);
  }
}

// in this process, one case at a time (main's answer is the process's: bin/ only writes it out); the
// corrupt-page case below keeps a process of its own, for what bin/ prints
describe('bad input: one line on stderr, the right exit status, never a stack trace', () => {
  const cache = tempDir();
  mkdirSync(cache, { recursive: true });
  const env = { XDG_CACHE_HOME: cache };
  for (const c of CASES) {
    test(c.name, async () => {
      const db = c.setup();
      const args = (c.args ?? search)(db);
      assertExpected(await cli(args, { env }), c, c.name);
      if (c.json || (c.status !== 2 && args[0] === 'search')) {
        const jsonArgs = args.filter((a, i) => a !== '--format' && args[i - 1] !== '--format').concat('--json');
        const j = await cli(jsonArgs, { env });
        assert.equal(j.status, c.status, `--json: ${j.stderr}`);
        assert.doesNotMatch(j.stderr, /^\s+at /m);
        const doc = JSON.parse(j.stdout) as JsonDoc;
        c.json?.(doc);
      }
    });
  }
});

describe('a corrupt store page met by search', () => {
  test('the search fails with the file named on its last stderr line, exit 2, no stack trace', async () => {
    const db = corruptLastPage();
    const r = await runCliAsync(search(db), { env: { XDG_CACHE_HOME: tempDir() } });
    assert.equal(r.status, 2, r.stderr);
    assert.doesNotMatch(r.stderr, /^\s+at /m);
    const lines = r.stderr.trimEnd().split('\n');
    assert.match(
      lines.at(-1)!,
      /^convsearch: error: \/.*\/sessions\.db: database error: database disk image is malformed \(SQLITE_CORRUPT\)$/,
    );
    for (const l of lines) assert.match(l, /^convsearch: (error|warning): /);
  });
});

describe('snapshot problems name the run and the seq', () => {
  test('several skipped snapshots in one run are counted on one line with their seqs', async () => {
    const db = store((w) => {
      addRawSnapshot(w, 'r1', 'nope', { stepIndex: 2 });
      addRawSnapshot(w, 'r1', '[1]', { stepIndex: 3 });
    });
    const r = await cli(search(db), { env: { XDG_CACHE_HOME: tempDir() } });
    assert.equal(r.status, 0);
    assert.equal(r.stderr, 'convsearch: warning: skipped 2 unreadable snapshots in run r1 (seq 2, 3; use --json for details)\n');
    const j = await cli([...search(db).slice(0, -2), '--json'], { env: { XDG_CACHE_HOME: tempDir() } });
    const doc = JSON.parse(j.stdout) as JsonDoc;
    assert.deepEqual(
      doc.warnings.map((w) => [w.run_id, w.seq]),
      [
        ['r1', 2],
        ['r1', 3],
      ],
    );
  });

  test('show and runs report the same warning', async () => {
    const db = badSnapshot('nope')();
    for (const args of [
      ['show', 'r1', '--db', db],
      ['runs', '--db', db],
    ]) {
      const r = await cli(args, { env: { XDG_CACHE_HOME: tempDir() } });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, /^convsearch: warning: skipped 1 unreadable snapshot in run r1 \(seq 2; use --json for details\)$/m);
      assert.doesNotMatch(r.stderr, /^\s+at /m);
    }
  });
});
