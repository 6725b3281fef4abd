import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_JSON_DEPTH, parseJson, parseJsonByHand, parseNatively } from '../../src/py/json-parse.js';
import type { JsonValue } from '../../src/py/json-value.js';
import { jsonShape as shape } from '../helpers/json-shape.js';
import { draws } from '../helpers/draws.js';

function outcome(parse: () => JsonValue): unknown {
  try {
    return shape(parse());
  } catch (e) {
    return ['error', (e as Error).message];
  }
}

/** parseJson (native where it can) answers exactly as the hand parser, errors included. */
function assertSame(text: string, start = 0, end = text.length): void {
  // compared as JSON text: deepEqual recurses too deep for the nesting tests
  assert.equal(
    JSON.stringify(outcome(() => parseJson(text, start, end))),
    JSON.stringify(outcome(() => parseJsonByHand(text, start, end))),
    JSON.stringify(text.slice(start, end)),
  );
}

const ADVERSARIAL = [
  '{"x": 1.0}',
  '{"x": 1}',
  '{"x":1e0}',
  '{"x" :\n 10E-1}',
  '{"x": -0}',
  '{"x": -0.0}',
  '[1.0]',
  '[1, 2.50]',
  '[1,\t3e2]',
  '1.0',
  ' 2e1 ',
  '7',
  '{"big": 9007199254740993}',
  '{"big": -9007199254740993}',
  '{"big": 1234567890123456}',
  '[123456789012345678901234567890]',
  '{"x": 1e400}',
  '{"x": NaN}',
  '{"x": -Infinity}',
  '[Infinity]',
  '{"2": 1, "1": 2}',
  '{"a": 1, "0": 2}',
  '{"a": {"b": 1, "10": 2}}',
  '{"\\u0031": "escaped integer key", "a": 1}',
  '{"a": 1, "\\u0030": 2}',
  '{"-1": 1, "1.5": 2, "01": 3}',
  '{"4294967295": 1, "a": 2}',
  '{"a": 1, "b": 2, "a": 3}',
  '{"__proto__": {"x": 1}, "y": 2}',
  '{"__proto__": 1, "__proto__": 2}',
  '{"constructor": 1, "toString": 2, "hasOwnProperty": 3}',
  '{"t": "08:00:05.750000Z", "n": 3}',
  '{"t": "a\\": 1.5", "n": 3}',
  '{"t": "[1.5, 2]", "n": 3}',
  '["\\ud800", "\\udc80x", "\\ud83d\\ude00", "\\u0000"]',
  '["tab\there"]',
  '["nl\nhere"]',
  '["\u2028\u2029\u007f"]',
  '\ufeff{"a": 1}',
  '{"a": 1} x',
  '{"a": 1,}',
  '[1,]',
  '{"a" 1}',
  '',
  '   ',
  '[01]',
  '[-]',
  '[1.]',
  '[.5]',
  '["\\x"]',
  '["\\u12"]',
  '{"a": tru}',
  ' \r\n\t{ "a" : [ true , false , null ] } \r\n\t',
  '{"a": "x\\"y"}',
  '{"k\\"": 1.5}',
  '{"k\\\\": 1.5}',
];

describe('native JSON.parse path', () => {
  test('parses adversarial texts exactly as the hand parser (values, key order, int vs float, errors)', () => {
    for (const t of ADVERSARIAL) assertSame(t);
  });

  test('sub-ranges of a larger text, as replay asks for them', () => {
    const t = '[{"a": 1.0}, {"b": 2}, {"3": 4, "c": 5}]';
    assertSame(t, 1, 11);
    assertSame(t, 13, 21);
    assertSame(t, 23, 40);
    assertSame(t, 0, t.length);
  });

  test('goes by hand where the native result would lose something, and natively otherwise', () => {
    for (const t of ['{"x": 1.0}', '[2e1]', '{"2": 1}', '{"\\u0031": 1}', '{"x": NaN}', '{"n": 12345678901234567}']) {
      assert.equal(parseNatively(t, 0, t.length), undefined, t);
    }
    for (const t of ['{"x": 1, "t": "08:00:05.75"}', '["\\ud800"]', '{"a": 1, "a": 2}']) {
      assert.notEqual(parseNatively(t, 0, t.length), undefined, t);
    }
  });

  test('nesting at and beyond the depth limit is decided by hand', () => {
    for (const d of [MAX_JSON_DEPTH - 11, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 5 * MAX_JSON_DEPTH]) {
      assertSame('['.repeat(d) + ']'.repeat(d));
      assertSame('{"a":'.repeat(d) + '1' + '}'.repeat(d));
    }
  });

  test('random documents mixing every risky spelling parse the same both ways', () => {
    const rand = draws(12345);
    // what value() made, by kind (scalar, string, array, object): each must be met
    const made = [0, 0, 0, 0];
    let deepest = 0;
    const ws = (): string => ['', ' ', '\n', '\t ', '\r\n'][rand(5)]!;
    const scalars = ['0', '-0', '7', '255', '256', '-3', '1.0', '2.5e3', '1E2', '-0.0', '12345678901234567', 'true', 'false', 'null'];
    const strings = ['"a"', '"08:00:05.75"', '"x, 1.5"', '"\\": 2.0"', '"\\u0031"', '"\\ud800"', '"é\\n"', '"[1.5]"'];
    const keys = ['"a"', '"b"', '"a"', '"0"', '"12"', '"\\u0032"', '"__proto__"', '"x y"', '"1a"', '"-1"'];
    const value = (depth: number): string => {
      const k = rand(depth > 3 ? 2 : 4);
      made[k]!++;
      deepest = Math.max(deepest, depth);
      if (k === 0) return scalars[rand(scalars.length)]!;
      if (k === 1) return strings[rand(strings.length)]!;
      const n = rand(4);
      const items = Array.from({ length: n }, () =>
        k === 2 ? ws() + value(depth + 1) + ws() : ws() + keys[rand(keys.length)]! + ws() + ':' + ws() + value(depth + 1) + ws(),
      );
      return k === 2 ? `[${items.join(',')}]` : `{${items.join(',')}}`;
    };
    let native = 0;
    for (let i = 0; i < 3000; i++) {
      const t = ws() + value(0) + ws();
      assertSame(t);
      if (parseNatively(t, 0, t.length) !== undefined) native++;
    }
    assert.ok(native > 300, `the native path is taken for many of them (${native})`);
    assert.ok(made.every((n) => n > 500) && deepest >= 4, `every kind of value, nested: ${made} to depth ${deepest}`);
  });
});
