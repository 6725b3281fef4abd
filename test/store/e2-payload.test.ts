/**
 * The newer RedisStepStore payload (E2) is written by pydantic-core, not `json.dumps`: compact, raw
 * UTF-8, and floats in its own shortest form (`1e-7`, `9.99e-6`, `0.00001`, `1e16`). Python re-parses
 * it to the same values, so convsearch must render and key it exactly as the `json.dumps` text of the
 * same values (spec backends.md §3, §7.6): floats from the double (`1e-07`), never echoed lexemes, and
 * message keys that compare numbers by value (a Redis store can mix E1 and E2 payloads).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pyJsonDumpsAscii, rawNumber } from '../../scripts/lib/py-json.js';
import { request, response, textPart, toolCallPart, toolReturnPart, userPromptPart } from '../../scripts/lib/messages.js';
import { parseJson } from '../../src/py/json-parse.js';
import { RunReplayer } from '../../src/history/replay.js';
import { pyJsonDumps } from '../../src/py/repr.js';
import { renderRecordMessage } from '../../src/render/record.js';
import type { MediaCache } from '../../src/history/media.js';
import { redisSnapshot } from '../../src/store/records.js';
import type { StoreSnapshot } from '../../src/store/reader.js';

/** One float written two ways: Python's `repr` (json.dumps) and pydantic-core's. */
class Dual {
  constructor(
    readonly py: string,
    readonly e2: string,
  ) {}
}

const FLOATS = [
  new Dual('1e-07', '1e-7'),
  new Dual('9.99e-06', '9.99e-6'),
  new Dual('1e-05', '0.00001'),
  new Dual('1.5e-05', '0.000015'),
  new Dual('0.0001', '0.0001'),
  new Dual('1e+16', '1e16'),
  new Dual('1e+22', '1e22'),
  new Dual('-2.5e-10', '-2.5e-10'),
  new Dual('1.7976931348623157e+308', '1.7976931348623157e308'),
  new Dual('5e-324', '5e-324'),
  new Dual('1.0', '1.0'),
  new Dual('-0.0', '-0.0'),
  new Dual('123456789012345678901234567890', '123456789012345678901234567890'),
];
const TEXT = 'caf\u00e9 \u65e5\u672c \u{1F642} line\u2028sep del\u007f tab\t quote" back\\ ctl\u0001';

type Tree = unknown;

/** The tree with every Dual as its `json.dumps` lexeme (for pyJsonDumpsAscii). */
function pyTree(v: Tree): Tree {
  if (v instanceof Dual) return rawNumber(v.py);
  if (Array.isArray(v)) return v.map(pyTree);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, pyTree(x)]));
  return v;
}

