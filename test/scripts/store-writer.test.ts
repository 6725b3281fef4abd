import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

import { pyFloat, pyJsonDumps, pyJsonDumpsAscii, rawNumber } from '../../scripts/lib/py-json.js';
import {
  binaryContent,
  errorDetail,
  instructionDeltaPart,
  KEPT_USER_MESSAGE_METADATA,
  PIN_METADATA,
  pinRequest,
  pydanticTime,
  RECEIPT_METADATA,
  pyIsoformat,
  request,
  response,
  retryPromptPart,
  simulateRun,
  summaryRequest,
  systemPart,
  textContent,
  textPart,
  thinkingPart,
  toolCallPart,
  toolReturnPart,
  usage,
  userPromptPart,
  userRequest,
  utc,
  type JsonObject,
  type SimResult,
} from '../../scripts/lib/messages.js';
import { externalizeMedia, restoreMedia, StepStoreWriter, type SchemaShape } from '../../scripts/lib/store-writer.js';
import { buildDemoStore, DEMO_MARKERS } from '../../scripts/make-demo-store.js';
import { derivedRunId } from '../../scripts/lib/run-ids.js';

// ---------------------------------------------------------------------------------------------
// helpers

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The parity stores: the repository's copies (test/fixtures/parity), unless CONVSEARCH_PARITY_DIR names others. */
function parityDir(): string {
  return process.env.CONVSEARCH_PARITY_DIR ?? join(REPO_ROOT, 'test', 'fixtures', 'parity');
}

const TMP_DIRS: string[] = [];
after(() => {
  for (const d of TMP_DIRS) rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'convsearch-writer-'));
  TMP_DIRS.push(d);
  return d;
}

/** Opens a copy: opening the shared store in place would create -shm/-wal files next to it. */
function openParity(name: string): Database.Database {
  const dir = parityDir();
  const copy = join(tmp(), name);
  copyFileSync(join(dir, name), copy);
  const wal = join(dir, `${name}-wal`);
  if (existsSync(wal) && statSync(wal).size > 0) copyFileSync(wal, `${copy}-wal`);
  return new Database(copy, { readonly: true });
}

function openDb(path: string): Database.Database {
  return new Database(path, { readonly: true });
}

function rows(db: Database.Database, sql: string, ...params: unknown[]): unknown[] {
  return db
    .prepare(sql)
    .raw(true)
    .all(...params);
}

function master(db: Database.Database): unknown[] {
  return rows(db, 'SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid');
}

function tableRows(db: Database.Database, table: string): unknown[] {
  return rows(db, `SELECT * FROM ${table} ORDER BY rowid`);
}

function writeStore(path: string, sims: SimResult[], shape: SchemaShape = 'pre-idempotency'): void {
  const w = new StepStoreWriter(path, { shape });
  try {
    w.writeSimulatedRuns(sims);
  } finally {
    w.close();
  }
}

// ---------------------------------------------------------------------------------------------
// (a) Python json.dumps

test('pyJsonDumpsAscii escapes strings exactly like json.dumps', () => {
  assert.equal(
    pyJsonDumpsAscii('caf\u00e9 \u{1f680} \u4e2d\u6587 \u041c\u043e\u0441\u043a\u0432\u0430'),
    '"caf\\u00e9 \\ud83d\\ude80 \\u4e2d\\u6587 \\u041c\\u043e\\u0441\\u043a\\u0432\\u0430"',
  );
  assert.equal(
    pyJsonDumpsAscii('\x00\x01\x1f\x7f\x80 \b\f\n\r\t "q" \\ / \u2028\ufeff'),
    '"\\u0000\\u0001\\u001f\\u007f\\u0080 \\b\\f\\n\\r\\t \\"q\\" \\\\ / \\u2028\\ufeff"',
  );
  assert.equal(pyJsonDumpsAscii('\ud800x\udfff'), '"\\ud800x\\udfff"');
  assert.equal(pyJsonDumpsAscii(''), '""');
  // ensure_ascii=False keeps non-ASCII and DEL raw, escapes only controls, quote and backslash
  assert.equal(pyJsonDumps('é\x7f\n"\u{1f680}', { ensureAscii: false }), '"é\x7f\\n\\"\u{1f680}"');
});

test('pyJsonDumpsAscii prints numbers like Python ints and float reprs', () => {
  const nums = [
    0,
    -1,
    9007199254740993n,
    1e21,
    pyFloat(1),
    pyFloat(-0),
    0.1,
    0.5,
    1e-5,
    0.0001,
    pyFloat(1e16),
    1234567890123456.8,
    pyFloat(1.5e300),
    5e-324,
    pyFloat(1.7976931348623157e308),
    NaN,
    Infinity,
    -Infinity,
    rawNumber('123456789012345678901'),
  ];
  assert.equal(
    pyJsonDumpsAscii(nums),
    '[0, -1, 9007199254740993, 1000000000000000000000, 1.0, -0.0, 0.1, 0.5, 1e-05, 0.0001, 1e+16, 1234567890123456.8, 1.5e+300, 5e-324, 1.7976931348623157e+308, NaN, Infinity, -Infinity, 123456789012345678901]',
  );
  assert.equal(pyJsonDumpsAscii(pyFloat(1e22)), '1e+22');
  assert.equal(pyJsonDumpsAscii(pyFloat(2 ** 53)), '9007199254740992.0');
  assert.equal(pyJsonDumpsAscii(pyFloat(100)), '100.0');
  assert.equal(pyJsonDumpsAscii(123456789.125), '123456789.125');
  assert.equal(pyJsonDumpsAscii(-2.5e-7), '-2.5e-07');
  assert.equal(pyJsonDumpsAscii(-0), '0');
  assert.throws(() => rawNumber('1.'), TypeError);
});

test('pyJsonDumpsAscii uses Python separators and insertion order', () => {
  assert.equal(
    pyJsonDumpsAscii({ b: 1, a: [1, [], {}, [null, true, false]], nested: { k: { z: 'é' } } }),
    '{"b": 1, "a": [1, [], {}, [null, true, false]], "nested": {"k": {"z": "\\u00e9"}}}',
  );
  // JS objects move integer-like keys first; a Map keeps Python's insertion order.
  assert.equal(
    pyJsonDumpsAscii(
      new Map([
        ['2', 'b'],
        ['1', 'a'],
      ]),
    ),
    '{"2": "b", "1": "a"}',
  );
  assert.throws(() => pyJsonDumpsAscii({ a: undefined }), TypeError);
  const cyclic: JsonObject = {};
  cyclic.self = cyclic;
  assert.throws(() => pyJsonDumpsAscii(cyclic), TypeError);
});

