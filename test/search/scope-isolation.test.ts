/**
 * Scope isolation (issue #5): under `--conversation X`, nothing of another conversation may show —
 * no excerpt, count, total, run id or warning — in any output format, with or without the index; an
 * out-of-scope `--run` answers exactly like a run that does not exist; and all SQL uses bound parameters.
 *
 * Method: a mixed store holds conversations A and B (B's first run forked A's history through
 * message_history). Two more stores hold only A's runs and only B's runs, written from the same
 * simulated rows. A scoped search of the mixed store must be byte-identical (stdout, stderr, exit status)
 * to the same search of the single-conversation store: that proves no leak of counts or attribution,
 * and in the B-only store A's inherited messages are plainly B's own.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join, relative } from 'node:path';

import { simulateRun, type JsonObject, type SimResult } from '../../scripts/lib/messages.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { ROOT, cli, type CliResult } from '../helpers/cli.js';
import { cliEnv, storeDigest, tempDir } from '../helpers/hardening.js';

const dir = tempDir('scope');
const cache = tempDir('scope-cache');
const env = cliEnv(cache);

// ---------------------------------------------------------------------------------------------
// the stores

const T0 = Date.UTC(2025, 4, 1, 9, 0, 0) * 1000;

function sims(): { a: SimResult[]; b: SimResult[] } {
  const a1 = simulateRun({
    runId: 'run-A1',
    conversationId: 'conv-A',
    startedAt: T0,
    systemPrompt: 'You help with aquarium questions.',
    prompt: 'alphaword: tell me about zebrafish sharedword',
    steps: [
      {
        parts: [
          {
            tool_name: 'lookup',
            args: { q: 'zebrafish alphaword' },
            tool_call_id: 'call-a1',
            tool_kind: null,
            id: null,
            provider_name: null,
            provider_details: null,
            part_kind: 'tool-call',
          },
        ],
        results: [{ content: 'zebrafish facts: alphaword sharedword stripes' }],
      },
      {
        parts: [
          { content: 'zebrafish answer alphaword sharedword', id: null, provider_name: null, provider_details: null, part_kind: 'text' },
        ],
      },
    ],
  });
  // B forks A's history: its first run's record starts with A1's messages
  const b1 = simulateRun({
    runId: 'run-B1',
    conversationId: 'conv-B',
    startedAt: T0 + 100_000_000,
    history: a1.messages as JsonObject[],
    prompt: 'betaword: what about the gazelle sharedword',
    steps: [
      {
        parts: [
          { content: 'gazelle answer betaword sharedword', id: null, provider_name: null, provider_details: null, part_kind: 'text' },
        ],
      },
    ],
  });
  const a2 = simulateRun({
    runId: 'run-A2',
    conversationId: 'conv-A',
    startedAt: T0 + 200_000_000,
    history: a1.messages as JsonObject[],
    prompt: 'alphafollow kestrel sharedword',
    steps: [
      {
        parts: [
          { content: 'kestrel reply alphafollow zebrafish', id: null, provider_name: null, provider_details: null, part_kind: 'text' },
        ],
      },
    ],
  });
  const b2 = simulateRun({
    runId: 'run-B2',
    conversationId: 'conv-B',
    startedAt: T0 + 300_000_000,
    history: b1.messages as JsonObject[],
    prompt: 'betafollow ocelot sharedword zebrafish',
    steps: [
      {
        parts: [
          { content: 'ocelot reply betafollow', id: null, provider_name: null, provider_details: null, part_kind: 'text' },
          // a part kind no pydantic-ai defines: counted in a warning that names run-B2
          { content: 'betasecret', part_kind: 'mystery-kind' },
        ],
      },
    ],
  });
  return { a: [a1, a2], b: [b1, b2] };
}

function writeStore(path: string, runs: SimResult[]): void {
  const w = new StepStoreWriter(path);
  w.writeSimulatedRuns(runs);
  // an unreadable snapshot of run-B2: a warning on stderr that must never show under conv-A
  w.db
    .prepare(
      "INSERT INTO snapshots (run_id, step_index, conversation_id, timestamp, state, messages) VALUES ('run-B2', 9, 'conv-B', '2025-05-01T10:00:00+00:00', 'complete', ?)",
    )
    .run('[{"kind": "request", "parts": [ betasecret');
  w.close();
}

/**
 * The mixed store with one conversation's rows deleted: everything else (snapshot seq numbers, run rowids)
 * stays as it was, so a scoped search must answer byte for byte the same on both.
 */
