import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PyFloat, PyInt, type JsonValue } from '../../src/py/json-value.js';
import { codePointLength, codePointSlice, formatScore1f, pyFloatRepr, pyJsonDumps, pyRepr, pyStr, pyStrRepr } from '../../src/py/repr.js';

// All expectations below were printed by CPython 3.11.

// [x, repr(x)]
const FLOATS: Array<[number, string]> = [
  [1e16, '1e+16'],
  [1e-5, '1e-05'],
  [0.0001, '0.0001'],
  [1.2345678901234568e17, '1.2345678901234568e+17'],
  [1.0, '1.0'],
  [100.0, '100.0'],
  [1000000000000000.0, '1000000000000000.0'],
  [-0.0, '-0.0'],
  [0.0, '0.0'],
  [1.5e-7, '1.5e-07'],
  [NaN, 'nan'],
  [Infinity, 'inf'],
  [-Infinity, '-inf'],
  [0.1, '0.1'],
  [1e22, '1e+22'],
  [5e-324, '5e-324'],
  [1.7976931348623157e308, '1.7976931348623157e+308'],
  [123456789.123, '123456789.123'],
  [9999999999999998.0, '9999999999999998.0'],
  [0.30000000000000004, '0.30000000000000004'],
  [2.5e-5, '2.5e-05'],
  [1e100, '1e+100'],
  [-1e-100, '-1e-100'],
  [12345.678, '12345.678'],
  [0.3333333333333333, '0.3333333333333333'],
  [9007199254740992.0, '9007199254740992.0'],
  [1e21, '1e+21'],
  [-2.5, '-2.5'],
  [0.001, '0.001'],
  [0.00015000000000000001, '0.00015000000000000001'],
  [2.2250738585072014e-308, '2.2250738585072014e-308'],
  [1234567890123456.8, '1234567890123456.8'],
  [-123.0, '-123.0'],
];

// [x, format(x, '.1f')]
const SCORES: Array<[number, string]> = [
  [0.25, '0.2'],
  [2.25, '2.2'],
  [0.35, '0.3'],
  [0.05, '0.1'],
  [1.6722334805445824, '1.7'],
  [0.0, '0.0'],
  [-0.0, '-0.0'],
  [-0.04, '-0.0'],
  [9.95, '9.9'],
  [99.95, '100.0'],
  [Infinity, 'inf'],
  [-Infinity, '-inf'],
  [NaN, 'nan'],
  [0.15, '0.1'],
  [0.45, '0.5'],
  [-0.25, '-0.2'],
  [-0.05, '-0.1'],
  [0.95, '0.9'],
  [1.05, '1.1'],
  [2.5, '2.5'],
  [123.45, '123.5'],
  [1e20, '100000000000000000000.0'],
  [1e22, '10000000000000000000000.0'],
  [5e-324, '0.0'],
  [0.75, '0.8'],
  [1.25, '1.2'],
  [3.0, '3.0'],
  [-7.85, '-7.8'],
  [12.3456, '12.3'],
  [0.049999999999999996, '0.0'],
  [999.95, '1000.0'],
];

// [s, repr(s)]
const STRS: Array<[string, string]> = [
  ['', "''"],
  ['abc', "'abc'"],
  ["it's", '"it\'s"'],
  ['say "hi"', '\'say "hi"\''],
  ['both \' and "', "'both \\' and \"'"],
  ['back\\slash', "'back\\\\slash'"],
  ["a'b\\c", '"a\'b\\\\c"'],
  ['\n\r\t', "'\\n\\r\\t'"],
  ['\u0000\u001b\u007f\u001f', "'\\x00\\x1b\\x7f\\x1f'"],
  ['\u0080\u0085\u00a0\u00ad\u00ff', "'\\x80\\x85\\xa0\\xad\u00ff'"],
  ['caf\u00e9', "'caf\u00e9'"],
  ['\ud83d\ude00', "'\ud83d\ude00'"],
  ['\ud83c\udff4\udb40\udc67', "'\ud83c\udff4\\U000e0067'"],
  ['\ud800', "'\\ud800'"],
  ['\udc80', "'\\udc80'"],
  ['a\udfffb', "'a\\udfffb'"],
  ['\u200b', "'\\u200b'"],
  ['\u2028\u2029', "'\\u2028\\u2029'"],
  ['\u3000\u1680\u2000\u202f\u205f', "'\\u3000\\u1680\\u2000\\u202f\\u205f'"],
  ['\ue000', "'\\ue000'"],
  ['\udb80\udc00', "'\\U000f0000'"],
  [' ', "' '"],
  ['\u0378', "'\\u0378'"],
  ['\ufeff', "'\\ufeff'"],
  ['\udb40\udc01', "'\\U000e0001'"],
  ['\u0100', "'\u0100'"],
  ['\u061c', "'\\u061c'"],
  ['\udbff\udfff', "'\\U0010ffff'"],
  ["tab\tand'quote", '"tab\\tand\'quote"'],
  ['"', "'\"'"],
  ["'", '"\'"'],
  ['\\', "'\\\\'"],
  ['\u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8', "'\u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8'"],
  ['\u000b\f\b', "'\\x0b\\x0c\\x08'"],
];