test('time formatting follows datetime.isoformat() and pydantic', () => {
  assert.equal(pyIsoformat('2026-01-02T03:04:05.678901Z'), '2026-01-02T03:04:05.678901+00:00');
  assert.equal(pyIsoformat('2026-01-02T03:04:05Z'), '2026-01-02T03:04:05+00:00');
  assert.equal(pyIsoformat('2026-01-02T05:04:05.5+02:00'), '2026-01-02T03:04:05.500000+00:00');
  assert.equal(pydanticTime('2026-01-02T03:04:05.678901+00:00'), '2026-01-02T03:04:05.678901Z');
  assert.equal(pydanticTime(new Date(Date.UTC(2026, 0, 2, 3, 4, 5))), '2026-01-02T03:04:05Z');
  assert.equal(pydanticTime(utc('1969-12-31T23:59:59.25Z')), '1969-12-31T23:59:59.250000Z');
});

// ---------------------------------------------------------------------------------------------
// (b) schema

test('the pre-idempotency shape has exactly the DDL of shared/parity/small.db', () => {
  const parity = openParity('small.db');
  const dir = tmp();
  const w = new StepStoreWriter(join(dir, 'a.db'), { shape: 'pre-idempotency' });
  w.close();
  const db = openDb(join(dir, 'a.db'));
  assert.deepEqual(master(db), master(parity));
  // Like the parity files, the header records WAL mode (file format bytes 18/19 == 2).
  const header = readFileSync(join(dir, 'a.db')).subarray(18, 20);
  const parityHeader = readFileSync(join(parityDir(), 'small.db')).subarray(18, 20);
  assert.deepEqual([...header], [2, 2]);
  assert.deepEqual([...header], [...parityHeader]);
});

test('the newest shape extends the parity DDL and adds the idempotency machinery', () => {
  const parity = openParity('small.db');
  const dir = tmp();
  const path = join(dir, 'n.db');
  const w = new StepStoreWriter(path);
  w.registerRun({ runId: 'r1', conversationId: 'c1', startedAt: '2026-01-02T03:04:05Z', registrationId: 'reg-1' });
  const msgs = [userRequest('hi', { timestamp: '2026-01-02T03:04:06Z', runId: 'r1', conversationId: 'c1' })];
  assert.equal(w.saveSnapshot({ runId: 'r1', stepIndex: 1, timestamp: '2026-01-02T03:04:07Z', messages: msgs, idempotencyKey: 'k1' }), 1);
  // A key already recorded for the run: the BEFORE INSERT trigger turns the insert into a no-op.
  assert.equal(
    w.saveSnapshot({ runId: 'r1', stepIndex: 1, timestamp: '2026-01-02T03:04:08Z', messages: msgs, idempotencyKey: 'k1' }),
    null,
  );
  w.close();
  assert.ok(!existsSync(`${path}-wal`) && !existsSync(`${path}-shm`));

  const db = openDb(path);
  const sqlOf = (d: Database.Database, name: string): string =>
    (d.prepare('SELECT sql FROM sqlite_master WHERE name = ?').get(name) as { sql: string }).sql;
  const plus = (sql: string, col: string): string => sql.replace(/\n\)$/, `,\n    ${col}\n)`);
  assert.equal(sqlOf(db, 'runs'), plus(sqlOf(parity, 'runs'), 'registration_id TEXT'));
  assert.equal(sqlOf(db, 'events'), plus(sqlOf(parity, 'events'), 'idempotency_key TEXT'));
  assert.equal(sqlOf(db, 'snapshots'), plus(sqlOf(parity, 'snapshots'), 'idempotency_key TEXT'));
  for (const name of ['tool_effects', 'idx_runs_conv', 'idx_runs_parent', 'idx_runs_started', 'idx_events_run', 'idx_snapshots_run']) {
    assert.equal(sqlOf(db, name), sqlOf(parity, name), name);
  }
  const names = rows(db, "SELECT type || ':' || name FROM sqlite_master ORDER BY rowid").flat();
  for (const n of [
    'table:snapshot_idempotency_keys',
    'index:idx_events_idempotency',
    'trigger:snapshots_idempotency_ignore',
    'trigger:snapshots_idempotency_record',
  ]) {
    assert.ok(names.includes(n), n);
  }
  assert.ok(!names.includes('table:media'), 'media table is created lazily');
  assert.deepEqual(tableRows(db, 'snapshot_idempotency_keys'), [['r1', 'k1']]);
  assert.deepEqual(rows(db, 'SELECT run_id, registration_id FROM runs'), [['r1', 'reg-1']]);
  assert.equal((db.pragma('journal_mode') as Array<{ journal_mode: string }>)[0]!.journal_mode, 'wal');
});

test('old shapes: no state column, and stores upgraded by the Python migrations', () => {
  const dir = tmp();
  const cols = (path: string, table: string): string[] =>
    (openDb(path).prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);

  const old = join(dir, 'old.db');
  const w = new StepStoreWriter(old, { shape: 'pre-state' });
  w.registerRun({ runId: 'r', startedAt: '2026-01-02T03:04:05Z' });
  w.saveSnapshot({ runId: 'r', stepIndex: 1, timestamp: '2026-01-02T03:04:06Z', messages: [] });
  assert.throws(() => w.saveSnapshot({ runId: 'r', stepIndex: 1, state: 'interrupted', timestamp: '2026-01-02T03:04:06Z', messages: [] }));
  w.close();
  assert.deepEqual(cols(old, 'snapshots'), [
    'seq',
    'run_id',
    'step_index',
    'conversation_id',
    'parent_run_id',
    'agent_name',
    'timestamp',
    'messages',
  ]);

  const upgraded = join(dir, 'upgraded.db');
  new StepStoreWriter(upgraded, { shape: 'newest', upgradedFrom: 'pre-state' }).close();
  assert.deepEqual(cols(upgraded, 'snapshots'), [
    'seq',
    'run_id',
    'step_index',
    'conversation_id',
    'parent_run_id',
    'agent_name',
    'timestamp',
    'messages',
    'state',
    'idempotency_key',
  ]);
  assert.deepEqual(cols(upgraded, 'runs').slice(-1), ['registration_id']);
  assert.deepEqual(cols(upgraded, 'events').slice(-1), ['idempotency_key']);

  assert.throws(() => new StepStoreWriter(old), /existing file/);
  new StepStoreWriter(old, { overwrite: true, shape: 'pre-idempotency' }).close();
  assert.ok(cols(old, 'snapshots').includes('state'));
});

