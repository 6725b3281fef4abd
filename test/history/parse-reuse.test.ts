import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cloneJson, instructionDeltaPart, simulateRun, textPart, toolCallPart, type JsonObject } from '../../scripts/lib/messages.js';
import { objectMembers } from '../../src/py/json-scan.js';
import { RunReplayer, type ParsedSnapshot } from '../../src/history/replay.js';
import type { MediaCache } from '../../src/history/media.js';
import { assistantMsg, at, dumps, userMsg } from '../helpers/stores.js';

// No snapshot here carries media markers, so the lookup is never asked.
const NO_MEDIA = { get: () => null } as unknown as MediaCache;

function replayer(seed: ParsedSnapshot | null = null): RunReplayer {
  return new RunReplayer('r1', NO_MEDIA, [], seed);
}

/** Feeds the texts in order; returns the last snapshot as parsed. */
function parsed(texts: string[], seed: ParsedSnapshot | null = null): { last: ParsedSnapshot; r: RunReplayer } {
  const r = replayer(seed);
  texts.forEach((messages, i) => {
    r.add({ seq: i + 1, stepIndex: i, timestamp: null, messages });
  });
  return { last: r.lastSnapshot!, r };
}

/** What the snapshot parses to on its own, with nothing to reuse. */
function alone(text: string): ParsedSnapshot {
  return parsed([text]).last;
}

function assertSameParse(got: ParsedSnapshot, want: ParsedSnapshot): void {
  assert.equal(got.elements.length, want.elements.length);
  got.elements.forEach((el, i) => {
    const w = want.elements[i]!;
    assert.deepEqual(el.message, w.message, `element ${i}`);
    assert.deepEqual(el.keys, w.keys, `element ${i} keys`);
    assert.equal(el.summary, w.summary, `element ${i} summary`);
  });
}

const sim = simulateRun({
  runId: 'r1',
  conversationId: 'c1',
  startedAt: at(0),
  instructions: 'be precise',
  prompt: 'audit the vault',
  steps: [
    { parts: [toolCallPart('open', { door: 1 }, 'c-1')], results: [{ content: 'door 1 open' }] },
    { parts: [toolCallPart('open', { door: 2, force: 1.5 }, 'c-2')], results: [{ content: { rows: [1, 2], note: 'ok' } }] },
    { parts: [textPart('vault audited')] },
  ],
});
const texts = sim.snapshots.map((s) => dumps(s.messages));

