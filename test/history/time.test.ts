import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isoMicros, messageTime, parseTimeBound } from '../../src/history/time.js';

const NOW = 1_000_000_000_000_000;

describe('history/time', () => {
  test('durations count back from now, units combined and in any case', () => {
    assert.equal(parseTimeBound('90m', false, NOW), NOW - 90 * 60_000_000);
    assert.equal(parseTimeBound('1h30m', false, NOW), NOW - 90 * 60_000_000);
    assert.equal(parseTimeBound('36h', true, NOW), NOW - 36 * 3_600_000_000);
    assert.equal(parseTimeBound(' 7D ', false, NOW), NOW - 7 * 86_400_000_000);
    assert.equal(parseTimeBound('2w', false, NOW), NOW - 14 * 86_400_000_000);
    assert.equal(parseTimeBound('45s', false, NOW), NOW - 45_000_000);
    assert.equal(parseTimeBound('0d', false, NOW), NOW);
  });

  test('a date bound is an instant; a bare date as --until is the end of its day', () => {
    assert.equal(parseTimeBound('2025-03-01', false, NOW), 1740787200000000);
    assert.equal(parseTimeBound('2025-03-01', true, NOW), 1740873599999999);
    assert.equal(parseTimeBound('2025-03-01T09:00:00+01:00', true, NOW), 1740816000000000);
  });

  test('neither a duration nor a date is null, and so is a duration too long to count', () => {
    for (const s of ['', '10', '1.5h', '1y', 'h', '-1d', '1d 2h', 'soon']) assert.equal(parseTimeBound(s, false, NOW), null, s);
    assert.equal(parseTimeBound(`${'9'.repeat(20)}w`, false, NOW), null);
  });

  test('a message time is its own timestamp, else its snapshot time, else null', () => {
    assert.equal(
      messageTime('2025-03-01T00:00:00Z', () => assert.fail('the snapshot time is not needed')),
      1740787200000000,
    );
    assert.equal(
      messageTime(null, () => '2025-03-01'),
      1740787200000000,
    );
    assert.equal(
      messageTime('not a time', () => '2025-03-01T00:00:01Z'),
      1740787201000000,
    );
    assert.equal(
      messageTime('not a time', () => null),
      null,
    );
    assert.equal(
      messageTime(null, () => 'garbage'),
      null,
    );
  });

  test('isoMicros prints UTC with six fraction digits, before the epoch too', () => {
    assert.equal(isoMicros(0), '1970-01-01T00:00:00.000000Z');
    assert.equal(isoMicros(1768214465007000), '2026-01-12T10:41:05.007000Z');
    assert.equal(isoMicros(1740819604123456), '2025-03-01T09:00:04.123456Z');
    assert.equal(isoMicros(-1), '1969-12-31T23:59:59.999999Z');
    assert.equal(isoMicros(-1_000_000), '1969-12-31T23:59:59.000000Z');
  });
});
