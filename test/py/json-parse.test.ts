import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonParseError, MAX_JSON_DEPTH, parseJson } from '../../src/py/json-parse.js';
import { splitTopLevelArray } from '../../src/py/json-scan.js';
import { PyFloat, PyInt, type JsonObject, type JsonValue } from '../../src/py/json-value.js';
import { pyJsonDumps, pyRepr } from '../../src/py/repr.js';

// Expectations generated with CPython 3.11: [json text, repr(json.loads(text)), json.dumps(json.loads(text), ensure_ascii=False)]
const DOCS: Array<[string, string, string]> = [
  [
    '{"path": "/tmp/a b", "ok": true, "n": null, "x": 1.0}',
    "{'path': '/tmp/a b', 'ok': True, 'n': None, 'x': 1.0}",
    '{"path": "/tmp/a b", "ok": true, "n": null, "x": 1.0}',
  ],
  [
    '{"q": "caf\u00e9", "n": 1.0, "big": 123456789012345678901, "z": NaN}',
    "{'q': 'caf\u00e9', 'n': 1.0, 'big': 123456789012345678901, 'z': nan}",
    '{"q": "caf\u00e9", "n": 1.0, "big": 123456789012345678901, "z": NaN}',
  ],
  ['{"b":1,"a":[1,2]}', "{'b': 1, 'a': [1, 2]}", '{"b": 1, "a": [1, 2]}'],
  ['{"a": 1, "b": 2, "a": 3}', "{'a': 3, 'b': 2}", '{"a": 3, "b": 2}'],
  ['{"2":1,"1":2}', "{'2': 1, '1': 2}", '{"2": 1, "1": 2}'],
  [
    '{"10": "x", "2": "y", "-1": "z", "1.5": "w"}',
    "{'10': 'x', '2': 'y', '-1': 'z', '1.5': 'w'}",
    '{"10": "x", "2": "y", "-1": "z", "1.5": "w"}',
  ],
  ['[]', '[]', '[]'],
  ['{}', '{}', '{}'],
  ['[[], {}, [[]], {"": {}}]', "[[], {}, [[]], {'': {}}]", '[[], {}, [[]], {"": {}}]'],
  [' \t\r\n[1 , 2 ,\n 3]\n ', '[1, 2, 3]', '[1, 2, 3]'],
  ['"plain"', "'plain'", '"plain"'],
  ['"esc \\" \\\\ \\/ \\b \\f \\n \\r \\t"', "'esc \" \\\\ / \\x08 \\x0c \\n \\r \\t'", '"esc \\" \\\\ / \\b \\f \\n \\r \\t"'],
  ['"\\u0041\\u00e9\\u20AC"', "'A\u00e9\u20ac'", '"A\u00e9\u20ac"'],
  ['"\\ud83d\\ude00"', "'\ud83d\ude00'", '"\ud83d\ude00"'],
  ['"\\ud800"', "'\\ud800'", '"\ud800"'],
  ['"\\udc80x"', "'\\udc80x'", '"\udc80x"'],
  ['"\\ud800\\u0041"', "'\\ud800A'", '"\ud800A"'],
  ['"\\ude00\\ud83d"', "'\\ude00\\ud83d'", '"\ude00\ud83d"'],
  ['"\\u001b[31mred\\u001b[0m"', "'\\x1b[31mred\\x1b[0m'", '"\\u001b[31mred\\u001b[0m"'],
  ['"\u007f"', "'\\x7f'", '"\u007f"'],
  ['"\\u007f\\u0000\\u001f"', "'\\x7f\\x00\\x1f'", '"\u007f\\u0000\\u001f"'],
  ['"\u2028 \u00a0 \u200b"', "'\\u2028 \\xa0 \\u200b'", '"\u2028 \u00a0 \u200b"'],
  ['0', '0', '0'],
  ['-0', '0', '0'],
  ['-0.0', '-0.0', '-0.0'],
  ['0.0', '0.0', '0.0'],
  ['1', '1', '1'],
  ['-1', '-1', '-1'],
  ['255', '255', '255'],
  ['256', '256', '256'],
  ['-5', '-5', '-5'],
  ['123456789012345', '123456789012345', '123456789012345'],
  ['1234567890123456', '1234567890123456', '1234567890123456'],
  ['-9007199254740993', '-9007199254740993', '-9007199254740993'],
  ['123456789012345678901234567890', '123456789012345678901234567890', '123456789012345678901234567890'],
  ['1.5', '1.5', '1.5'],
  ['1e2', '100.0', '100.0'],
  ['1E2', '100.0', '100.0'],
  ['1e-2', '0.01', '0.01'],
  ['-1.25e+3', '-1250.0', '-1250.0'],
  ['1e400', 'inf', 'Infinity'],
  ['-1e400', '-inf', '-Infinity'],
  ['1e-400', '0.0', '0.0'],
  ['0.1', '0.1', '0.1'],
  ['1.0000000000000001', '1.0', '1.0'],
  ['2.5e-5', '2.5e-05', '2.5e-05'],
  ['10000000000000000.0', '1e+16', '1e+16'],
  ['1.7976931348623157e308', '1.7976931348623157e+308', '1.7976931348623157e+308'],
  ['NaN', 'nan', 'NaN'],
  ['Infinity', 'inf', 'Infinity'],
  ['-Infinity', '-inf', '-Infinity'],
  ['[NaN, Infinity, -Infinity]', '[nan, inf, -inf]', '[NaN, Infinity, -Infinity]'],
  ['true', 'True', 'true'],
  ['false', 'False', 'false'],
  ['null', 'None', 'null'],
  ['[true, false, null]', '[True, False, None]', '[true, false, null]'],
  [
    '{"t": "it\'s", "d": "say \\"hi\\"", "both": "\'\\""}',
    "{'t': \"it's\", 'd': 'say \"hi\"', 'both': '\\'\"'}",
    '{"t": "it\'s", "d": "say \\"hi\\"", "both": "\'\\""}',
  ],
  [
    '{"k\\nl": "tab\\there", "e": "\ud83d\ude00", "cr": "\\r"}',
    "{'k\\nl': 'tab\\there', 'e': '\ud83d\ude00', 'cr': '\\r'}",
    '{"k\\nl": "tab\\there", "e": "\ud83d\ude00", "cr": "\\r"}',
  ],
  ['[1, 1.0, "1", [1], {"1": 1}]', "[1, 1.0, '1', [1], {'1': 1}]", '[1, 1.0, "1", [1], {"1": 1}]'],
  [
    '{"nested": {"deep": {"list": [{"a": [1, {"b": null}]}]}}}',
    "{'nested': {'deep': {'list': [{'a': [1, {'b': None}]}]}}}",
    '{"nested": {"deep": {"list": [{"a": [1, {"b": null}]}]}}}',
  ],
  [
    '{"__proto__": 1, "constructor": 2, "toString": 3}',
    "{'__proto__': 1, 'constructor': 2, 'toString': 3}",
    '{"__proto__": 1, "constructor": 2, "toString": 3}',
  ],
  ['{"a": "x", "b": "y", "a": "z", "c": "w", "b": "v"}', "{'a': 'z', 'b': 'v', 'c': 'w'}", '{"a": "z", "b": "v", "c": "w"}'],
];