// ---------------------------------------------------------------------------------------------
// (c) message builders

const T = '2025-03-01T09:00:09.750000Z';

test('builders emit every pydantic field in field order (all part kinds)', () => {
  const keys = (o: JsonObject): string[] => Object.keys(o);
  assert.deepEqual(keys(request([])), ['parts', 'timestamp', 'instructions', 'kind', 'run_id', 'conversation_id', 'metadata', 'state']);
  assert.deepEqual(keys(response([], { timestamp: T })), [
    'parts',
    'usage',
    'model_name',
    'timestamp',
    'kind',
    'provider_name',
    'provider_url',
    'provider_details',
    'provider_response_id',
    'finish_reason',
    'run_id',
    'conversation_id',
    'metadata',
    'state',
  ]);
  assert.deepEqual(keys(usage()), [
    'input_tokens',
    'cache_write_tokens',
    'cache_read_tokens',
    'output_tokens',
    'input_audio_tokens',
    'cache_audio_read_tokens',
    'output_audio_tokens',
    'details',
    'cost',
  ]);
  assert.deepEqual(keys(systemPart('s', { timestamp: T })), ['content', 'timestamp', 'dynamic_ref', 'part_kind']);
  assert.deepEqual(keys(userPromptPart('u', { timestamp: T })), ['content', 'timestamp', 'part_kind']);
  assert.deepEqual(keys(toolReturnPart('t', 'x', 'c1', { timestamp: T })), [
    'tool_name',
    'content',
    'tool_call_id',
    'tool_kind',
    'metadata',
    'timestamp',
    'outcome',
    'part_kind',
  ]);
  assert.deepEqual(keys(retryPromptPart('bad', { toolName: null, toolCallId: 'c1', timestamp: T })), [
    'content',
    'tool_name',
    'tool_call_id',
    'timestamp',
    'part_kind',
  ]);
  assert.deepEqual(keys(instructionDeltaPart('agent:state', null)), ['id', 'content', 'part_kind']);
  assert.deepEqual(keys(textPart('x')), ['content', 'id', 'provider_name', 'provider_details', 'part_kind']);
  assert.deepEqual(keys(toolCallPart('t', {}, 'c1')), [
    'tool_name',
    'args',
    'tool_call_id',
    'tool_kind',
    'id',
    'provider_name',
    'provider_details',
    'part_kind',
  ]);
  assert.deepEqual(keys(thinkingPart('x')), ['content', 'id', 'signature', 'provider_name', 'provider_details', 'part_kind']);
  assert.deepEqual(keys(textContent('x')), ['content', 'metadata', 'kind']);
  assert.deepEqual(keys(binaryContent(Buffer.from([1]), 'image/png')), ['data', 'media_type', 'vendor_metadata', 'kind', 'identifier']);
  assert.deepEqual(keys(errorDetail({ type: 'missing', loc: ['q'], msg: 'Field required', input: {} })), ['type', 'loc', 'msg', 'input']);
  // bytes: URL-safe base64 with padding; identifier = sha1(data)[:6]
  assert.equal(binaryContent(Buffer.from([0xfb, 0xff, 0xfe]), 'x/y').data, '-__-');
  assert.equal(binaryContent(Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'image/png').data, 'iVBORw==');
  assert.equal(binaryContent(Buffer.from('abc'), 'text/plain').identifier, createHash('sha1').update('abc').digest('hex').slice(0, 6));
});

test('builders produce byte-identical JSON to a message of the parity store', () => {
  const msg = userRequest('Can you check whether the billing-api deployment on Kubernetes finished rolling out?', {
    partTimestamp: '2025-03-01T09:00:09.750000Z',
    timestamp: '2025-03-01T09:00:10.750000Z',
    runId: 'run-alpha-1',
    conversationId: 'conv-alpha',
  });
  assert.equal(
    pyJsonDumpsAscii(msg),
    '{"parts": [{"content": "Can you check whether the billing-api deployment on Kubernetes finished rolling out?", "timestamp": "2025-03-01T09:00:09.750000Z", "part_kind": "user-prompt"}], "timestamp": "2025-03-01T09:00:10.750000Z", "instructions": null, "kind": "request", "run_id": "run-alpha-1", "conversation_id": "conv-alpha", "metadata": null, "state": "complete"}',
  );
});

test('builder key order matches every part kind found in the parity stores', () => {
  const built: Record<string, JsonObject> = {
    'message:request': request([]),
    'message:response': response([], { timestamp: T }),
    usage: usage(),
    'part:user-prompt': userPromptPart('x', { timestamp: T }),
    'part:system-prompt': systemPart('x', { timestamp: T }),
    'part:tool-return': toolReturnPart('t', 'x', 'c', { timestamp: T }),
    'part:retry-prompt': retryPromptPart('x', { toolName: 't', toolCallId: 'c', timestamp: T }),
    'part:text': textPart('x'),
    'part:tool-call': toolCallPart('t', {}, 'c'),
    'part:thinking': thinkingPart('x'),
    'part:instruction-delta': instructionDeltaPart('i', 'x'),
    'item:text-content': textContent('x'),
    'item:binary': binaryContent(Buffer.from('x'), 'image/png'),
  };
  const seen = new Map<string, string[]>();
  const visit = (node: unknown, ctx: string): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n, ctx);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const o = node as JsonObject;
    if ('__harness_external_media__' in o) return; // markers are checked by the media tests
    let label: string | undefined;
    if (ctx === 'message') label = `message:${String(o.kind)}`;
    else if (typeof o.part_kind === 'string') label = `part:${o.part_kind}`;
    else if (o.kind === 'text-content' || o.kind === 'binary') label = `item:${o.kind}`;
    else if ('input_tokens' in o) label = 'usage';
    if (label && !seen.has(label)) seen.set(label, Object.keys(o));
    for (const [k, v] of Object.entries(o)) visit(v, k === 'parts' ? 'part' : 'inner');
  };
  for (const name of ['small.db', 'threaded.db', 'unicode.db', 'media.db']) {
    const db = openParity(name);
    for (const [m] of rows(db, 'SELECT messages FROM snapshots') as Array<[string]>) {
      for (const msg of JSON.parse(m) as unknown[]) visit(msg, 'message');
    }
  }
  assert.ok(seen.size >= 8, `found ${[...seen.keys()].join(', ')}`);
  for (const [label, keys] of seen) {
    assert.ok(built[label], `no builder for ${label}`);
    assert.deepEqual(Object.keys(built[label]!), keys, label);
  }
});