function without(path: string, from: string, conversation: string): void {
  copyFileSync(from, path);
  const db = new Database(path);
  for (const table of ['snapshots', 'events', 'tool_effects']) {
    db.prepare(`DELETE FROM ${table} WHERE run_id IN (SELECT run_id FROM runs WHERE conversation_id = ?)`).run(conversation);
  }
  db.prepare('DELETE FROM runs WHERE conversation_id = ?').run(conversation);
  db.close();
}

const { a, b } = sims();
const MIXED = join(dir, 'mixed.db');
const A_ONLY = join(dir, 'a-only.db');
const B_ONLY = join(dir, 'b-only.db');
writeStore(MIXED, [...a, ...b]);
without(A_ONLY, MIXED, 'conv-B');
without(B_ONLY, MIXED, 'conv-A');
const mixedDigest = storeDigest(MIXED);

const FORMATS: Array<[string, string[]]> = [
  ['tool', ['--format', 'tool']],
  ['human', ['--color', 'never']],
  ['json', ['--json']],
];
const INDEX_MODES: Array<[string, string[]]> = [
  ['index', []],
  ['no-index', ['--no-index']],
];
const QUERIES = ['zebrafish', 'gazelle sharedword', 'kestrel ocelot', 'alphaword betaword', 'betafollow alphafollow', 'betasecret stripes'];

/** Run CLI invocations with bounded parallelism (2 cores). */
async function runAll(jobs: Array<() => Promise<void>>, width = 3): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }),
  );
}

function search(db: string, args: string[]): Promise<CliResult> {
  return cli(['search', ...args, '--db', db], { env });
}

function assertSame(actual: CliResult, expected: CliResult, what: string): void {
  assert.equal(actual.stdout, expected.stdout, `${what}: stdout differs`);
  assert.equal(actual.stderr, expected.stderr, `${what}: stderr differs`);
  assert.equal(actual.status, expected.status, `${what}: exit status differs`);
}

/** Output with the did-you-mean parts (stderr line, JSON `suggestions` and `message`) taken out. */
function withoutSuggestions(s: string): string {
  return s
    .replace(/; did you mean [^\n"]*/g, '')
    .replace(/"suggestions": \[[^\]]*\]/g, '"suggestions": []')
    .replace(/\\"suggestions\\":\[[^\]]*\]/g, '');
}

function assertAbsent(r: CliResult, forbidden: readonly string[], what: string): void {
  for (const f of forbidden) {
    assert.ok(!r.stdout.includes(f), `${what}: stdout shows ${JSON.stringify(f)}:\n${r.stdout}`);
    assert.ok(!r.stderr.includes(f), `${what}: stderr shows ${JSON.stringify(f)}:\n${r.stderr}`);
  }
}

// What must never appear under each scope. B's record holds A1's messages (inherited), so A1's words may
// appear under conv-B, but only as B's own: attributed to B's runs, never with A's run ids.
const A_FORBIDDEN = ['run-B1', 'run-B2', 'conv-B', 'gazelle', 'betaword', 'betafollow', 'ocelot', 'betasecret', 'mystery-kind'];
const B_FORBIDDEN = ['run-A1', 'run-A2', 'conv-A', 'kestrel', 'alphafollow'];

// ---------------------------------------------------------------------------------------------

test('scoped searches of the mixed store equal searches of a store holding only that conversation', async () => {
  const jobs: Array<() => Promise<void>> = [];
  let compared = 0;
  for (const [conv, single, forbidden] of [
    ['conv-A', A_ONLY, A_FORBIDDEN],
    ['conv-B', B_ONLY, B_FORBIDDEN],
  ] as const) {
    for (const q of QUERIES) {
      for (const [fname, fargs] of FORMATS) {
        for (const [iname, iargs] of INDEX_MODES) {
          jobs.push(async () => {
            const args = [...q.split(' '), '--conversation', conv, ...fargs, ...iargs];
            const what = `${conv} ${JSON.stringify(q)} ${fname} ${iname}`;
            const [mixed, alone] = await Promise.all([search(MIXED, args), search(single, args)]);
            assert.ok(mixed.status === 0 || mixed.status === 1, `${what}: exit ${mixed.status}\n${mixed.stderr}`);
            assertSame(mixed, alone, what);
            // the query is echoed back; every other forbidden word must be absent
            assertAbsent(
              mixed,
              forbidden.filter((f) => !q.split(' ').includes(f)),
              what,
            );
            compared++;
          });
        }
      }
    }
  }
  await runAll(jobs);
  assert.equal(compared, 2 * QUERIES.length * FORMATS.length * INDEX_MODES.length);
});

