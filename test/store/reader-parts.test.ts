/**
 * The pieces under the File, Postgres and Redis readers: ISO instants and run order, Python `int()`,
 * the payload scanner, URL parsing (never a password in a label or identity), `.pgpass`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StoreError } from '../../src/store/errors.js';
import { compareCodePoints, epochMicros, parseIsoDateTime, pyIsoformat } from '../../src/store/instant.js';
import { Notices } from '../../src/store/notices.js';
import { MessagesHint, PayloadError, scanPayload } from '../../src/store/payload.js';
import { pgpassLookup } from '../../src/store/postgres/pgpass.js';
import { pyInt } from '../../src/store/py-int.js';
import { fileSnapshot, runFromJson } from '../../src/store/records.js';
import { orderRuns } from '../../src/store/run-order.js';
import { postgresTarget, redisTarget } from '../../src/store/server-url.js';
import { storeKind } from '../../src/store/open-reader.js';
import { tempDir } from '../helpers/stores.js';

describe('ISO date-times', () => {
  it('reads what isoformat() writes and what pydantic writes, at microsecond precision', () => {
    const a = parseIsoDateTime('2025-03-01T09:01:10.500000+00:00')!;
    const b = parseIsoDateTime('2025-03-01T09:01:10.5Z')!;
    assert.equal(epochMicros(a), epochMicros(b));
    assert.equal(epochMicros(a), 1740819670500000n);
    assert.equal(pyIsoformat(b), '2025-03-01T09:01:10.500000+00:00');
    assert.equal(pyIsoformat(parseIsoDateTime('2025-03-01T09:00:30Z')!), '2025-03-01T09:00:30+00:00');
    // one microsecond apart: a millisecond Date would tie them
    const c = parseIsoDateTime('2025-03-01T09:01:10.500001+00:00')!;
    assert.equal(epochMicros(c) - epochMicros(a), 1n);
  });

  it('keeps the offset (isoformat shows it) and compares instants across offsets', () => {
    const t = parseIsoDateTime('2025-03-01T10:00:00+01:00')!;
    assert.equal(pyIsoformat(t), '2025-03-01T10:00:00+01:00');
    assert.equal(epochMicros(t), epochMicros(parseIsoDateTime('2025-03-01T09:00:00+00:00')!));
    assert.equal(pyIsoformat(parseIsoDateTime('2025-03-01T10:00:00-05:30:15.250000')!), '2025-03-01T10:00:00-05:30:15.250000');
    assert.equal(parseIsoDateTime('2025-03-01 10:00')!.offsetMicros, null);
    assert.equal(pyIsoformat(parseIsoDateTime('20250301T1000')!), '2025-03-01T10:00:00');
    assert.equal(parseIsoDateTime('2025-03-01T10:00:00.1234567Z')!.microsecond, 123456);
  });

  it('refuses what is not a date-time', () => {
    for (const bad of [
      '',
      'yesterday',
      '2025-02-30T00:00:00',
      '2025-03-01T24:00:00',
      '2025-03-01T10:00:00+25:00',
      '2025-03-01X10:00',
      '2025-03-01T10:00:00 UTC',
    ]) {
      assert.equal(parseIsoDateTime(bad), null, bad);
    }
  });

  it('compares run ids by code point, not UTF-16 unit', () => {
    assert.ok(compareCodePoints('\u{1F600}', '\uFFFD') > 0); // JS `<` says the opposite
    assert.ok(compareCodePoints('a', 'ab') < 0);
    assert.equal(compareCodePoints('x', 'x'), 0);
  });
});

describe('run order', () => {
  const run = (runId: string, startedAt: string) => ({ runId, conversationId: null, parentRunId: null, agentName: null, startedAt });

  it('sorts by instant (mixed offsets), ties by run id code points, rowid = position', () => {
    const notes = new Notices();
    const out = orderRuns(
      [
        run('b', '2025-03-01T10:00:00+01:00'),
        run('a', '2025-03-01T09:00:00+00:00'),
        run('c', '2025-03-01T08:30:00+00:00'),
        run('\u{1F600}', '2025-03-01T09:00:00Z'),
        run('\uFFFD', '2025-03-01T09:00:00Z'),
      ],
      'S',
      notes,
    );
    assert.deepEqual(
      out.map((r) => [r.runId, r.rowid]),
      [
        ['c', 1],
        ['a', 2],
        ['b', 3],
        ['\uFFFD', 4],
        ['\u{1F600}', 5],
      ],
    );
    assert.deepEqual(notes.notices(), []);
  });

  it('reads a naive started_at as UTC; mixed with aware ones, each naive run gets a notice', () => {
    const notes = new Notices();
    const out = orderRuns(
      [run('n', '2025-03-01T09:30:00'), run('a', '2025-03-01T09:00:00+00:00'), run('z', '2025-03-01T10:00:00+00:00')],
      'S',
      notes,
    );
    assert.deepEqual(
      out.map((r) => r.runId),
      ['a', 'n', 'z'],
    );
    assert.deepEqual(
      notes.notices().map((n) => [n.kind, n.runId]),
      [['naive-started-at', 'n']],
    );
    const allNaive = new Notices();
    orderRuns([run('n', '2025-03-01T09:30:00'), run('m', '2025-03-01T09:00:00')], 'S', allNaive);
    assert.deepEqual(allNaive.notices(), [], 'all naive: the order Python gives, nothing to report');
  });

  it('fails the listing on an unparsable started_at, as upstream does', () => {
    assert.throws(
      () => orderRuns([run('x', 'soon')], 'S', new Notices()),
      (e: unknown) => e instanceof StoreError && /run "x" has a started_at/.test(e.message),
    );
  });
});

describe("Python's int() for sequence numbers", () => {
  it('accepts what Python accepts', () => {
    for (const [text, n] of [
      ['7', 7],
      [' 7', 7],
      ['+7', 7],
      ['0_7', 7],
      ['007', 7],
      ['-3', -3],
      ['-0', 0],
      ['\u0663', 3], // Arabic-Indic three
      ['\u{1D7D9}', 1], // mathematical double-struck one
      ['1\u00a0', 1],
    ] as const) {
      assert.equal(pyInt(text), n, JSON.stringify(text));
    }
  });

  it('refuses what Python refuses', () => {
    for (const text of ['', '7.0', '0x7', '_7', '7_', '7__0', '1e3', '\ufeff7', '99999999999999999999'])
      assert.equal(pyInt(text), null, JSON.stringify(text));
  });
});

describe('payload scanner', () => {
  it('cuts the messages value out verbatim and reads the other members', () => {
    const text =
      '{"run_id": "r", "step_index": 2, "mess\\u0061ges": [{"a": "]}\\"x"}, NaN], "state": "complete", "k": {"n": [1, -Infinity]}}';
    const p = scanPayload(text);
    assert.equal(p.messages, '[{"a": "]}\\"x"}, NaN]');
    assert.deepEqual([...p.members.keys()], ['run_id', 'step_index', 'state', 'k']);
    assert.equal(p.members.get('k'), '{"n": [1, -Infinity]}');
  });

  it('keeps the last of repeated members, like a Python dict', () => {
    assert.equal(scanPayload('{"messages": [1], "messages": [2]}').messages, '[2]');
  });

  it('refuses what json.loads refuses (outside messages)', () => {
    for (const bad of [
      '',
      '[]',
      '{"a": 1,}',
      '{"a" 1}',
      '{"a": tru}',
      '{"a": "x\ny"}',
      '{"a": 01}',
      '{"a": 1} x',
      '\ufeff{}',
      '{"a": "\\q"}',
      '{"messages": [1]',
    ]) {
      assert.throws(() => scanPayload(bad), PayloadError, JSON.stringify(bad));
    }
  });

  it("scans only what follows the previous payload's messages, and still cuts exactly", () => {
    const hint = new MessagesHint();
    const cut = (messages: string, tail = ''): string | undefined =>
      scanPayload(`{"run_id": "r", "messages": ${messages}${tail}}`, false, hint).messages;
    assert.equal(cut('[1, "a]"]'), '[1, "a]"]');
    assert.deepEqual(hint.ends, [2, 8]);
    assert.equal(cut('[1, "a]", {"b": ["]"]}]', ', "state": "complete"'), '[1, "a]", {"b": ["]"]}]');
    assert.equal(cut('[1, "a]", {"b": ["]"]}, 2]'), '[1, "a]", {"b": ["]"]}, 2]');
    // the same bytes, a longer scalar: still inside the array, between structure
    assert.equal(cut('[1, "a]", {"b": ["]"]}, 23]'), '[1, "a]", {"b": ["]"]}, 23]');
    assert.equal(cut('[1,"a]"]'), '[1,"a]"]', 'another spelling: a full scan');
    // the last element restamped (another value), a new one appended: the repeated elements are skipped
    assert.equal(cut('[1,"a]", 3]'), '[1,"a]", 3]');
    assert.equal(cut('[1,"b]", [4]]'), '[1,"b]", [4]]');
    assert.deepEqual(hint.ends, [2, 7, 12]);
    assert.throws(() => cut('[1,"a]"', ''), PayloadError);
  });

  it('stops at messages when asked (a file head)', () => {
    const p = scanPayload('{"step_index": 3, "state": "interrupted", "messages": 0}', true);
    assert.equal(p.stopped, true);
    assert.equal(p.members.get('state'), '"interrupted"');
  });
});

describe('records', () => {
  it('a run record: types checked like upstream, metadata only by kind', () => {
    const ok = runFromJson(
      '{"run_id": "r", "conversation_id": null, "parent_run_id": "p", "agent_name": null, "metadata": {"k": 1}, "started_at": "2025-01-01T00:00:00+00:00", "registration_id": null}',
      'w',
    );
    assert.deepEqual(ok, { runId: 'r', conversationId: null, parentRunId: 'p', agentName: null, startedAt: '2025-01-01T00:00:00+00:00' });
    for (const bad of [
      '{"run_id": 1, "started_at": "x"}',
      '{"run_id": "r"}',
      '{"run_id": "r", "started_at": "x", "agent_name": 3}',
      '{"run_id": "r", "started_at": "x", "metadata": []}',
      'nope',
      null,
    ]) {
      assert.throws(() => runFromJson(bad, 'w'), StoreError, String(bad));
    }
  });

  it('a run record reads the same by JSON.parse as by the scan (padding past 2,000 characters forces the scan)', () => {
    const scanned = (text: string): string => text + ' '.repeat(2000);
    const outcome = (text: string): unknown => {
      try {
        return runFromJson(text, 'w');
      } catch (e) {
        return { error: (e as Error).message };
      }
    };
    const rec = (members: string): string => `{${members}, "started_at": "2025-01-01T00:00:00+00:00"}`;
    const cases = [
      rec('"run_id": "r", "conversation_id": "c", "parent_run_id": null, "agent_name": "a", "metadata": {"k": [1, {"x": null}]}'),
      rec('"run\\u005fid": "escaped key"'),
      rec('"run_id": "first", "run_id": "last"'),
      rec('"run_id": "\\ud800 lone surrogate", "agent_name": "\\u00e9t\\u00e9"'),
      rec('"__proto__": {"run_id": "not this"}, "run_id": "own"'),
      rec('"run_id": "r", "extra": NaN'),
      rec('"run_id": "r", "metadata": NaN'),
      rec('"run_id": "r", "metadata": []'),
      rec('"run_id": "r", "metadata": "text"'),
      rec('"run_id": "r", "registration_id": 7'),
      rec('"run_id": 1'),
      rec('"run_id": "tab\tinside"'),
      '["run_id", "r"]',
      '{"run_id": "r", "started_at": 5}',
    ];
    for (const text of cases) assert.deepEqual(outcome(text), outcome(scanned(text)), text);
    assert.equal((outcome(cases[1]!) as { runId: string }).runId, 'escaped key');
    assert.equal((outcome(cases[2]!) as { runId: string }).runId, 'last');
    assert.equal((outcome(cases[4]!) as { runId: string }).runId, 'own');
    assert.equal((outcome(cases[5]!) as { runId: string }).runId, 'r', 'NaN elsewhere: json.loads takes it');
    for (const k of [6, 7, 8, 9, 10, 11, 12, 13]) assert.ok('error' in (outcome(cases[k]!) as object), cases[k]);
    // nested as deep as json.loads gives up: refused, however short the rest
    const deep = `{"run_id": "r", "started_at": "x", "metadata": {"a": ${'['.repeat(1001)}${']'.repeat(1001)}}}`;
    assert.match((outcome(deep) as { error: string }).error, /nesting too deep/);
  });

  it('a File snapshot: missing state is complete, bool is an int (Python), the rest must be right', () => {
    const base = { run_id: 'r', step_index: 1, timestamp: '2025-01-01T00:00:00+00:00', messages: [] as unknown[] };
    const snap = (o: object): ReturnType<typeof fileSnapshot> => fileSnapshot(4, JSON.stringify({ ...base, ...o }));
    assert.equal(snap({}).state, 'complete');
    assert.equal(snap({ state: null }).state, 'complete');
    assert.equal(snap({ state: 'interrupted' }).state, 'interrupted');
    assert.equal(snap({ step_index: true }).snapshot.stepIndex, 1);
    assert.equal(snap({}).snapshot.messages, '[]');
    assert.equal(snap({ state: 'weird' }).state, null);
    for (const o of [
      { step_index: 1.5 },
      { step_index: '1' },
      { timestamp: 5 },
      { timestamp: 'later' },
      { agent_name: 1 },
      { idempotency_key: 2 },
    ]) {
      const r = snap(o);
      assert.equal(r.snapshot.messages, null, JSON.stringify(o));
      assert.equal(r.state, 'complete');
    }
  });
});

describe('server URLs', () => {
  it('Postgres: table prefix validated, password never in label or identity', () => {
    const t = postgresTarget('postgresql://alice:s3cr%40t@DB.example:5433/prod?table=agent_steps&sslmode=require', {});
    assert.equal(t.table, 'agent_steps');
    assert.equal(t.connection.password, 's3cr@t');
    assert.equal(t.connection.sslmode, 'require');
    assert.ok(!t.label.includes('s3cr'), t.label);
    assert.equal(t.label, 'postgresql://alice:***@DB.example:5433/prod?table=agent_steps&sslmode=require');
    assert.equal(t.identity, 'postgresql://db.example:5433/prod?table=agent_steps');
    assert.equal(postgresTarget('postgres://bob@h/d', {}).identity, 'postgresql://h:5432/d?table=step_persistence');
    assert.ok(!postgresTarget('postgresql://h/d?password=hunter2', {}).label.includes('hunter2'));
    // a capital is folded as Postgres folds upstream's unquoted names (docs/backends.md, "Table names")
    assert.equal(postgresTarget('postgresql://h/d?table=Bad', {}).identity, 'postgresql://h:5432/d?table=bad');
    for (const bad of [
      'postgresql://h/d?table=9bad',
      'postgresql://h/d?table=x;drop',
      `postgresql://h/d?table=${'a'.repeat(41)}`,
      'postgresql://h/d?tabel=x',
      'postgresql://h/d?sslmode=maybe',
    ]) {
      assert.throws(() => postgresTarget(bad, {}), StoreError, bad);
    }
  });

  it('Redis: prefix and db, password never in label or identity', () => {
    const t = redisTarget('rediss://user:pw%21@cache:6380/3?prefix=team%3Asteps');
    assert.deepEqual(
      [t.host, t.port, t.db, t.username, t.password, t.tls, t.prefix],
      ['cache', 6380, 3, 'user', 'pw!', true, 'team:steps'],
    );
    assert.equal(t.label, 'rediss://user:***@cache:6380/3?prefix=team%3Asteps');
    assert.equal(t.identity, 'redis://cache:6380/3?prefix=team%3Asteps');
    assert.equal(redisTarget('redis://localhost').prefix, 'pydantic-ai-harness:step');
    assert.equal(redisTarget('redis://:only@h/0').password, 'only');
    for (const bad of ['redis://h/x', 'redis://h/0?db=1', 'redis://[bad']) assert.throws(() => redisTarget(bad), StoreError, bad);
    assert.throws(
      () => redisTarget('redis://u:topsecret@[bad'),
      (e: unknown) => e instanceof StoreError && !e.message.includes('topsecret'),
    );
  });

  it('what --db names: servers by scheme, MongoDB refused, directories are FileStepStores', () => {
    assert.equal(storeKind('postgres://h/d'), 'postgres');
    assert.equal(storeKind('POSTGRESQL://h/d'), 'postgres');
    assert.equal(storeKind('rediss://h'), 'redis');
    assert.equal(storeKind(tempDir()), 'file');
    assert.equal(storeKind('/no/such.db'), 'sqlite');
    assert.throws(
      () => storeKind('mongodb://u:pw@h/x'),
      (e: unknown) => e instanceof StoreError && /not supported yet/.test(e.message) && !e.message.includes('pw'),
    );
  });
});

describe('.pgpass', () => {
  it('first matching line, wildcards and escapes; ignored when others may read it', () => {
    const dir = tempDir();
    const file = join(dir, 'pgpass');
    writeFileSync(file, '# comment\nother:5432:*:*:nope\n127.0.0.1:*:db\\:x:reader:pa\\:ss\n*:*:*:reader:fallback\n');
    chmodSync(file, 0o600);
    const env = { PGPASSFILE: file };
    assert.equal(pgpassLookup({ host: '127.0.0.1', port: '5999', database: 'db:x', user: 'reader' }, env), 'pa:ss');
    assert.equal(pgpassLookup({ host: 'elsewhere', port: '1', database: 'd', user: 'reader' }, env), 'fallback');
    assert.equal(pgpassLookup({ host: 'elsewhere', port: '1', database: 'd', user: 'writer' }, env), undefined);
    chmodSync(file, 0o644);
    assert.equal(pgpassLookup({ host: 'elsewhere', port: '1', database: 'd', user: 'reader' }, env), undefined);
  });
});