const obj = (entries: Array<[string, JsonValue]>): JsonValue => new Map(entries);
const i = (n: number | bigint): PyInt => new PyInt(BigInt(n));
const f = (x: number): PyFloat => new PyFloat(x);

test('pyFloatRepr matches repr(float)', () => {
  for (const [x, r] of FLOATS) assert.equal(pyFloatRepr(x), r, `repr(${x})`);
});

test('pyFloatRepr: exponent thresholds', () => {
  assert.equal(pyFloatRepr(1e16), '1e+16');
  assert.equal(pyFloatRepr(1e-5), '1e-05');
  assert.equal(pyFloatRepr(0.0001), '0.0001');
  assert.equal(pyFloatRepr(1e15), '1000000000000000.0');
  assert.equal(pyFloatRepr(123456789012345680.0), '1.2345678901234568e+17');
  assert.equal(pyFloatRepr(1.5e-7), '1.5e-07');
  assert.equal(pyFloatRepr(-0.0), '-0.0');
  assert.equal(pyFloatRepr(1e100), '1e+100');
  assert.equal(pyFloatRepr(1.5e300), '1.5e+300');
  assert.equal(pyFloatRepr(-1.5e-300), '-1.5e-300');
});

test('formatScore1f matches format(x, ".1f") with exact binary rounding', () => {
  for (const [x, r] of SCORES) assert.equal(formatScore1f(x), r, `format(${x}, '.1f')`);
});

test('formatScore1f: ties to even only on exact halves', () => {
  assert.equal(formatScore1f(0.25), '0.2');
  assert.equal(formatScore1f(0.75), '0.8');
  assert.equal(formatScore1f(2.25), '2.2');
  assert.equal(formatScore1f(0.35), '0.3');
  assert.equal(formatScore1f(0.05), '0.1');
  assert.equal(formatScore1f(9.95), '9.9');
  assert.equal(formatScore1f(99.95), '100.0');
  assert.equal(formatScore1f(1.6722334805445824), '1.7');
  assert.equal(formatScore1f(-0.04), '-0.0');
  assert.equal(
    formatScore1f(1e300),
    '1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160.0',
  );
});

test('pyStrRepr matches repr(str)', () => {
  for (const [s, r] of STRS) assert.equal(pyStrRepr(s), r, `repr(${JSON.stringify(s)})`);
});

test('pyStrRepr: quote selection', () => {
  assert.equal(pyStrRepr('plain'), "'plain'");
  assert.equal(pyStrRepr("it's"), `"it's"`);
  assert.equal(pyStrRepr('say "hi"'), `'say "hi"'`);
  assert.equal(pyStrRepr(`it's "x"`), `'it\\'s "x"'`);
  assert.equal(pyStrRepr(`'\\`), `"'\\\\"`);
  assert.equal(pyStrRepr(`''`), `"''"`);
});

test('pyStrRepr: long strings and mixed content', () => {
  const long = 'x'.repeat(10000);
  assert.equal(pyStrRepr(long), `'${long}'`);
  assert.equal(pyStrRepr('a\u0000'.repeat(3)), "'a\\x00a\\x00a\\x00'");
  assert.equal(pyStrRepr('😀\ud800😀'), "'😀\\ud800😀'");
  assert.equal(pyStrRepr('\udc00\ud800'), "'\\udc00\\ud800'");
});

