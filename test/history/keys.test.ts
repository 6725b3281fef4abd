import { test } from 'node:test';
import assert from 'node:assert/strict';
import { draws } from '../helpers/draws.js';
import {
  binaryContent,
  instructionDeltaPart,
  request,
  response,
  textPart,
  thinkingPart,
  toolReturnPart,
  userPromptPart,
} from '../../scripts/lib/messages.js';
import { parseJson } from '../../src/py/json-parse.js';
import { LONG_STRING, messageKeys } from '../../src/history/keys.js';
import { messageKeys as keysBefore } from '../helpers/keys-before.js';
import { toMessage, unknownPartKinds } from '../../src/history/messages.js';
import { renderMessage, searchText } from '../../src/render/message.js';
import { at, dumps, parseMessage } from '../helpers/stores.js';

const user = (content: string, ts = at(1)) => request([userPromptPart(content, { timestamp: ts })]);

test('the loose key ignores message timestamp, run_id, conversation_id and instructions', () => {
  const a = user('hi');
  const b = { ...user('hi'), timestamp: '2026-05-05T00:00:00Z', run_id: 'r9', conversation_id: 'c9', instructions: 'be nice' };
  assert.equal(messageKeys(parseMessage(a)).loose, messageKeys(parseMessage(b)).loose);
  assert.equal(messageKeys(parseMessage(a)).strict, messageKeys(parseMessage(b)).strict);
  const r1 = response([textPart('x')], { timestamp: at(1), runId: 'a' });
  const r2 = response([textPart('x')], { timestamp: at(2), runId: 'b', conversationId: 'c' });
  assert.equal(messageKeys(parseMessage(r1)).loose, messageKeys(parseMessage(r2)).loose);
});

test('part timestamps and other fields still count', () => {
  assert.notEqual(messageKeys(parseMessage(user('hi', at(1)))).loose, messageKeys(parseMessage(user('hi', at(2)))).loose);
  assert.notEqual(messageKeys(parseMessage(user('hi'))).loose, messageKeys(parseMessage(user('ho'))).loose);
  const meta = { ...user('hi'), metadata: { k: 'v' } };
  assert.notEqual(messageKeys(parseMessage(user('hi'))).loose, messageKeys(parseMessage(meta)).loose);
});

test('field order, absent defaults and the base64 alphabet do not change the key', () => {
  const text = dumps([user('hi')]);
  const reordered = '[{"kind": "request", "parts": [{"part_kind": "user-prompt", "timestamp": "2026-01-02T03:04:06Z", "content": "hi"}]}]';
  const k1 = messageKeys(toMessage((parseJson(text) as unknown[])[0] as never, 0));
  const k2 = messageKeys(toMessage((parseJson(reordered) as unknown[])[0] as never, 0));
  assert.equal(k1.loose, k2.loose);

  const bin = (data: string) => {
    const part = toolReturnPart('t', [{ ...binaryContent(new Uint8Array([0xfb, 0xff, 0xfe]), 'image/png'), data }], 'c1', {
      timestamp: at(1),
    });
    return parseMessage(request([part]));
  };
  assert.equal(messageKeys(bin('-__-')).loose, messageKeys(bin('+//+')).loose, 'URL-safe and standard base64 of the same bytes');
  assert.notEqual(messageKeys(bin('-__-')).loose, messageKeys(bin('AAAA')).loose);
});

test('unknown part kinds render nothing but stay in the key', () => {
  const plain = request([userPromptPart('hello', { timestamp: at(1) })]);
  const withUnknown = { ...plain, parts: [...(plain.parts as object[]), { part_kind: 'future-thing', content: 'SECRETWORD' }] };
  const m = parseMessage(withUnknown);
  assert.equal(searchText(renderMessage(m)), 'User: hello');
  assert.deepEqual(unknownPartKinds(m), ['future-thing']);
  assert.notEqual(messageKeys(m).loose, messageKeys(parseMessage(plain)).loose);
  const other = { ...plain, parts: [...(plain.parts as object[]), { part_kind: 'future-thing', content: 'OTHER' }] };
  assert.notEqual(messageKeys(m).loose, messageKeys(parseMessage(other)).loose);
  // a response part kind that only exists on requests is unknown there
  const resp = response([textPart('a'), { part_kind: 'user-prompt', content: 'x' }], { timestamp: at(1) });
  assert.deepEqual(unknownPartKinds(parseMessage(resp)), ['user-prompt']);
});