test('summaryRequest builds the three artifact shapes of §3.1', () => {
  const ts = '2025-03-01T09:01:42.750000Z';
  assert.equal(
    pyJsonDumpsAscii(summaryRequest('Body.', { shape: 'marked-user', partTimestamp: ts })),
    '{"parts": [{"content": [{"content": "Summary of previous conversation:\\n\\nBody.", "metadata": {"pydantic-ai-harness.compaction.summary.v1": true}, "kind": "text-content"}], "timestamp": "2025-03-01T09:01:42.750000Z", "part_kind": "user-prompt"}], "timestamp": null, "instructions": null, "kind": "request", "run_id": null, "conversation_id": null, "metadata": null, "state": "complete"}',
  );
  assert.equal(
    pyJsonDumpsAscii(summaryRequest('Body.', { shape: 'legacy-system', partTimestamp: ts })),
    '{"parts": [{"content": "Summary of previous conversation:\\n\\nBody.", "timestamp": "2025-03-01T09:01:42.750000Z", "dynamic_ref": null, "part_kind": "system-prompt"}], "timestamp": null, "instructions": null, "kind": "request", "run_id": null, "conversation_id": null, "metadata": null, "state": "complete"}',
  );
  assert.equal(
    pyJsonDumpsAscii(summaryRequest('Body.', { shape: 'flattened-user', partTimestamp: ts })),
    '{"parts": [{"content": "Summary of previous conversation:\\n\\nBody.", "timestamp": "2025-03-01T09:01:42.750000Z", "part_kind": "user-prompt"}], "timestamp": null, "instructions": null, "kind": "request", "run_id": null, "conversation_id": null, "metadata": {"pydantic-ai-harness.compaction.summary.v1": true}, "state": "complete"}',
  );
  const newest = summaryRequest('Body.', {
    partTimestamp: ts,
    systemParts: [systemPart('You are helpful.', { timestamp: ts })],
    requestMetadata: { 'pydantic-ai-harness.compaction.summary.v1': true },
  });
  assert.deepEqual(
    (newest.parts as JsonObject[]).map((p) => p.part_kind),
    ['system-prompt', 'user-prompt'],
  );
  assert.deepEqual(newest.metadata, { 'pydantic-ai-harness.compaction.summary.v1': true });
});

// ---------------------------------------------------------------------------------------------
// simulateRun: stamping order, and byte-exact reproduction of the Python-written stores

test('simulateRun saves the newest request unstamped and stamps it in the next snapshot', () => {
  const sim = simulateRun({
    runId: 'r1',
    conversationId: 'c1',
    startedAt: '2026-01-02T03:04:05Z',
    instructions: 'Be brief.',
    prompt: 'hello',
    steps: [
      { parts: [toolCallPart('t', { q: 'x' }, 'c1')], results: [{ content: 'ok' }] },
      { parts: [textPart('done')], instructionDeltas: [{ id: 'agent:mode', content: 'terse' }] },
    ],
  });
  assert.equal(sim.snapshots.length, 2);
  const [s1, s2] = sim.snapshots.map((s) => s.messages);
  const first = s1![2]!;
  const second = s2![2]!;
  assert.deepEqual([first.timestamp, first.run_id, first.conversation_id, first.instructions], [null, null, null, null]);
  assert.deepEqual([second.run_id, second.conversation_id, second.instructions], ['r1', 'c1', 'Be brief.']);
  assert.equal(typeof second.timestamp, 'string');
  assert.deepEqual(
    (second.parts as JsonObject[]).map((p) => p.part_kind),
    ['tool-return', 'instruction-delta'],
  );
  assert.deepEqual(first.parts, [(second.parts as JsonObject[])[0]]);
  // the first request of a run is stamped before the first model call
  assert.equal(s1![0]!.run_id, 'r1');
  assert.equal(s1![0]!.instructions, 'Be brief.');
  assert.deepEqual(
    sim.rows.filter((r) => r.table === 'events').map((r) => (r.table === 'events' ? r.row.kind : '')),
    [
      'run_started',
      'model_request_started',
      'model_request_completed',
      'tool_call_started',
      'tool_call_completed',
      'model_request_started',
      'model_request_completed',
      'run_completed',
    ],
  );
});

const U = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });

function smallDbSims(): SimResult[] {
  const alpha1 = simulateRun({
    runId: 'run-alpha-1',
    conversationId: 'conv-alpha',
    startedAt: '2025-03-01T09:00:04+00:00',
    prompt: 'Can you check whether the billing-api deployment on Kubernetes finished rolling out?',
    steps: [
      {
        parts: [
          textPart('Let me look at the manifest first.'),
          toolCallPart('read_file', { path: 'deploy/k8s/deployment.yaml' }, 'call_a1_1'),
        ],
        usage: U(62, 14),
        results: [
          {
            content:
              'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: billing-api\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n        - name: billing-api\n          image: registry.example.com/billing-api:2.4.1\n',
          },
        ],
      },
      {
        parts: [toolCallPart('run_shell', { cmd: 'kubectl rollout status deploy/billing-api' }, 'call_a1_2')],
        usage: U(85, 22),
        results: [
          {
            content:
              'Waiting for deployment "billing-api" rollout to finish: 2 of 3 updated replicas are available...\ndeployment "billing-api" successfully rolled out',
          },
        ],
      },
      { parts: [textPart('The billing-api deployment rolled out successfully with 3 replicas of image 2.4.1.')], usage: U(104, 37) },
    ],
  });
  const alpha2 = simulateRun({
    runId: 'run-alpha-2',
    conversationId: 'conv-alpha',
    startedAt: '2025-03-01T09:01:10.500000+00:00',
    history: alpha1.messages,
    prompt: 'Now the quetzalcoatl cluster logs show postgres connection pool exhaustion. What should I check?',
    steps: [
      {
        parts: [toolCallPart('search_docs', { query: 'postgres connection pool exhaustion' }, 'call_a2_1')],
        usage: U(118, 45),
        results: [
          {
            content: [
              { title: 'Tuning PgBouncer pool_size', url: 'https://docs.example.com/pgbouncer' },
              { title: 'Diagnosing too many connections', url: 'https://docs.example.com/too-many-connections' },
            ],
          },
        ],
      },
      {
        compaction: {
          summary: 'The user deployed billing-api (3 replicas) and asked about the zanzibarsummary incident; rollout succeeded.',
          keepLast: 2,
        },
        parts: [toolCallPart('run_shell', { cmd: 'psql -c "show max_connections"' }, 'call_a2_2')],
        usage: U(92, 17),
        results: [{ content: ' max_connections \n-----------------\n 100\n(1 row)' }],
      },
      { parts: [textPart('max_connections is 100; raise PgBouncer default_pool_size instead of Postgres limits.')], usage: U(97, 28) },
    ],
  });
  const beta1 = simulateRun({
    runId: 'run-beta-1',
    conversationId: 'conv-beta',
    startedAt: '2025-03-01T09:02:17.250000+00:00',
    prompt: 'Check the weather in Reykjavik and then prepare the billing schema migration.',
    steps: [
      {
        parts: [toolCallPart('get_weather', { city: 'Reykjavik' }, 'call_b1_1')],
        usage: U(63, 5),
        results: [{ content: { city: 'Reykjavik', forecast: 'cloudy', temp_c: 14 } }],
      },
      {
        parts: [
          textPart('Before the migration I will dump the schema for the xylophonist table.'),
          toolCallPart('run_shell', { cmd: 'pg_dump --schema-only billing' }, 'call_b1_2'),
        ],
        usage: U(70, 25),
        results: [{ error: 'ToolBoom("worker killed while running \'pg_dump --schema-only billing\'")' }],
      },
    ],
  });
  const beta2 = simulateRun({
    runId: 'run-beta-2',
    conversationId: 'conv-beta',
    startedAt: '2025-03-01T09:03:12.500000+00:00',
    prompt: 'Retry the billing schema migration prep please.',
    steps: [{ parts: [textPart('Retrying the migration prep: the schema dump is now handled by the nightly job.')], usage: U(58, 15) }],
  });
  return [alpha1, alpha2, beta1, beta2];
}

test('simulateRun + writer reproduce shared/parity/small.db row for row', () => {
  const parity = openParity('small.db');
  const path = join(tmp(), 'small.db');
  const w = new StepStoreWriter(path, { shape: 'pre-idempotency' });
  w.writeSimulatedRuns(smallDbSims());
  // The orphan run was written directly (no events, messages older than the run record).
  w.registerRun({ runId: 'run-orphan-1', conversationId: null, startedAt: '2025-03-01T09:03:44.250000+00:00' });
  w.saveSnapshot({
    runId: 'run-orphan-1',
    stepIndex: 1,
    timestamp: '2025-03-01T09:03:46+00:00',
    messages: [
      userRequest('Reconcile the ledger for March', {
        partTimestamp: '2025-03-01T09:03:37Z',
        timestamp: '2025-03-01T09:03:38Z',
        runId: 'run-orphan-1',
      }),
      response([textPart('Orphaned run: the ledger reconciliation finished with 0 mismatches.')], {
        timestamp: '2025-03-01T09:03:41.250000Z',
        usage: U(55, 10),
        modelName: 'scripted-model',
        runId: 'run-orphan-1',
      }),
    ],
  });
  w.close();
  const db = openDb(path);
  assert.deepEqual(master(db), master(parity));
  for (const table of ['runs', 'events', 'snapshots', 'tool_effects']) {
    assert.deepEqual(tableRows(db, table), tableRows(parity, table), table);
  }
});