// [text, json.JSONDecodeError.msg, json.JSONDecodeError.pos] from CPython 3.11.
const BAD: Array<[string, string, number]> = [
  ['', 'Expecting value', 0],
  [' ', 'Expecting value', 1],
  ['[', 'Expecting value', 1],
  [']', 'Expecting value', 0],
  ['{', 'Expecting property name enclosed in double quotes', 1],
  ['}', 'Expecting value', 0],
  ['[1,]', 'Expecting value', 3],
  ['[,1]', 'Expecting value', 1],
  ['{"a":1,}', 'Expecting property name enclosed in double quotes', 7],
  ['{,}', 'Expecting property name enclosed in double quotes', 1],
  ["{'a': 1}", 'Expecting property name enclosed in double quotes', 1],
  ["'x'", 'Expecting value', 0],
  ['01', 'Extra data', 1],
  ['-01', 'Extra data', 2],
  ['00', 'Extra data', 1],
  ['-', 'Expecting value', 0],
  ['--1', 'Expecting value', 0],
  ['+1', 'Expecting value', 0],
  ['1.', 'Extra data', 1],
  ['.5', 'Expecting value', 0],
  ['1e', 'Extra data', 1],
  ['1e+', 'Extra data', 1],
  ['-.5', 'Expecting value', 0],
  ['1.e5', 'Extra data', 1],
  ['tru', 'Expecting value', 0],
  ['True', 'Expecting value', 0],
  ['nul', 'Expecting value', 0],
  ['None', 'Expecting value', 0],
  ['nan', 'Expecting value', 0],
  ['inf', 'Expecting value', 0],
  ['-NaN', 'Expecting value', 0],
  ['+Infinity', 'Expecting value', 0],
  ['infinity', 'Expecting value', 0],
  ['[1 2]', "Expecting ',' delimiter", 3],
  ['{"a" 1}', "Expecting ':' delimiter", 5],
  ['{"a":}', 'Expecting value', 5],
  ['{1: 2}', 'Expecting property name enclosed in double quotes', 1],
  ['{"a":1 "b":2}', "Expecting ',' delimiter", 7],
  ['"abc', 'Unterminated string starting at', 0],
  ['"a\\"', 'Unterminated string starting at', 0],
  ['"\\x41"', 'Invalid \\escape', 1],
  ['"\\u12"', 'Invalid \\uXXXX escape', 2],
  ['"\\u12G4"', 'Invalid \\uXXXX escape', 2],
  ['"\\U0001F600"', 'Invalid \\escape', 1],
  ['"a\nb"', 'Invalid control character at', 2],
  ['"a\tb"', 'Invalid control character at', 2],
  ['"\u0000"', 'Invalid control character at', 1],
  ['"\u001f"', 'Invalid control character at', 1],
  ['1 2', 'Extra data', 2],
  ['[] []', 'Extra data', 3],
  ['{}x', 'Extra data', 2],
  ['nullx', 'Extra data', 4],
  ['[1]]', 'Extra data', 3],
  ['[[1]', "Expecting ',' delimiter", 4],
  ['{"a":[}', 'Expecting value', 6],
  ['[}', 'Expecting value', 1],
  ['\ufeff1', 'Unexpected UTF-8 BOM (decode using utf-8-sig)', 0],
  ['\u00a01', 'Expecting value', 0],
  ['[1,\u00a02]', 'Expecting value', 3],
  ['0x10', 'Extra data', 1],
  ['1_000', 'Extra data', 1],
  ['[01]', "Expecting ',' delimiter", 2],
  ['"\\a"', 'Invalid \\escape', 1],
  ['"\\\n"', 'Invalid \\escape', 1],
  ['[-]', 'Expecting value', 1],
  ['{"a":1}}', 'Extra data', 7],
  ['// c\n1', 'Expecting value', 0],
  ['/* */1', 'Expecting value', 0],
  ['1 // c', 'Extra data', 2],
];