test('a binary in a user prompt keys the same from either base64 alphabet (inline vs restored from media)', () => {
  const bin = (data: string) =>
    parseMessage(
      request([
        userPromptPart(['look', { ...binaryContent(new Uint8Array([0xfb, 0xff, 0xfe]), 'image/png'), data }], { timestamp: at(1) }),
      ]),
    );
  assert.equal(messageKeys(bin('-__-')).loose, messageKeys(bin('+//+')).loose);
  assert.notEqual(messageKeys(bin('-__-')).loose, messageKeys(bin('AAAA')).loose);
});

test('dicts inside tool-return content are free-form: key order and null values count', () => {
  const ret = (content: string) =>
    toMessage(
      (
        parseJson(
          `[{"parts": [{"tool_name": "t", "content": ${content}, "tool_call_id": "c1", "part_kind": "tool-return", "timestamp": "2026-01-02T03:04:06Z"}], "kind": "request"}]`,
        ) as never[]
      )[0]!,
      0,
    );
  assert.notEqual(messageKeys(ret('[{"a": 1, "b": 2}]')).loose, messageKeys(ret('[{"b": 2, "a": 1}]')).loose);
  assert.notEqual(messageKeys(ret('[{"a": null}]')).loose, messageKeys(ret('[{}]')).loose);
  assert.notEqual(messageKeys(ret('{"a": 1, "b": 2}')).loose, messageKeys(ret('{"b": 2, "a": 1}')).loose);
  assert.equal(messageKeys(ret('[{"a": 1}]')).loose, messageKeys(ret('[{"a": 1}]')).loose);
});

test('a long string value hashed in slices gives the keys of the whole (surrogate pairs, lone surrogates, escapes at every slice edge)', () => {
  // slices of 8 code units: pairs, lone halves, quotes, backslashes and control characters fall on every edge
  const pieces = ['ab"c\\d\u0001', '😀x😀', '\ud800', 'q\udc00r', '\n\t', 'é漢字', '\u2028\u2029', '😀😀😀😀😀'];
  const texts = Array.from({ length: 40 }, (_, i) => pieces.slice(i % pieces.length).join('') + 'y'.repeat(i) + pieces.join(''));
  for (const text of texts) {
    const msgs = [
      request([userPromptPart(text, { timestamp: at(1) })]),
      request([toolReturnPart('t', { out: text, also: [text, 1] }, 'c1', { timestamp: at(2) })]),
      response([textPart(text)], { timestamp: at(3) }),
    ];
    for (const m of msgs) {
      const parsed = parseMessage(m);
      const whole = messageKeys(parsed, Number.POSITIVE_INFINITY);
      for (const long of [1, 2, 7, 8]) assert.deepEqual(messageKeys(parsed, long), whole, `${JSON.stringify(text)} in slices of ${long}`);
    }
  }
  // and a change anywhere in a long value changes the key
  const base = parseMessage(request([userPromptPart('z'.repeat(50), { timestamp: at(1) })]));
  const edited = parseMessage(request([userPromptPart('z'.repeat(49) + 'q', { timestamp: at(1) })]));
  assert.notEqual(messageKeys(base, 8).loose, messageKeys(edited, 8).loose);
});