test('simulateRun reproduces shared/parity/threaded.db (threaded runs, instructions) row for row', () => {
  const parity = openParity('threaded.db');
  const payments = 'You are a careful payments engineer.';
  const t1 = simulateRun({
    runId: 'run-thread-1',
    conversationId: 'conv-thread',
    startedAt: '2025-03-01T09:00:04+00:00',
    instructions: payments,
    prompt: 'Why do customers sometimes get refunded twice?',
    steps: [
      {
        parts: [toolCallPart('read_file', { path: 'src/payments/refund.py' }, 'call_t1_1')],
        usage: U(57, 6),
        results: [
          {
            content:
              'def refund(order_id: str, amount_cents: int) -> None:\n    # TODO: idempotency key missing\n    gateway.refund(order_id, amount_cents)\n',
          },
        ],
      },
      { parts: [textPart('refund() has no idempotency key, so a retried webhook can refund twice.')], usage: U(72, 19) },
    ],
  });
  const t2 = simulateRun({
    runId: 'run-thread-2',
    conversationId: 'conv-thread',
    startedAt: '2025-03-01T09:00:49.250000+00:00',
    instructions: payments,
    history: t1.messages,
    prompt: 'Run the payment tests to confirm.',
    steps: [
      {
        parts: [toolCallPart('run_shell', { cmd: 'pytest tests/payments -q' }, 'call_t2_1')],
        usage: U(79, 26),
        results: [{ content: '....F.\nFAILED tests/payments/test_refund.py::test_double_refund - AssertionError\n1 failed, 5 passed' }],
      },
      { parts: [textPart('test_double_refund fails, confirming the double refund bug.')], usage: U(91, 34) },
    ],
  });
  const t3 = simulateRun({
    runId: 'run-thread-3',
    conversationId: 'conv-thread',
    startedAt: '2025-03-01T09:01:34.500000+00:00',
    instructions: 'You are a terse reviewer. Answer in one sentence.',
    history: t2.messages,
    prompt: 'I added the idempotency key. Verify the fix.',
    steps: [
      {
        parts: [toolCallPart('run_shell', { cmd: 'pytest tests/payments -q -k double_refund' }, 'call_t3_1')],
        usage: U(100, 43),
        results: [{ content: '.\n1 passed' }],
      },
      { parts: [textPart('After adding an idempotency key derived from order_id the double refund test passes.')], usage: U(103, 57) },
    ],
  });
  const chat = (
    runId: string,
    conv: string,
    startedAt: string,
    prompt: string,
    answer: string,
    u: [number, number],
    history?: JsonObject[],
  ) =>
    simulateRun({
      runId,
      conversationId: conv,
      startedAt,
      prompt,
      ...(history ? { history } : {}),
      steps: [{ parts: [textPart(answer)], usage: U(...u) }],
    });
  const i1 = chat(
    'run-inherit-1',
    'conv-inherit',
    '2025-03-01T09:02:19.750000+00:00',
    'Design a rate limiter for the public API.',
    'Use a token bucket: capacity 100, refill 10 per second per API key.',
    [59, 14],
  );
  const i2 = chat(
    'run-inherit-2',
    'conv-inherit',
    '2025-03-01T09:02:43.750000+00:00',
    'Where should the token bucket state live?',
    'Store buckets in Redis with a Lua script so refill and take are atomic.',
    [66, 29],
    i1.messages,
  );
  const i3 = chat(
    'run-inherit-3',
    'conv-inherit',
    '2025-03-01T09:03:07.750000+00:00',
    'What do clients see when throttled?',
    'Return HTTP 429 with a Retry-After header computed from the refill rate.',
    [72, 42],
    i2.messages,
  );
  const o1 = chat(
    'run-other-1',
    'conv-other',
    '2025-03-01T09:03:31.750000+00:00',
    'Who owns the refund dashboard?',
    'The refund dashboard is owned by the finance-tools team.',
    [55, 10],
  );
  const path = join(tmp(), 'threaded.db');
  writeStore(path, [t1, t2, t3, i1, i2, i3, o1]);
  const db = openDb(path);
  for (const table of ['runs', 'events', 'snapshots', 'tool_effects']) {
    assert.deepEqual(tableRows(db, table), tableRows(parity, table), table);
  }
});

test('simulateRun reproduces shared/parity/unicode.db runs (non-ASCII escaping, string args)', () => {
  const parity = openParity('unicode.db');
  const ru = simulateRun({
    runId: 'run-uni-ru',
    conversationId: 'conv-unicode',
    startedAt: '2025-03-01T09:00:49.250000+00:00',
    prompt: 'Какая погода в Москве сегодня?',
    steps: [
      {
        parts: [toolCallPart('get_weather', '{"city": "Москва"}', 'call_u2_1')],
        usage: U(55, 5),
        results: [{ content: { city: 'Москва', forecast: 'снег', temp_c: -7 } }],
      },
      { parts: [textPart('В Москве сегодня снег и минус семь градусов. Погода холодная.')], usage: U(62, 16) },
    ],
  });
  const tok = simulateRun({
    runId: 'run-uni-tok',
    conversationId: 'conv-unicode-2',
    startedAt: '2025-03-01T09:03:26.250000+00:00',
    prompt: 'Tokenizer check: naïve_café x² ½ Ⅻ ① 🚀🚀 test',
    steps: [{ parts: [textPart('snake_case_name and CamelCaseName and v2_0_1 are tokens; 🚀 is not a \\w token.')], usage: U(59, 14) }],
  });
  const path = join(tmp(), 'unicode.db');
  writeStore(path, [ru, tok]);
  const db = openDb(path);
  const q = "SELECT * FROM snapshots WHERE run_id IN ('run-uni-ru', 'run-uni-tok') ORDER BY seq";
  const mine = rows(db, q).map((r) => (r as unknown[]).slice(1));
  const theirs = rows(parity, q).map((r) => (r as unknown[]).slice(1));
  assert.deepEqual(mine, theirs);
});

test('externalization reproduces shared/parity/media.db (binary and text markers, media rows)', () => {
  const parity = openParity('media.db');
  const blobs = rows(parity, 'SELECT media_type, bytes FROM media ORDER BY rowid') as Array<[string, Buffer]>;
  const png = blobs.find(([t]) => t === 'image/png')![1];
  const log = blobs.find(([t]) => t === 'text/plain')![1].toString('utf8');
  const first = JSON.parse((parity.prepare('SELECT messages FROM snapshots WHERE seq = 1').get() as { messages: string }).messages);
  const favicon = Buffer.from(first[0].parts[0].content[3].data, 'base64url');
  const m1 = simulateRun({
    runId: 'run-media-1',
    conversationId: 'conv-media',
    startedAt: '2025-03-01T09:00:04+00:00',
    timing: { runEnded: 5.25 },
    prompt: [
      'Here is a screenshot of the broken thumbnail grid. What went wrong?',
      binaryContent(png, 'image/png'),
      'Also a tiny favicon for reference:',
      binaryContent(favicon, 'image/png'),
    ],
    steps: [
      {
        parts: [toolCallPart('run_shell', { cmd: 'journalctl -u thumbnailer --since today' }, 'call_m1_1')],
        usage: U(91164, 9),
        results: [{ content: log }],
      },
      {
        parts: [textPart('The screenshot shows a broken thumbnail grid; the log has a libvips segfault on worker-3.')],
        usage: U(102375, 25),
        timing: { stamp: 5 },
      },
    ],
  });
  const m2 = simulateRun({
    runId: 'run-media-2',
    conversationId: 'conv-media',
    startedAt: '2025-03-01T09:00:55.250000+00:00',
    prompt: 'How do I fix the segfault?',
    steps: [{ parts: [textPart('Pin libvips to 8.15.2 and restart the thumbnailer workers.')], usage: U(56, 12) }],
  });
  const path = join(tmp(), 'media.db');
  writeStore(path, [m1, m2]);
  const db = openDb(path);
  assert.deepEqual(master(db), master(parity));
  for (const table of ['runs', 'events', 'snapshots', 'tool_effects', 'media']) {
    assert.deepEqual(tableRows(db, table), tableRows(parity, table), table);
  }
});

