import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compactTimestamp, parseInstant } from '../../src/history/timestamps.js';

// Expected microseconds computed with Python's datetime (aware, UTC epoch).
describe('history/timestamps', () => {
  test('compact form for UTC times only; anything else unchanged', () => {
    assert.equal(compactTimestamp('2025-03-01T09:00:04.123456Z'), '2025-03-01 09:00:04Z');
    assert.equal(compactTimestamp('2025-03-01T09:00:04+00:00'), '2025-03-01 09:00:04Z');
    assert.equal(compactTimestamp('2025-03-01 09:00:04+0000'), '2025-03-01 09:00:04Z');
    assert.equal(compactTimestamp('2025-03-01T09:00:04+01:00'), '2025-03-01T09:00:04+01:00');
    assert.equal(compactTimestamp('2025-03-01T09:00:04'), '2025-03-01T09:00:04');
    assert.equal(compactTimestamp(''), '');
    assert.equal(compactTimestamp('\x1b[31m'), '\x1b[31m');
  });

  test('dates and date-times read as UTC unless they carry an offset', () => {
    assert.equal(parseInstant('2025-03-01'), 1740787200000000);
    assert.equal(parseInstant('2025-03-01T09:00'), 1740819600000000);
    assert.equal(parseInstant(' 2025-03-01 09:00 '), 1740819600000000);
    assert.equal(parseInstant('2025-03-01T09:00:04.5+01:00'), 1740816004500000);
    assert.equal(parseInstant('2025-03-01T09:00:04.5+0100'), 1740816004500000);
    assert.equal(parseInstant('2025-03-01T00:00-05:30'), 1740807000000000);
    assert.equal(parseInstant('2025-03-01T09:00:00z'), 1740819600000000);
    assert.equal(parseInstant('2024-02-29'), 1709164800000000);
  });

  test('fractions are kept to the microsecond and truncated past it', () => {
    assert.equal(parseInstant('2025-03-01T09:00:04.1234567Z'), 1740819604123456);
    assert.equal(parseInstant('2025-03-01T09:00:04.000001Z'), 1740819604000001);
  });

  test('a bare date as an end bound is the last microsecond of that day', () => {
    assert.equal(parseInstant('2025-03-01', true), 1740873599999999);
    assert.equal(parseInstant('2025-03-01T09:00', true), 1740819600000000);
  });

  test('years before 100 are not taken for 19xx', () => {
    assert.equal(parseInstant('0050-01-01'), -60589296000000000);
    assert.equal(parseInstant('0001-01-01T00:00Z'), -62135596800000000);
  });

  test('dates that do not exist are null, not rolled over into the next month', () => {
    for (const s of ['2025-02-29', '2025-02-30', '2025-04-31', '2023-02-29T10:00Z']) assert.equal(parseInstant(s), null, s);
  });

  test('what is not an ISO date or date-time is null', () => {
    for (const s of [
      '',
      'yesterday',
      '2025-3-1',
      '2025-13-01',
      '2025-00-10',
      '2025-03-32',
      '2025-03-00',
      '2025-03-01T24:00',
      '2025-03-01T23:60',
      '2025-03-01T23:59:60',
      '2025-03-01T09',
    ]) {
      assert.equal(parseInstant(s), null, s);
    }
  });
});