test('the keys equal those of the earlier piece-by-piece canonicalization (kept in test/helpers/keys-before.ts)', () => {
  const odd = ['ab"c\\d\u0001', '😀x😀', '\ud800', 'q\udc00r', '\n\t', 'é漢字', '\u2028\u2029', '', 'x'.repeat(40)];
  const values = [...odd, 1, 1.5, -0.0, 2 ** 60, null, true, [1, 'a', null], { b: 1, a: [{ z: null }] }, { kind: 'binary', data: '-__-' }];
  const messages = [
    request([userPromptPart('hi', { timestamp: at(1) })], { instructions: 'be brief' }),
    request([
      userPromptPart(['look', { ...binaryContent(new Uint8Array([0xfb, 0xff]), 'image/png'), data: '-_8=' }], { timestamp: at(1) }),
    ]),
    request([instructionDeltaPart('d1', 'x'), userPromptPart('q', { timestamp: at(2) }), instructionDeltaPart('d2', null)]),
    request([userPromptPart('q', { timestamp: at(2) }), instructionDeltaPart('d1', 'x'), userPromptPart('r', { timestamp: at(3) })]),
    response([textPart('x'), { part_kind: 'future-thing', content: 'SECRET', n: 1.0 }], { timestamp: at(3), runId: 'r' }),
    ...values.map((v, i) => request([toolReturnPart(`t${i}`, v, `c${i}`, { timestamp: at(i) })], { metadata: { v } })),
    ...odd.map((s) => response([textPart(s), thinkingPart(s)], { timestamp: at(4) })),
  ];
  for (const m of messages) {
    const parsed = parseMessage(m);
    for (const long of [Number.POSITIVE_INFINITY, LONG_STRING, 7, 1]) {
      assert.deepEqual(messageKeys(parsed, long), keysBefore(parsed, long), `${JSON.stringify(m).slice(0, 80)} (long ${long})`);
    }
  }
});

test('field names in any order and of any characters key as with the builtin sort (earlier canonicalization)', () => {
  const names = ['b', 'B', 'a', '_', 'A1', 'a0', 'é', 'e', '😀', '\uffff', '\ud800', '', 'part_kind', 'content', 'Z', 'zz', 'z'];
  const rand = draws(5);
  for (let round = 0; round < 200; round++) {
    const shuffled = names.slice(0, 1 + rand(names.length));
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = rand(i + 1);
      [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
    }
    if (!shuffled.includes('part_kind')) shuffled.splice(rand(shuffled.length + 1), 0, 'part_kind');
    const part: Record<string, unknown> = {};
    for (const k of shuffled) part[k] = k === 'part_kind' ? 'future-thing' : `${k}!`;
    const m = parseMessage(response([part as never], { timestamp: at(1) }));
    assert.deepEqual(messageKeys(m), keysBefore(m), JSON.stringify(shuffled));
  }
});

test('field lists met again key as the first time, past the shapes remembered too (sorted-shape cache)', () => {
  // 300 first keys (more than are remembered), each with 20 tails (more than are kept per first key), twice over
  const shapes: string[][] = [];
  for (let f = 0; f < 300; f++)
    for (let t = 0; t < 20; t++) shapes.push([`k${f}`, ...Array.from({ length: 1 + (t % 5) }, (_, i) => `f${(t * 7 + i) % 11}`)]);
  for (let pass = 0; pass < 2; pass++) {
    for (const names of shapes) {
      // the names in the order of the list, then reversed: first keys and insertion orders vary
      const part: Record<string, unknown> = {};
      for (const k of pass === 0 ? names : [...names].reverse()) part[k] = `${k}!`;
      part.part_kind = 'future-thing';
      const m = parseMessage(response([part as never], { timestamp: at(1) }));
      assert.deepEqual(messageKeys(m), keysBefore(m), `${JSON.stringify(names)} (pass ${pass})`);
    }
  }
});

test('strings with every UTF-16 code unit key as when each went through JSON.stringify (earlier canonicalization)', () => {
  for (let block = 0; block < 0x10000; block += 256) {
    const parts = [];
    for (let c = block; c < block + 256; c++) parts.push(textPart(`a${String.fromCharCode(c)}b`));
    const m = parseMessage(response(parts, { timestamp: at(1) }));
    assert.deepEqual(messageKeys(m), keysBefore(m), `code units from ${block.toString(16)}`);
  }
  const pairs = parseMessage(response([textPart('😀 \ud83d\ude00"\\')], { timestamp: at(1) }));
  assert.deepEqual(messageKeys(pairs), keysBefore(pairs));
});