// ---------------------------------------------------------------------------------------------
// (d) media externalization round trip

test('large text is externalized to the media table and restores byte for byte', () => {
  const big = 'ünïcødé 🚀 '.repeat(6000) + 'tail-marker'; // > 64 KiB as UTF-8
  const small = 'short text';
  const msgs = [
    request([userPromptPart(big, { timestamp: T }), toolReturnPart('t', small, 'c1', { timestamp: T })]),
    response([textPart(big)], { timestamp: T }),
  ];
  const dir = tmp();
  const path = join(dir, 'm.db');
  const w = new StepStoreWriter(path);
  w.registerRun({ runId: 'r', startedAt: T });
  w.saveSnapshot({ runId: 'r', stepIndex: 1, timestamp: T, messages: msgs });
  w.close();
  const db = openDb(path);
  const media = rows(db, 'SELECT sha256, media_type, bytes, size_bytes, metadata FROM media') as Array<
    [string, string, Buffer, number, string]
  >;
  assert.equal(media.length, 1, 'identical content is stored once');
  const [sha, type, bytes, size, meta] = media[0]!;
  const utf8 = Buffer.from(big, 'utf8');
  assert.ok(utf8.length >= 65536);
  assert.deepEqual(bytes, utf8);
  assert.equal(size, utf8.length);
  assert.equal(type, 'text/plain');
  assert.equal(meta, '{}');
  assert.equal(sha, createHash('sha256').update(utf8).digest('hex'));

  const stored = (db.prepare('SELECT messages FROM snapshots').get() as { messages: string }).messages;
  assert.ok(!stored.includes('tail-marker'));
  const tree = JSON.parse(stored) as JsonObject[];
  const marker = (tree[0]!.parts as JsonObject[])[0]!;
  assert.deepEqual(Object.keys(marker), [
    'timestamp',
    'part_kind',
    '__harness_external_media__',
    '__harness_external_text__',
    '__harness_external_uri__',
    'uri',
  ]);
  assert.equal(marker.__harness_external_uri__, `media+sha256://${sha}`);
  assert.equal(marker.uri, marker.__harness_external_uri__);
  assert.equal((tree[0]!.parts as JsonObject[])[1]!.content, small, 'small content stays inline');
  // restore re-adds `content` last (pydantic re-validation restores field order); compare as values
  const restored = restoreMedia(tree, (s) => (s === sha ? bytes : undefined));
  assert.deepEqual(restored, msgs);
});

test('externalization: threshold, binary data, existing uri and escaped keys', () => {
  const store = new Map<string, Buffer>();
  const put = (b: Buffer): string => {
    const sha = createHash('sha256').update(b).digest('hex');
    store.set(sha, b);
    return sha;
  };
  const at = 'x'.repeat(100);
  const below = 'y'.repeat(99);
  const bin = Buffer.alloc(100, 7);
  const tree = [
    { content: at, part_kind: 'text', uri: 'keep-me' },
    { content: below, part_kind: 'text' },
    textContent(at),
    { content: at, kind: 'not-a-candidate' },
    binaryContent(bin, 'application/octet-stream'),
    { content: at, part_kind: 'text', __harness_external_media__: 'user value', __harness_external_marker_format__: 'x' },
  ];
  const out = externalizeMedia(tree, put, 100) as JsonObject[];
  assert.deepEqual(Object.keys(out[0]!), [
    'part_kind',
    'uri',
    '__harness_external_media__',
    '__harness_external_text__',
    '__harness_external_uri__',
  ]);
  assert.equal(out[0]!.uri, 'keep-me');
  assert.equal(out[1]!.content, below);
  assert.equal(out[2]!.__harness_external_text__, true);
  assert.equal(out[3]!.content, at);
  assert.deepEqual(Object.keys(out[4]!), [
    'media_type',
    'vendor_metadata',
    'kind',
    'identifier',
    '__harness_external_media__',
    '__harness_external_uri__',
    'uri',
  ]);
  assert.deepEqual(out[5]!.__harness_external_escaped_keys__, {
    __harness_external_media__: 'user value',
    __harness_external_marker_format__: 'x',
  });
  assert.equal(out[5]!.__harness_external_marker_format__, 'escaped-keys-v1');
  assert.equal(out[5]!.__harness_external_media__, true);

  const back = restoreMedia(out, (s) => store.get(s)) as JsonObject[];
  assert.deepEqual(back[0], tree[0]);
  assert.deepEqual(back[5], tree[5]);
  // a restored binary comes back with the standard base64 alphabet
  assert.equal(back[4]!.data, bin.toString('base64'));
  assert.throws(() => restoreMedia(out, () => undefined), /not found/);
});

// ---------------------------------------------------------------------------------------------
// (e) the demo store

function dumpAll(path: string): Record<string, unknown[]> {
  const db = openDb(path);
  const out: Record<string, unknown[]> = {};
  for (const t of ['runs', 'events', 'snapshots', 'tool_effects', 'media', 'conversations']) out[t] = tableRows(db, t);
  out.master = master(db);
  db.close();
  return out;
}

test('the demo store is deterministic', () => {
  const dir = tmp();
  buildDemoStore(join(dir, 'a.db'));
  buildDemoStore(join(dir, 'b.db'));
  const a = dumpAll(join(dir, 'a.db'));
  const b = dumpAll(join(dir, 'b.db'));
  assert.deepEqual(a.snapshots, b.snapshots);
  assert.deepEqual(a, b);
});