function throwsParse(f: () => unknown, message?: string, position?: number): void {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof JsonParseError, `expected JsonParseError, got ${String(caught)}`);
  if (message !== undefined) assert.equal(caught.message, `${message} at position ${position}`);
  if (position !== undefined) assert.equal(caught.position, position);
}

test('parseJson: repr and json.dumps match CPython for each document', () => {
  for (const [text, repr, dumps] of DOCS) {
    const v = parseJson(text);
    assert.equal(pyRepr(v), repr, `repr of ${JSON.stringify(text)}`);
    assert.equal(pyJsonDumps(v), dumps, `dumps of ${JSON.stringify(text)}`);
  }
});

test('parseJson: measured examples', () => {
  assert.equal(
    pyRepr(parseJson('{"path": "/tmp/a b", "ok": true, "n": null, "x": 1.0}')),
    "{'path': '/tmp/a b', 'ok': True, 'n': None, 'x': 1.0}",
  );
  assert.equal(
    pyJsonDumps(parseJson('{"q": "café", "n": 1.0, "big": 123456789012345678901, "z": NaN}')),
    '{"q": "café", "n": 1.0, "big": 123456789012345678901, "z": NaN}',
  );
  assert.equal(pyJsonDumps(parseJson('{"b":1,"a":[1,2]}')), '{"b": 1, "a": [1, 2]}');
  assert.equal(pyRepr(parseJson('{"2":1,"1":2}')), "{'2': 1, '1': 2}");
});