describe('parse reuse between snapshots equals a parse from nothing', () => {
  test('a late-stamped request reuses the earlier parse of its parts and keys, and takes the new stamps', () => {
    const { last, r } = parsed(texts.slice(0, 2));
    const before = alone(texts[0]!);
    assertSameParse(last, alone(texts[1]!));
    // the stamped request (element 2) differs from its first save only in keyless fields
    assert.notEqual(texts[0]!.length, 0);
    assert.equal(last.elements[2]!.message.raw.get('instructions'), 'be precise');
    assert.equal(before.elements[2]!.message.raw.get('instructions'), null);
    assert.deepEqual(last.elements[2]!.keys, before.elements[2]!.keys);
    assert.equal(r.snapshotsRead, 2);
  });

  test('the parts of a restamped element are shared with the earlier parse (the fast path is taken)', () => {
    const r = replayer();
    r.add({ seq: 1, stepIndex: 0, timestamp: null, messages: texts[0]! });
    const first = r.lastSnapshot!;
    r.add({ seq: 2, stepIndex: 1, timestamp: null, messages: texts[1]! });
    assert.equal(r.lastSnapshot!.elements[2]!.message.parts, first.elements[2]!.message.parts);
    assert.notEqual(r.lastSnapshot!.elements[2]!.message, first.elements[2]!.message);
  });

  test('every snapshot of a simulated run parses the same after its predecessors as on its own', () => {
    for (let k = 1; k <= texts.length; k++) assertSameParse(parsed(texts.slice(0, k)).last, alone(texts[k - 1]!));
  });

  const base = [userMsg('first question', 1), assistantMsg('first answer', 2)];
  const variants: Array<[string, (m: JsonObject[]) => void, boolean]> = [
    ['a changed part content', (m) => ((m[0]!.parts as JsonObject[])[0]!.content = 'another question'), false],
    ['instructions on a response (keyed there)', (m) => (m[1]!.instructions = 'x'), false],
    ['a new part', (m) => (m[0]!.parts as JsonObject[]).push(instructionDeltaPart('d-1', 'be brief')), false],
    ['changed metadata', (m) => (m[0]!.metadata = { k: 1 }), false],
    ['request timestamp and run id', (m) => Object.assign(m[0]!, { timestamp: '2026-01-02T03:04:09Z', run_id: 'r1' }), true],
    ['request instructions', (m) => (m[0]!.instructions = 'fresh\u00e9 \ud83d\ude00'), true],
    ['response conversation id', (m) => (m[1]!.conversation_id = 'c1'), true],
  ];
  for (const [name, mutate, shared] of variants) {
    test(`${name}: ${shared ? 'restamped' : 'parsed again'}, equal to a fresh parse`, () => {
      const after = cloneJson(base);
      mutate(after);
      const r = replayer();
      r.add({ seq: 1, stepIndex: 0, timestamp: null, messages: dumps(base) });
      const first = r.lastSnapshot!;
      r.add({ seq: 2, stepIndex: 1, timestamp: null, messages: dumps(after) });
      const last = r.lastSnapshot!;
      assertSameParse(last, alone(dumps(after)));
      const changed = last.elements.findIndex((el, i) => !isDeepEqual(el.message.raw, first.elements[i]!.message.raw));
      assert.ok(changed >= 0, 'the variant changes an element');
      // restamped elements share the earlier parse of their parts; the others were parsed again
      assert.equal(last.elements[changed]!.message.parts === first.elements[changed]!.message.parts, shared);
    });
  }

  test('whitespace-only differences reuse the element as it was', () => {
    const a = dumps(base);
    const b = a.replace('"kind": "request"', '"kind" :  "request"');
    assert.notEqual(a, b);
    const { last } = parsed([a, b]);
    assertSameParse(last, alone(b));
  });

  test('an escaped spelling of a stamped field name takes the full parse and still parses the same', () => {
    const stamped = cloneJson(base);
    stamped[0]!.run_id = 'r1';
    const b = dumps(stamped).replace('"run_id": "r1"', '"\\u0072un_id": "r1"');
    assert.notEqual(b, dumps(stamped));
    const { last } = parsed([dumps(base), b]);
    assertSameParse(last, alone(b));
  });

  test('a malformed stamped value skips the snapshot with the error a fresh parse reports', () => {
    const stamped = cloneJson(base);
    stamped[0]!.run_id = 'r1';
    const b = dumps(stamped).replace('"run_id": "r1"', '"run_id": r1');
    const reuse = parsed([dumps(base), b]).r;
    const fresh = parsed([b]).r;
    assert.equal(reuse.skipped.length, 1);
    assert.equal(reuse.skipped[0]!.reason, fresh.skipped[0]!.reason);
  });

  test("a run's first snapshot reuses the seed (the conversation's last snapshot) and equals a fresh parse", () => {
    const run1 = parsed(texts);
    const next = sim.snapshots.at(-1)!.messages.concat([userMsg('a follow-up in run 2', 30)]);
    const seeded = parsed([dumps(next)], run1.last);
    assertSameParse(seeded.last, alone(dumps(next)));
    assert.equal(seeded.last.elements[0]!.message, run1.last.elements[0]!.message, 'inherited elements are reused');
    // the seed only serves parsing: the new run's record starts empty
    assert.equal(seeded.r.result().messages.length, next.length);
  });
});

describe('objectMembers', () => {
  test('returns key and trimmed value ranges of each member', () => {
    const t = ' {"a" : 1 , "b":{"c":[1,"]}"]}, "d\\"":"x"} ';
    const m = objectMembers(t, 1, t.length - 1)!;
    const parts = [];
    for (let i = 0; i < m.length; i += 4) parts.push([t.slice(m[i]!, m[i + 1]!), t.slice(m[i + 2]!, m[i + 3]!)]);
    assert.deepEqual(parts, [
      ['"a"', '1'],
      ['"b"', '{"c":[1,"]}"]}'],
      ['"d\\""', '"x"'],
    ]);
  });

  test('is null for what is not one object', () => {
    for (const t of ['[1]', '{"a" 1}', '{"a":1,}', '{"a":1} x', '{"a":}', '{a:1}', '{"a":"x}']) {
      assert.equal(objectMembers(t, 0, t.length), null, t);
    }
    assert.deepEqual(objectMembers('{ }', 0, 3), []);
  });
});

function isDeepEqual(a: unknown, b: unknown): boolean {
  try {
    assert.deepEqual(a, b);
    return true;
  } catch {
    return false;
  }
}