test('the demo store has the documented content', () => {
  const dir = tmp();
  const path = join(dir, 'demo.db');
  buildDemoStore(path);
  assert.ok(!existsSync(`${path}-wal`) && !existsSync(`${path}-shm`));
  assert.ok(statSync(path).size < 1024 * 1024);
  const db = openDb(path);
  const runs = rows(db, 'SELECT run_id, conversation_id, parent_run_id, agent_name FROM runs ORDER BY started_at, rowid');
  assert.deepEqual(runs, [
    ['run-ops-1', 'conv-ops-billing-api', null, null],
    ['run-pay-1', 'conv-payments-refunds', null, null],
    ['run-ops-2', 'conv-ops-billing-api', null, null],
    [derivedRunId('deploy-verifier', '019bb1d2-6a4e-7c3f-8d21-5e9f0a1b2c3d'), 'conv-ops-billing-api', 'run-ops-2', 'deploy-verifier'],
    ['run-pay-2', 'conv-payments-refunds', null, null],
    ['run-pay-3', 'conv-payments-refunds', null, null],
    ['run-i18n-1', '019bb1f0-2c4d-7a8e-b5f6-0123456789ab', null, null],
    ['run-cache-1', 'conv-cache-eviction', null, 'cache-auditor'],
  ]);
  // the harness CLI's conversation catalog, shared with the step store; the run without a conversation id has no row
  const catalog = rows(
    db,
    "SELECT id, json_extract(metadata, '$.title'), json_extract(metadata, '$.outcome') FROM conversations ORDER BY id",
  );
  assert.deepEqual(catalog, [
    ['conv-cache-eviction', 'Search cache hit ratio drop on node 3', 'completed'],
    ['conv-ops-billing-api', 'Billing API stuck after OOM in prod-eu', 'completed'],
    ['conv-payments-refunds', 'Double refund for order ORD-2291', 'cancelled'],
  ]);
  const snaps = rows(db, 'SELECT run_id, state, messages FROM snapshots ORDER BY seq') as Array<[string, string, string]>;
  const holding = (word: string) => snaps.filter(([, , m]) => m.includes(word)).map(([r, s]) => `${r}:${s}`);
  assert.deepEqual([...new Set(holding(DEMO_MARKERS.interruptedOnly))], ['run-pay-2:interrupted']);
  assert.deepEqual(holding(DEMO_MARKERS.externalizedLog), []);
  const media = rows(db, 'SELECT media_type, bytes FROM media') as Array<[string, Buffer]>;
  assert.equal(media.length, 1);
  assert.equal(media[0]![0], 'text/plain');
  assert.ok(media[0]![1].length >= 65536);
  assert.ok(media[0]![1].toString('utf8').includes(DEMO_MARKERS.externalizedLog));
  // the summary word only lives inside summary artifacts
  for (const [, , m] of snaps) {
    for (const msg of JSON.parse(m) as JsonObject[]) {
      if (JSON.stringify(msg).includes(DEMO_MARKERS.summaryOnly)) {
        const part = (msg.parts as JsonObject[])[0]!;
        assert.deepEqual((part.content as JsonObject[])[0]!.metadata, { 'pydantic-ai-harness.compaction.summary.v1': true });
      }
    }
  }
  assert.ok(snaps.some(([, , m]) => m.includes('"part_kind": "retry-prompt"')));
  assert.ok(snaps.some(([, , m]) => m.includes('"memory_request_gib": 1.0')));
  assert.ok(
    snaps.some(([, , m]) => m.includes('\\u00fc')),
    'non-ASCII is \\u-escaped',
  );
});

test('make-demo-store CLI: --if-missing, --force, refusal and usage errors', () => {
  const script = fileURLToPath(new URL('../../scripts/make-demo-store.js', import.meta.url));
  const dir = tmp();
  const out = join(dir, 'sessions.db');
  const run = (...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });

  assert.equal(run(out).status, 0);
  const bytes = readFileSync(out);
  assert.ok(!existsSync(`${out}-wal`) && !existsSync(`${out}-shm`));

  writeFileSync(out, 'not a database');
  assert.equal(run(out, '--if-missing').status, 0);
  assert.equal(readFileSync(out, 'utf8'), 'not a database');
  const refused = run(out);
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /--force/);
  assert.equal(readFileSync(out, 'utf8'), 'not a database');

  writeFileSync(`${out}-wal`, 'stale');
  assert.equal(run(out, '--force').status, 0);
  assert.deepEqual(readFileSync(out), bytes);
  assert.ok(!existsSync(`${out}-wal`));

  assert.equal(run().status, 2);
  assert.equal(run(out, '--bogus').status, 2);
  rmSync(dir, { recursive: true, force: true });
});

test('simulated compaction with receipts, pins and kept user turns: the shapes the harness writes', () => {
  const pin = pinRequest('Pinned: keep the runbook in mind.', { partTimestamp: '2025-03-01T09:00:00Z' });
  const sim = simulateRun({
    runId: 'run-c',
    conversationId: 'conv-c',
    startedAt: '2025-03-01T09:00:01Z',
    history: [pin],
    prompt: 'Fix node 3.',
    steps: [
      { parts: [toolCallPart('run_shell', { cmd: 'a' }, 'c1')], results: [{ content: 'one' }] },
      { parts: [toolCallPart('run_shell', { cmd: 'b' }, 'c2')], results: [{ content: 'two' }] },
      {
        compaction: { summary: 'Did a and b.', keepLast: 2, receipt: true, reinjectPins: true, keepUserMessages: 1 },
        parts: [textPart('Done.')],
      },
    ],
  });
  const last = sim.snapshots[sim.snapshots.length - 1]!.messages;
  const [summary, receipt, pins, kept, ...tail] = last;
  assert.deepEqual(((summary!.parts as JsonObject[])[0]!.content as JsonObject[])[0]!.metadata, {
    'pydantic-ai-harness.compaction.summary.v1': true,
  });
  const receiptItem = ((receipt!.parts as JsonObject[])[0]!.content as JsonObject[])[0]!;
  assert.equal(receiptItem.metadata, RECEIPT_METADATA);
  assert.match(
    receiptItem.content as string,
    /^\[History before this point \(4 messages, ~\d+ tokens\) was summarized by summarizing_compaction\. .* Persisted run handle: run-c\.\]$/,
  );
  assert.deepEqual(pins!.parts, pin.parts, 'the very pinned part, re-injected');
  assert.equal(((pins!.parts as JsonObject[])[0]!.content as JsonObject[])[0]!.metadata, PIN_METADATA);
  assert.deepEqual(kept!.metadata, { [KEPT_USER_MESSAGE_METADATA]: true });
  assert.deepEqual(kept!.parts, sim.snapshots[0]!.messages[1]!.parts as JsonObject[], 'a copy of the user turn');
  assert.deepEqual(
    tail.map((m) => m.kind),
    ['response', 'request', 'response'],
  );
});