test('parseJson: value model types', () => {
  const v = parseJson('[1, 1.0, -0, -0.0, 1e2, "s", true, false, null, {}, []]') as JsonValue[];
  assert.ok(v[0] instanceof PyInt && v[0].value === 1n);
  assert.ok(v[1] instanceof PyFloat && v[1].value === 1);
  assert.ok(v[2] instanceof PyInt && v[2].value === 0n);
  assert.ok(v[3] instanceof PyFloat && Object.is(v[3].value, -0));
  assert.ok(v[4] instanceof PyFloat && v[4].value === 100);
  assert.equal(v[5], 's');
  assert.equal(v[6], true);
  assert.equal(v[7], false);
  assert.equal(v[8], null);
  assert.ok(v[9] instanceof Map && v[9].size === 0);
  assert.deepEqual(v[10], []);
});

test('parseJson: integers are exact at any size', () => {
  const cases = [
    '0',
    '7',
    '-7',
    '255',
    '256',
    '-1',
    '999999999999999',
    '-999999999999999',
    '1000000000000000',
    '9007199254740993',
    '-9007199254740993',
    '18446744073709551616',
    '123456789012345678901234567890',
    '-99999999999999999999999999999999999999999999999999',
  ];
  for (const t of cases) {
    const v = parseJson(t);
    assert.ok(v instanceof PyInt, t);
    assert.equal(v.value, BigInt(t), t);
    assert.equal(v.value.toString(), t === '-0' ? '0' : t);
  }
  const huge = '9'.repeat(5000);
  assert.equal((parseJson(huge) as PyInt).value.toString(), huge);
});

test('parseJson: floats follow Python float()', () => {
  const cases: Array<[string, number]> = [
    ['1.5', 1.5],
    ['1e2', 100],
    ['1E+2', 100],
    ['1e-2', 0.01],
    ['-1.25e+3', -1250],
    ['0.1', 0.1],
    ['1e400', Infinity],
    ['-1e400', -Infinity],
    ['1e-400', 0],
    ['5e-324', 5e-324],
    ['1.7976931348623157e308', 1.7976931348623157e308],
    ['0.30000000000000004', 0.30000000000000004],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
  ];
  for (const [t, x] of cases) {
    const v = parseJson(t);
    assert.ok(v instanceof PyFloat, t);
    assert.ok(Object.is(v.value, x), `${t} -> ${v.value}`);
  }
});

test('parseJson: strings, escapes and surrogates', () => {
  assert.equal(parseJson('"esc \\" \\\\ \\/ \\b \\f \\n \\r \\t"'), 'esc " \\ / \b \f \n \r \t');
  assert.equal(parseJson('"\\u0041\\u00e9\\u20AC"'), 'Aé€');
  assert.equal(parseJson('"\\ud83d\\ude00"'), '😀');
  assert.equal(parseJson('"😀"'), '😀');
  const lone = parseJson('"\\ud800"') as string;
  assert.equal(lone.length, 1);
  assert.equal(lone.charCodeAt(0), 0xd800);
  const lone2 = parseJson('"x\\udc80y"') as string;
  assert.deepEqual(
    [...lone2].map((c) => c.codePointAt(0)),
    [0x78, 0xdc80, 0x79],
  );
  assert.equal(parseJson('"\\ud800\\u0041"'), '\ud800A');
  assert.equal(parseJson('"\\ude00\\ud83d"'), '\ude00\ud83d');
  assert.equal(parseJson('"\x7f\u2028\u00a0"'), '\x7f\u2028\u00a0'); // DEL and non-ASCII allowed raw
  assert.equal(parseJson('"a\\nb' + 'c'.repeat(1000) + '"'), 'a\nb' + 'c'.repeat(1000));
  assert.equal(parseJson('""'), '');
  assert.equal(parseJson('"\\\\"'), '\\');
  assert.equal(parseJson('"a\\"b"'), 'a"b');
});