/** pydantic-core's `model_dump_json`: compact, raw UTF-8 (only controls, `"` and `\` escaped), its float lexemes. */
function e2Dumps(v: Tree): string {
  if (v instanceof Dual) return v.e2;
  if (Array.isArray(v)) return `[${v.map(e2Dumps).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${e2Dumps(x)}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

function conversation(extra: boolean): Tree[] {
  const t = '2026-01-02T03:04:05Z';
  const args = Object.fromEntries(FLOATS.map((f, i) => [`x${i}`, f]));
  const msgs: Tree[] = [
    request([userPromptPart(`measure ${TEXT}`, { timestamp: t })], { timestamp: t }),
    response([textPart('calling'), toolCallPart('measure', args, 'call_1')], { timestamp: t }),
    request([toolReturnPart('measure', { values: FLOATS, note: TEXT }, 'call_1', { timestamp: t })], { timestamp: t }),
  ];
  if (extra) msgs.push(response([textPart(`done ${TEXT}`)], { timestamp: t }));
  return msgs;
}

const SQLITE_TEXT = (extra: boolean): string => pyJsonDumpsAscii(pyTree(conversation(extra)));

function e2Payload(extra: boolean): string {
  return `{"run_id":"r1","step_index":1,"timestamp":"2026-01-02T03:04:05.250000Z","messages":${e2Dumps(conversation(extra))},"conversation_id":null,"parent_run_id":"p\u00e9","agent_name":null,"state":"complete"}`;
}

function e1Payload(extra: boolean): string {
  return pyJsonDumpsAscii({
    run_id: 'r1',
    step_index: 1,
    conversation_id: null,
    parent_run_id: null,
    agent_name: null,
    timestamp: '2026-01-02T03:04:05.250000+00:00',
    state: 'complete',
    messages: pyTree(conversation(extra)),
  });
}

const NO_MEDIA = { get: () => null } as unknown as MediaCache;

function replay(rows: StoreSnapshot[]): unknown[] {
  const r = new RunReplayer('r1', NO_MEDIA);
  for (const row of rows) r.add(row);
  const res = r.result();
  assert.deepEqual(res.skipped, []);
  return res.messages.map((m) => ({ doc: renderRecordMessage(m).text, parts: renderRecordMessage(m).parts, keys: m.keys }));
}

describe('Redis E2 payloads (pydantic-core JSON)', () => {
  it('the payload yields its messages text verbatim and the timestamp as isoformat()', () => {
    const s = redisSnapshot(7, e2Payload(false));
    assert.equal(s.messages, e2Dumps(conversation(false)));
    assert.equal(s.timestamp, '2026-01-02T03:04:05.250000+00:00');
    assert.equal(s.stepIndex, 1);
    assert.equal(s.seq, 7);
  });

  it('parses to the values json.dumps wrote: floats from the double, strings decoded alike', () => {
    const e2 = redisSnapshot(1, e2Payload(false)).messages as string;
    assert.notEqual(e2, SQLITE_TEXT(false));
    assert.equal(pyJsonDumps(parseJson(e2)), pyJsonDumps(parseJson(SQLITE_TEXT(false))));
    const dumped = pyJsonDumps(parseJson(e2));
    assert.ok(dumped.includes('1e-07') && dumped.includes('9.99e-06') && dumped.includes('1e-05') && dumped.includes('1.5e-05'));
    assert.ok(dumped.includes('1e+16') && dumped.includes('-0.0') && dumped.includes('123456789012345678901234567890'));
    assert.ok(!dumped.includes('1e-7,') && !dumped.includes('0.00001'));
  });

  it('renders and keys every message exactly as the json.dumps text (E1 payload, SQLite column)', () => {
    const e2 = replay([redisSnapshot(1, e2Payload(true))]);
    const e1 = replay([redisSnapshot(1, e1Payload(true))]);
    const sqlite = replay([{ seq: 1, stepIndex: 1, timestamp: 'x', messages: SQLITE_TEXT(true) }]);
    assert.deepEqual(e2, sqlite);
    assert.deepEqual(e1, sqlite);
    const call = (e2[1] as { doc: string }).doc;
    assert.match(call, /1e-07/);
    assert.doesNotMatch(call, /1e-7\b/);
  });

  it('a store mixing E1 and E2 payloads dedupes by value: the later snapshot extends the record', () => {
    for (const [first, second] of [
      [e1Payload, e2Payload],
      [e2Payload, e1Payload],
    ] as const) {
      const mixed = replay([redisSnapshot(1, first(false)), redisSnapshot(2, second(true))]);
      const plain = replay([{ seq: 1, stepIndex: 1, timestamp: 'x', messages: SQLITE_TEXT(true) }]);
      assert.equal(mixed.length, 4);
      assert.deepEqual(
        mixed.map((m) => (m as { keys: unknown }).keys),
        plain.map((m) => (m as { keys: unknown }).keys),
      );
    }
  });

  it('validates like the strict pydantic model: bad step, state or timestamp make the snapshot unreadable', () => {
    const base = JSON.parse(e2Payload(false)) as Record<string, unknown>;
    const variant = (patch: Record<string, unknown>): string => JSON.stringify({ ...base, ...patch });
    for (const [patch, problem] of [
      [{ step_index: 1.5 }, /step_index/],
      [{ step_index: true }, /step_index/],
      [{ step_index: '1' }, /step_index/],
      [{ state: null }, /state/],
      [{ state: 'paused' }, /state/],
      [{ timestamp: 'yesterday' }, /timestamp/],
      [{ run_id: 5 }, /run_id/],
      [{ agent_name: 3 }, /agent_name/],
    ] as const) {
      const s = redisSnapshot(1, variant(patch));
      assert.equal(s.messages, null, JSON.stringify(patch));
      assert.match((s as { problem: string }).problem, problem);
    }
    const { state: _, messages: m, ...rest } = base;
    assert.equal(typeof redisSnapshot(1, JSON.stringify({ ...rest, messages: m })).messages, 'string', 'a missing state is complete');
    assert.match((redisSnapshot(1, JSON.stringify(rest)) as { problem: string }).problem, /no messages/);
    assert.match((redisSnapshot(1, '{"run_id": "r1", "messages": [}') as { problem: string }).problem, /not a JSON object/);
    assert.match((redisSnapshot(1, null) as { problem: string }).problem, /UTF-8/);
  });
});