test("under conv-B, the history B inherited from A is B's own: found, attributed to B's runs, counted in B's totals", async () => {
  for (const [, iargs] of INDEX_MODES) {
    const r = await search(MIXED, ['zebrafish', '--conversation', 'conv-B', '--json', ...iargs]);
    assert.equal(r.status, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as {
      total_messages: number;
      hits: Array<{ run_id: string; conversation_id: string; message_index: number; excerpt: Array<{ index: number; text: string }> }>;
    };
    assert.ok(doc.hits.length > 0);
    for (const h of doc.hits) {
      assert.match(h.run_id, /^run-B[12]$/);
      assert.equal(h.conversation_id, 'conv-B');
    }
    // A1's tool call, tool return and answer are found under run-B1, from position 0 of its record
    const b1 = doc.hits.filter((h) => h.run_id === 'run-B1');
    assert.ok(
      b1.some((h) => h.message_index < a[0]!.messages.length),
      r.stdout,
    );
    assert.ok(
      b1.some((h) => h.excerpt.some((l) => l.index === 2 && l.text.includes('zebrafish facts'))),
      r.stdout,
    );
    // B1's record (A1's 6 inherited + 2 own) plus B2's own 2: nothing of A2's, nothing claimed by A
    assert.equal(doc.total_messages, a[0]!.messages.length + 2 + 2);

    // the same words under conv-A belong to A's runs
    const ra = await search(MIXED, ['zebrafish', '--conversation', 'conv-A', '--json', ...iargs]);
    const docA = JSON.parse(ra.stdout) as { total_messages: number; hits: Array<{ run_id: string }> };
    assert.ok(docA.hits.length > 0 && docA.hits.every((h) => /^run-A[12]$/.test(h.run_id)), ra.stdout);
    assert.equal(docA.total_messages, a[0]!.messages.length + 2);

    // and under --scope all the inherited copy is attributed to A1, which persisted it first
    const all = await search(MIXED, ['facts', '--scope', 'all', '--json', ...iargs]);
    const docAll = JSON.parse(all.stdout) as { hits: Array<{ run_id: string }> };
    assert.deepEqual(
      docAll.hits.map((h) => h.run_id),
      ['run-A1'],
    );
  }
});

test('an out-of-scope --run answers byte for byte like a run that does not exist, in every format', async () => {
  const jobs: Array<() => Promise<void>> = [];
  let compared = 0;
  const cases: Array<[conv: string, single: string, outOfScope: string[], inScope: string[]]> = [
    ['conv-A', A_ONLY, ['run-B1', 'run-B2'], ['run-A1', 'run-A2']],
    ['conv-B', B_ONLY, ['run-A1', 'run-A2'], ['run-B1', 'run-B2']],
  ];
  for (const [conv, single, outside, inside] of cases) {
    for (const q of ['sharedword', 'gazelle kestrel']) {
      for (const [fname, fargs] of FORMATS) {
        for (const [iname, iargs] of INDEX_MODES) {
          for (const run of outside) {
            jobs.push(async () => {
              const what = `${conv} --run ${run} ${JSON.stringify(q)} ${fname} ${iname}`;
              const args = [...q.split(' '), '--conversation', conv, '--run', run, ...fargs, ...iargs];
              // 1. the single-conversation store, where the run really does not exist
              // 2. the mixed store, asking for a run id that exists nowhere (same length), id swapped back
              const ghost = run.replace(/\d$/, '9');
              const [mixed, alone, missing] = await Promise.all([
                search(MIXED, args),
                search(single, args),
                search(
                  MIXED,
                  args.map((x) => (x === run ? ghost : x)),
                ),
              ]);
              assertSame(mixed, alone, `${what} vs. a store without it`);
              // the suggestions depend on the id asked for (its distance to the conversation's own runs): left out here
              const swap = (s: string) => withoutSuggestions(s.split(ghost).join(run));
              assertSame(
                { ...mixed, stdout: withoutSuggestions(mixed.stdout), stderr: withoutSuggestions(mixed.stderr) },
                { stdout: swap(missing.stdout), stderr: swap(missing.stderr), status: missing.status },
                `${what} vs. a missing run`,
              );
              assert.equal(mixed.status, 2, what);
              assert.match(
                mixed.stderr,
                new RegExp(
                  `^convsearch: error: no run '${run}' in conversation '${conv}'; did you mean run-${conv.slice(-1)}\\d(, run-${conv.slice(-1)}\\d)?\\?\\n$`,
                ),
                what,
              );
              if (fname === 'tool') assert.equal(mixed.stdout, `No persisted history for run '${run}'.\n`);
              // the run id is echoed (it is the caller's input); nothing else of the run may show
              const unechoed = { ...mixed, stdout: mixed.stdout.split(run).join(''), stderr: mixed.stderr.split(run).join('') };
              assertAbsent(
                unechoed,
                (conv === 'conv-A' ? A_FORBIDDEN : B_FORBIDDEN).filter((f) => !q.split(' ').includes(f)),
                what,
              );
              compared++;
            });
          }
          for (const run of q === 'sharedword' ? inside : []) {
            jobs.push(async () => {
              const what = `${conv} --run ${run} ${JSON.stringify(q)} ${fname} ${iname}`;
              const args = [...q.split(' '), '--conversation', conv, '--run', run, ...fargs, ...iargs];
              const [mixed, alone] = await Promise.all([search(MIXED, args), search(single, args)]);
              assertSame(mixed, alone, what);
            });
          }
        }
      }
    }
  }
  await runAll(jobs);
  assert.equal(compared, 2 * 2 * 2 * FORMATS.length * INDEX_MODES.length);
});

// ---------------------------------------------------------------------------------------------
// SQL injection

const HOSTILE = [`x' OR '1'='1`, `"; DROP TABLE runs; --`, `run-A1' --`, `run-A1" OR 1=1 --`, `%`, `_`, `*`];

test('hostile run and conversation ids get the not-found replies and leave the store untouched', async () => {
  for (const id of HOSTILE) {
    for (const [, iargs] of INDEX_MODES) {
      const byRun = await search(MIXED, ['zebrafish', '--scope', 'all', '--run', id, '--format', 'tool', ...iargs]);
      assert.equal(byRun.stdout, `No persisted history for run '${id}'.\n`, id);
      assert.equal(byRun.status, 2);
      assert.match(byRun.stderr, /^convsearch: error: no run '.*' in the store(; did you mean [^\n]*)?\n$/);

      const hostileQuery = await search(MIXED, [id, '--scope', 'all', '--run', id, '--format', 'tool', ...iargs]);
      assert.equal(hostileQuery.stdout, `No persisted history for run '${id}'.\n`, id);

      const byConv = await search(MIXED, ['zebrafish', '--conversation', id, '--format', 'tool', ...iargs]);
      assert.match(byConv.stdout, /^No persisted history in this conversation yet\./, id);
      assert.equal(byConv.status, 2);
    }
    const show = await cli(['show', id, '--db', MIXED], { env });
    assert.equal(show.status, 2, id);
    assert.equal(show.stdout, '');
    assert.match(show.stderr, /^convsearch: error: no run '.*' in the store(; did you mean [^\n]*)?\n$/);
  }
  // a query made of SQL still just ranks words: `OR` and `1` are words
  const q = await search(MIXED, [`zebrafish' OR '1'='1`, '--scope', 'all', '--json', '--no-index']);
  assert.equal(q.status, 0);
  const runs = await cli(['runs', '--json', '--db', MIXED], { env });
  assert.deepEqual(
    (JSON.parse(runs.stdout) as { runs: Array<{ run_id: string }> }).runs.map((r) => r.run_id),
    ['run-A1', 'run-B1', 'run-A2', 'run-B2'],
  );
  assert.deepEqual(storeDigest(MIXED), mixedDigest, 'the store changed');
});

// ---------------------------------------------------------------------------------------------
// Static check: SQL text is never built from values

/**
 * Interpolations allowed in SQL text, per file: each names a constant chosen by the code, never input.
 * Add an entry only for a value that cannot come from the store, the command line or the environment.
 */
const ALLOWED_INTERPOLATIONS: Record<string, readonly string[]> = {
  // PRAGMA arguments cannot be bound; `table` is one of the literals 'runs', 'snapshots', 'media'
  'src/store/sqlite/schema.ts': ['table'],
  // `stateFilter` is " AND state = 'complete'" or '', `state` (schema.ts stateCell) 'state' or "'complete'", chosen from the probed schema
  'src/store/sqlite/snapshots.ts': ['stateFilter', 'state'],
  // CORPUS_RUN_COLUMNS (src/sidecar/schema.ts) is a constant array of column-name literals
  'src/sidecar/sync.ts': ["CORPUS_RUN_COLUMNS.join(', ')"],
  'src/sidecar/indexed-source.ts': ["CORPUS_RUN_COLUMNS.join(', ')"],
  // column and parameter lists built from the constant column arrays RUN_COLUMNS, MARK_COLUMNS, KEY_COLUMNS and MESSAGE_COLUMNS
  // (MESSAGE_ROWS_PARAMS, POSTING_ROWS_PARAMS: placeholders of ROWS_A_STATEMENT rows, a numeric constant;
  // POSTING_IDS_PARAMS: POSTING_IDS_A_STATEMENT placeholders, a numeric constant);
  // n(…): the home's name for one of the index's own tables (index-db.ts: a literal, or a validated prefix)
  'src/sidecar/tables.ts': [
    'RUN_LIST',
    'MARK_LIST',
    'KEY_LIST',
    'MESSAGE_LIST',
    'MESSAGE_PARAMS',
    'MESSAGE_ROWS_PARAMS',
    'POSTING_ROWS_PARAMS',
    'POSTING_IDS_PARAMS',
    ...['meta', 'runs', 'messages', 'field_pieces', 'postings', 'terms', 'corpus_cache', 'pages'].map((t) => `n('${t}')`),
  ],
  // the shared index's schema name (checked against [a-z_][a-z0-9_]* in shared/target.ts) and its table names
  'src/sidecar/shared/schema.ts': ['schema', 'tables'],
  'src/sidecar/shared/shared-index.ts': ['schema'],
  // PRAGMA arguments cannot be bound: INDEX_APPLICATION_ID (src/sidecar/signature.ts) is a numeric constant
  'src/sidecar/file.ts': ['INDEX_APPLICATION_ID'],
  // PRAGMA arguments cannot be bound: `timeout` is the busy timeout SQLite reported, checked to be an integer, put back
  'src/sidecar/index-db.ts': ['timeout'],
  // CELLS(schema, db) is a column list of literals: 'state' or the literal 'complete' by the probed
  // schema, and `messages` as it is or CAST by the database's encoding (its size bounds numeric constants)
  'src/store/sqlite/content.ts': ['CELLS(schema, db)'],
  // RUN_COLUMNS and ROW_LINE are module-level string literals (a column list, the digest's line expression)
  'src/store/sqlite/runs.ts': ['RUN_COLUMNS', 'ROW_LINE'],
};
/** SQL passed as a named constant (a module-level string literal), per file. */
const ALLOWED_IDENTIFIERS: Record<string, readonly string[]> = {
  'src/sidecar/file.ts': ['INDEX_DDL', 'DROP_INDEX_TABLES'],
  'src/sidecar/schema.ts': ['INDEX_DDL'],
  // the statements tables.ts prepares (checked there), the home's INSERT-or-replace of its own columns and
  // its multi-row INSERT of constant column and parameter lists
  'src/sidecar/tables.ts': ['db.replaceSql', 'db.insertRowsSql'],
  'src/sidecar/index-db.ts': ['sql'],
  // a prepared statement's text (from tables.ts), and hold()'s BEGIN (literals at every call)
  'src/sidecar/shared/pg-db.ts': ['text', 'begin'],
  // the registry's DDL and INDEX_DDL in Postgres's terms (shared/schema.ts), for a validated schema name
  'src/sidecar/shared/shared-index.ts': ['REGISTRY_DDL', 'statement'],
  // the catalog read (a literal, the schema bound as $1) and the registry read (literals and the validated schema name)
  'src/sidecar/shared/schema.ts': ['read.text', 'REGISTRY_READ'],
};

function sourceFiles(d: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(d)) {
    const p = join(d, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Reads the template literal starting at `s[i] === '`'`; returns its interpolated expressions and end. */
function templateAt(s: string, i: number): { exprs: string[]; end: number } {
  const exprs: string[] = [];
  let j = i + 1;
  while (j < s.length && s[j] !== '`') {
    if (s[j] === '\\') j += 2;
    else if (s[j] === '$' && s[j + 1] === '{') {
      let depth = 1;
      const start = j + 2;
      j = start;
      while (depth > 0 && j < s.length) {
        if (s[j] === '{') depth++;
        else if (s[j] === '}') depth--;
        j++;
      }
      exprs.push(s.slice(start, j - 1).trim());
    } else j++;
  }
  return { exprs, end: j + 1 };
}

/** Each SQL-taking call (`prepare`, `exec`/`pragma` on a database) and how its SQL text is built. */
function sqlCalls(
  file: string,
): Array<{ line: number; kind: 'literal' | 'template' | 'identifier' | 'other'; exprs: string[]; text: string; concatenated: boolean }> {
  const s = readFileSync(file, 'utf8');
  const out: ReturnType<typeof sqlCalls> = [];
  // `db.query`/`this.query`: the shared index's connection (sidecar/shared/pg-db.ts)
  const re = /(?:\.prepare|\b(?:db|database|this\.db|store\.db|source\.db)\s*\.\s*(?:exec|pragma)|\b(?:db|this)\s*\.\s*query)\s*\(\s*/g;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    const at = m.index + m[0].length;
    const line = s.slice(0, m.index).split('\n').length;
    const c = s[at];
    let end: number;
    let kind: 'literal' | 'template' | 'identifier' | 'other';
    let exprs: string[] = [];
    if (c === "'" || c === '"') {
      let j = at + 1;
      while (j < s.length && s[j] !== c) j += s[j] === '\\' ? 2 : 1;
      end = j + 1;
      kind = 'literal';
    } else if (c === '`') {
      ({ exprs, end } = templateAt(s, at));
      kind = exprs.length ? 'template' : 'literal';
    } else if (/[A-Za-z_$]/.test(c ?? '')) {
      const id = /^[A-Za-z_$][\w$.]*/.exec(s.slice(at))![0];
      end = at + id.length;
      kind = 'identifier';
      exprs = [id];
    } else {
      end = at;
      kind = 'other';
    }
    const after = s.slice(end).trimStart();
    out.push({ line, kind, exprs, text: s.slice(at, Math.min(end, at + 120)), concatenated: after.startsWith('+') });
  }
  return out;
}

test('all SQL in src uses bound parameters: text is literal or interpolates only allow-listed constants', () => {
  const srcRoot = join(ROOT, 'src');
  const problems: string[] = [];
  let calls = 0;
  for (const file of sourceFiles(srcRoot)) {
    const rel = relative(ROOT, file).split('\\').join('/');
    for (const call of sqlCalls(file)) {
      calls++;
      const where = `${rel}:${call.line}: ${call.text}`;
      if (call.concatenated) problems.push(`${where} (SQL built with +)`);
      if (call.kind === 'other') problems.push(`${where} (SQL is not a literal)`);
      if (call.kind === 'identifier' && !(ALLOWED_IDENTIFIERS[rel] ?? []).includes(call.exprs[0]!)) {
        problems.push(`${where} (SQL from variable ${call.exprs[0]})`);
      }
      if (call.kind === 'template') {
        for (const e of call.exprs) if (!(ALLOWED_INTERPOLATIONS[rel] ?? []).includes(e)) problems.push(`${where} (interpolates \${${e}})`);
      }
    }
  }
  assert.ok(calls >= 10, `found only ${calls} SQL calls: the scanner is broken`);
  assert.deepEqual(problems, []);
});

test('the SQL scanner catches interpolated values (self-check)', () => {
  const probe = join(tempDir('scan'), 'probe.ts');
  const body = [
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the probe is source text holding an interpolation
    "db.prepare(`SELECT * FROM runs WHERE run_id = '${runId}'`).all();",
    "store.db.prepare('SELECT * FROM runs WHERE run_id = ' + runId);",
    'db.exec(sqlText);',
    "db.prepare('SELECT 1 WHERE x = ?').get(v);",
  ].join('\n');
  writeFileSync(probe, body);
  const calls = sqlCalls(probe);
  assert.deepEqual(
    calls.map((c) => [c.kind, c.exprs, c.concatenated]),
    [
      ['template', ['runId'], false],
      ['literal', [], true],
      ['identifier', ['sqlText'], false],
      ['literal', [], false],
    ],
  );
});