test('parseJson: objects keep first position and last value for duplicate keys', () => {
  const m = parseJson('{"a": "x", "b": "y", "a": "z", "c": "w", "b": "v"}') as JsonObject;
  assert.deepEqual([...m.keys()], ['a', 'b', 'c']);
  assert.deepEqual([...m.values()], ['z', 'v', 'w']);
  const n = parseJson('{"2":1,"1":2,"10":3}') as JsonObject;
  assert.deepEqual([...n.keys()], ['2', '1', '10']);
  const p = parseJson('{"__proto__": 1}') as JsonObject;
  assert.ok(p instanceof Map);
  assert.equal((p.get('__proto__') as PyInt).value, 1n);
});

test('parseJson: invalid documents throw JsonParseError with Python message and position', () => {
  for (const [text, msg, pos] of BAD) throwsParse(() => parseJson(text), msg, pos);
});

test('parseJson: more invalid documents', () => {
  for (const t of [
    '[1,,2]',
    '{"a":1,,"b":2}',
    '["a",]',
    '{"a"}',
    '{"a":1',
    '[',
    '[[[]]',
    '"\\u"',
    '"\\ud83d\\u"',
    'fals',
    'nulL',
    '-Inf',
    '1.5.5',
    '1e5e5',
    '--',
    '[1]x',
    '\u00001',
  ]) {
    throwsParse(() => parseJson(t));
  }
});

test('parseJson: start/end range', () => {
  const text = 'xx [1, {"a": 2}] yy';
  assert.equal(pyRepr(parseJson(text, 3, 16)), "[1, {'a': 2}]");
  assert.equal(pyRepr(parseJson(text, 2, 17)), "[1, {'a': 2}]");
  // Content outside the range is not seen, even when it would complete a token.
  throwsParse(() => parseJson('"abc"', 0, 4), 'Unterminated string starting at', 0);
  assert.equal((parseJson('12345', 1, 3) as PyInt).value, 23n);
  assert.equal(parseJson('truex', 0, 4), true);
  throwsParse(() => parseJson('true', 0, 3), 'Expecting value', 0);
  throwsParse(() => parseJson('1.5', 0, 2), 'Extra data', 1);
  throwsParse(() => parseJson('[1, 2]', 0, 5), "Expecting ',' delimiter", 5);
  throwsParse(() => parseJson('abc', 2, 2), 'Expecting value', 2);
  throwsParse(() => parseJson('"a\\u0041"', 0, 7), 'Invalid \\uXXXX escape', 3);
  // Positions are absolute offsets into the text.
  throwsParse(() => parseJson('    [1 2]', 4), "Expecting ',' delimiter", 7);
});

test('parseJson: nesting depth is limited without stack overflow', () => {
  const ok = '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH);
  let v = parseJson(ok);
  let depth = 0;
  while (Array.isArray(v) && v.length > 0) {
    v = v[0];
    depth++;
  }
  assert.equal(depth, MAX_JSON_DEPTH - 1);
  const mixed = '{"a":['.repeat(MAX_JSON_DEPTH / 2) + ']}'.repeat(MAX_JSON_DEPTH / 2);
  assert.ok(parseJson(mixed) instanceof Map);
  throwsParse(() => parseJson('['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1)));
  throwsParse(() => parseJson('['.repeat(1_000_000)));
  throwsParse(() => parseJson('{"a":'.repeat(200_000)));
});

test('parseJson: larger document round-trips through json.dumps', () => {
  const parts: string[] = [];
  for (let k = 0; k < 2000; k++) {
    parts.push(`{"id": ${k}, "name": "item\\n${k}", "score": ${k}.5, "tags": ["a", "b\\"c"], "n": null}`);
  }
  const text = '[' + parts.join(', ') + ']';
  assert.equal(pyJsonDumps(parseJson(text)), text);
});

// ---------------------------------------------------------------------------------------------