test('pyRepr / pyStr / pyJsonDumps of constructed values', () => {
  const v = obj([
    ['a', [i(1), f(2.5), "x'y", null, true, obj([['k', []]])]],
    ['', obj([])],
  ]);
  assert.equal(pyRepr(v), `{'a': [1, 2.5, "x'y", None, True, {'k': []}], '': {}}`);
  assert.equal(pyStr(v), `{'a': [1, 2.5, "x'y", None, True, {'k': []}], '': {}}`);
  assert.equal(pyJsonDumps(v), `{"a": [1, 2.5, "x'y", null, true, {"k": []}], "": {}}`);
  assert.equal(pyStr(null), 'None');
  assert.equal(pyStr(true), 'True');
  assert.equal(pyStr(false), 'False');
  assert.equal(pyStr(f(1)), '1.0');
  assert.equal(pyStr(i(-12)), '-12');
  assert.equal(pyStr('x\ny'), 'x\ny');
  assert.equal(pyStr(['x\ny']), "['x\\ny']");
  assert.equal(pyRepr('x\ny'), "'x\\ny'");
  assert.equal(pyRepr([]), '[]');
  assert.equal(pyRepr(obj([])), '{}');
  assert.equal(pyRepr([[], [[]], obj([['a', obj([])]])]), "[[], [[]], {'a': {}}]");
  assert.equal(pyRepr(i(123456789012345678901234567890n)), '123456789012345678901234567890');
  assert.equal(pyRepr([f(NaN), f(Infinity), f(-Infinity), f(-0)]), '[nan, inf, -inf, -0.0]');
  assert.equal(pyJsonDumps([f(NaN), f(Infinity), f(-Infinity), f(-0)]), '[NaN, Infinity, -Infinity, -0.0]');
  assert.equal(pyJsonDumps([f(1e16), f(1e-5), f(100), i(100)]), '[1e+16, 1e-05, 100.0, 100]');
  assert.equal(
    pyJsonDumps(
      obj([
        ['b', i(1)],
        ['a', [i(1), i(2)]],
      ]),
    ),
    '{"b": 1, "a": [1, 2]}',
  );
  assert.equal(pyRepr(obj([["it's", 'say "hi"']])), `{"it's": 'say "hi"'}`);
});

test('pyJsonDumps: string escaping (ensure_ascii=False)', () => {
  assert.equal(
    pyJsonDumps('\u0001\b\u000b\f\u001b\u007f\u2028/\\"\u00e9\ud83d\ude00\ud800\t\n\r'),
    '"\\u0001\\b\\u000b\\f\\u001b\u007f\u2028/\\\\\\"\u00e9\ud83d\ude00\ud800\\t\\n\\r"',
  );
  assert.equal(pyJsonDumps('\u0000\u001f'), '"\\u0000\\u001f"');
  assert.equal(pyJsonDumps('café 日本 😀'), '"café 日本 😀"');
  assert.equal(pyJsonDumps('plain'), '"plain"');
  assert.equal(pyJsonDumps(''), '""');
  assert.equal(pyJsonDumps(obj([['k\n"', 'v']])), '{"k\\n\\"": "v"}');
  // Repeated calls are independent (global regex state).
  assert.equal(pyJsonDumps(['a\n', 'b\n', 'c']), '["a\\n", "b\\n", "c"]');
});

test('pyRepr / pyJsonDumps handle deep nesting without recursion', () => {
  let v: JsonValue = [];
  for (let k = 0; k < 50_000; k++) v = [v];
  const r = pyRepr(v);
  assert.equal(r.length, 2 * 50_001);
  assert.ok(r.startsWith('[[[') && r.endsWith(']]]'));
  let m: JsonValue = i(1);
  for (let k = 0; k < 50_000; k++) m = obj([['a', m]]);
  assert.ok(pyJsonDumps(m).startsWith('{"a": {"a": '));
});

test('codePointLength matches len()', () => {
  const cases: Array<[string, number]> = [
    ['abc', 3],
    ['😀', 1],
    ['a😀b', 3],
    ['\ud800', 1],
    ['\ud800x\udc80', 3],
    ['', 0],
    ['日本', 2],
    ['\ud83c\udff4\udb40\udc67\udb40\udc62', 3],
    ['\udc00\ud800', 2],
  ];
  for (const [s, n] of cases) assert.equal(codePointLength(s), n, JSON.stringify(s));
});

test('codePointSlice matches Python slicing', () => {
  const s = 'a\ud83d\ude00b\ud800c';
  const cases: Array<[number, number | undefined, string]> = [
    [1, 3, '\ud83d\ude00b'],
    [-2, undefined, '\ud800c'],
    [0, -1, 'a\ud83d\ude00b\ud800'],
    [3, 4, '\ud800'],
    [10, undefined, ''],
    [2, 1, ''],
    [-100, 2, 'a\ud83d\ude00'],
    [0, undefined, s],
    [1, undefined, '\ud83d\ude00b\ud800c'],
    [-1, undefined, 'c'],
    [0, 0, ''],
    [0, 100, s],
  ];
  for (const [a, b, r] of cases) assert.equal(codePointSlice(s, a, b), r, `[${a}:${b}]`);
  assert.equal(codePointSlice('hello', 1, 3), 'el');
  assert.equal(codePointSlice('hello', -3), 'llo');
  assert.equal(codePointSlice('hello', 0, -10), '');
  assert.equal(codePointSlice('😀😀😀', 0, 2), '😀😀');
});
