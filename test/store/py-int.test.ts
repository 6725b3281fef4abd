import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pyInt } from '../../src/store/py-int.js';

// Every expectation here was checked against CPython 3.11 `int(s)`.
describe('store/py-int', () => {
  test('plain, signed and underscored decimals', () => {
    assert.equal(pyInt('0'), 0);
    assert.equal(pyInt('42'), 42);
    assert.equal(pyInt('+7'), 7);
    assert.equal(pyInt('-12'), -12);
    assert.equal(pyInt('007'), 7);
    assert.equal(pyInt('12_3'), 123);
    assert.ok(Object.is(pyInt('-0'), 0), '-0 is 0, not negative zero');
  });

  test('non-ASCII decimal digits count, mixed scripts included', () => {
    assert.equal(pyInt('\u0663\uff11'), 31); // Arabic-Indic 3, fullwidth 1
    assert.equal(pyInt('\u0661\u0662'), 12);
    assert.equal(pyInt('\u{1d7d8}\u{1d7dd}'), 5); // mathematical double-struck 0 and 5
  });

  test('surrounding Unicode whitespace is stripped', () => {
    assert.equal(pyInt(' 12 '), 12);
    assert.equal(pyInt('\t7\n'), 7);
    assert.equal(pyInt('\x8512\x85'), 12);
    assert.equal(pyInt('\xa012'), 12);
    assert.equal(pyInt('\u300012'), 12);
    assert.equal(pyInt('\u200012'), 12);
    assert.equal(pyInt('1\u2028'), 1);
  });

  test('ASCII separators U+001C..U+001F are not stripped: int() raises although str.isspace() is true', () => {
    assert.equal(pyInt('\x1c12'), null);
    assert.equal(pyInt('12\x1c'), null);
    assert.equal(pyInt('\x1f1'), null);
  });

  test('what int() refuses is null', () => {
    for (const s of ['', '  ', '1__2', '_1', '1_', '+_1', '1 2', '- 1', '\ufeff1', '0x1', '1.0', '1e3', 'seven', '--1']) {
      assert.equal(pyInt(s), null, JSON.stringify(s));
    }
  });

  test('beyond 2^53 is null; up to it is exact', () => {
    assert.equal(pyInt('9007199254740991'), Number.MAX_SAFE_INTEGER);
    assert.equal(pyInt('-9007199254740991'), -Number.MAX_SAFE_INTEGER);
    assert.equal(pyInt('9007199254740992'), null);
    assert.equal(pyInt('9'.repeat(400)), null);
  });
});