function splitTexts(text: string): string[] {
  return splitTopLevelArray(text).map(([s, e]) => text.slice(s, e));
}

test('splitTopLevelArray: element ranges', () => {
  assert.deepEqual(splitTopLevelArray('[]'), []);
  assert.deepEqual(splitTopLevelArray('  [ \n ]  '), []);
  assert.deepEqual(splitTopLevelArray('[1]'), [[1, 2]]);
  assert.deepEqual(splitTopLevelArray('[ 1 ]'), [[2, 3]]);
  assert.deepEqual(splitTopLevelArray('[1,22 , 333]'), [
    [1, 2],
    [3, 5],
    [8, 11],
  ]);
  assert.deepEqual(splitTexts('[1, "a,b", [2, [3]], {"k": "]"}, "\\\\", "a\\"b", null]'), [
    '1',
    '"a,b"',
    '[2, [3]]',
    '{"k": "]"}',
    '"\\\\"',
    '"a\\"b"',
    'null',
  ]);
  assert.deepEqual(splitTexts('[ "[", "{", "}" , "]", "\\\\\\"]", {"a": [1, {"b": "}]"}]} ]'), [
    '"["',
    '"{"',
    '"}"',
    '"]"',
    '"\\\\\\"]"',
    '{"a": [1, {"b": "}]"}]}',
  ]);
  assert.deepEqual(splitTexts('[\n  {"x": 1},\n  {"y": [2, 3]}\n]\n'), ['{"x": 1}', '{"y": [2, 3]}']);
  assert.deepEqual(splitTexts('["\\\\\\\\", "x"]'), ['"\\\\\\\\"', '"x"']);
  assert.deepEqual(splitTexts('["😀", "\\ud800"]'), ['"😀"', '"\\ud800"']);
});

test('splitTopLevelArray: consistent with parseJson', () => {
  const docs = [
    '[1, "a,b", [2, [3]], {"k": "]"}, "\\\\", "a\\"b", null]',
    '[ "[", "{", "}" , "]", "\\\\\\"]", {"a": [1, {"b": "}]"}]} ]',
    '[{"kind": "request", "parts": [{"content": "say \\"hi\\", [ok]", "n": 1.0}]}, {"kind": "response", "x": [[], {}, [[]]]}]',
    '[NaN, -Infinity, 1e400, 123456789012345678901, true, false, null, "\\u00e9\\ud83d\\ude00"]',
    '[\t[1,2]\r\n,\n{"a":{"b":{"c":[]}}}  ]',
  ];
  for (const text of docs) {
    const whole = parseJson(text) as JsonValue[];
    const ranges = splitTopLevelArray(text);
    assert.equal(ranges.length, whole.length, text);
    ranges.forEach(([s, e], k) => {
      assert.equal(pyRepr(parseJson(text, s, e)), pyRepr(whole[k]!), `${text} element ${k}`);
    });
  }
});

test('splitTopLevelArray: rejects non-arrays and unbalanced brackets', () => {
  for (const t of [
    '',
    '   ',
    '{}',
    '1',
    '"[1]"',
    'null',
    '[',
    '[1',
    '[1,',
    '[1,]',
    '[,1]',
    '[,]',
    '[1,,2]',
    '[1]]',
    '[1] x',
    '[1][2]',
    '[{]',
    '[{]}',
    '[[}]',
    '[}',
    '["abc]',
    '["abc\\"]',
    '[{"a": "}"]',
    '[[[1]]',
  ]) {
    throwsParse(() => splitTopLevelArray(t));
  }
});

test('splitTopLevelArray: elements are not validated, parseJson rejects bad ranges', () => {
  const text = '[1 2, tru, "ok"]';
  const ranges = splitTopLevelArray(text);
  assert.deepEqual(
    ranges.map(([s, e]) => text.slice(s, e)),
    ['1 2', 'tru', '"ok"'],
  );
  throwsParse(() => parseJson(text, ...ranges[0]!), 'Extra data', 3);
  throwsParse(() => parseJson(text, ...ranges[1]!), 'Expecting value', 6);
  assert.equal(parseJson(text, ...ranges[2]!), 'ok');
});
