import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compareCodePoints, epochMicros, parseIsoDateTime, pyIsoformat } from '../../src/store/instant.js';

/** [input, Python 3.11 `datetime.fromisoformat(input).isoformat()`, epoch µs (naive read as UTC)]. */
const ACCEPTED: Array<[string, string, bigint]> = [
  ['2025-03-01', '2025-03-01T00:00:00', 1740787200000000n],
  ['20250301', '2025-03-01T00:00:00', 1740787200000000n],
  ['2025-03-01T09', '2025-03-01T09:00:00', 1740819600000000n],
  ['2025-03-01T09:30', '2025-03-01T09:30:00', 1740821400000000n],
  ['2025-03-01T09:30:15,5', '2025-03-01T09:30:15.500000', 1740821415500000n],
  ['2025-03-01T09:30:15.1234567', '2025-03-01T09:30:15.123456', 1740821415123456n],
  ['2025-03-01 09:30:15Z', '2025-03-01T09:30:15+00:00', 1740821415000000n],
  ['2025-03-01T09:30:15+01:00', '2025-03-01T09:30:15+01:00', 1740817815000000n],
  ['2025-03-01T09:30:15-0530', '2025-03-01T09:30:15-05:30', 1740841215000000n],
  ['2025-03-01T09:30:15+01', '2025-03-01T09:30:15+01:00', 1740817815000000n],
  ['2025-03-01T09:30:15+01:00:30', '2025-03-01T09:30:15+01:00:30', 1740817785000000n],
  ['2025-03-01T09:30:15+01:00:30.000001', '2025-03-01T09:30:15+01:00:30.000001', 1740817784999999n],
  ['2025-03-01T09:30:15.123+00:00', '2025-03-01T09:30:15.123000+00:00', 1740821415123000n],
  ['20250301T093015', '2025-03-01T09:30:15', 1740821415000000n],
  ['20250301T09:30:15', '2025-03-01T09:30:15', 1740821415000000n],
  ['2024-02-29', '2024-02-29T00:00:00', 1709164800000000n],
  ['0001-01-01', '0001-01-01T00:00:00', -62135596800000000n],
  ['9999-12-31T23:59:59.999999', '9999-12-31T23:59:59.999999', 253402300799999999n],
];

/** Accepted by Python but once refused here: a basic time after an extended date, offset fractions of any length. */
const ACCEPTED_ODD: Array<[string, string, bigint]> = [
  ['2025-03-01T093015', '2025-03-01T09:30:15', 1740821415000000n],
  ['2025-03-01T0930', '2025-03-01T09:30:00', 1740821400000000n],
  ['2025-03-01T09:30:15+01:00:30.5', '2025-03-01T09:30:15+01:00:30.500000', 1740817784500000n],
];

/** Python 3.11 raises ValueError on each. */
const REFUSED = [
  '2025-02-29',
  '0000-01-01',
  '2025-3-01',
  '2025-03-01T24:00',
  '2025-03-01T23:59:60',
  '2025-03-01T',
  '2025-03-01T09:30:15+24:00',
  '2025-03-01T09:30:15z',
  '2025-03-01T09:30:15 ',
  ' 2025-03-01',
  '2025-03-01T09:30:15.',
  '2025-03-01T09:3015',
  '2025-03-01T0930:15',
  '2025-03-01T09:30:15+0100:30',
  '',
];

function assertParses(cases: ReadonlyArray<[string, string, bigint]>): void {
  for (const [text, iso, micros] of cases) {
    const t = parseIsoDateTime(text);
    assert.ok(t, text);
    assert.equal(pyIsoformat(t), iso, text);
    assert.equal(epochMicros(t), micros, text);
  }
}

describe('store/instant', () => {
  test('what fromisoformat accepts parses to its isoformat() and instant', () => {
    assertParses(ACCEPTED);
  });

  test('basic times after extended dates and offset fractions parse as in Python', () => {
    assertParses(ACCEPTED_ODD);
  });

  test('what fromisoformat refuses is null', () => {
    for (const text of REFUSED) assert.equal(parseIsoDateTime(text), null, JSON.stringify(text));
  });

  test('naive and aware are told apart: Z and +00:00 are aware, no zone is naive', () => {
    assert.equal(parseIsoDateTime('2025-03-01T09:30')!.offsetMicros, null);
    assert.equal(parseIsoDateTime('2025-03-01T09:30Z')!.offsetMicros, 0n);
    assert.equal(parseIsoDateTime('2025-03-01T09:30-00:00')!.offsetMicros, 0n);
    assert.equal(parseIsoDateTime('2025-03-01T09:30-01:30')!.offsetMicros, -5_400_000_000n);
  });

  test('microseconds are kept apart where milliseconds would tie', () => {
    const a = epochMicros(parseIsoDateTime('2025-03-01T09:30:15.123456+00:00')!);
    const b = epochMicros(parseIsoDateTime('2025-03-01T09:30:15.123457+00:00')!);
    assert.equal(b - a, 1n);
  });

  test('code point order puts astral characters after the BMP, unlike UTF-16 order', () => {
    assert.equal(compareCodePoints('a', 'a'), 0);
    assert.ok(compareCodePoints('a', 'b') < 0);
    assert.ok(compareCodePoints('ab', 'a') > 0);
    assert.ok(compareCodePoints('', 'a') < 0);
    // U+FF5E (BMP) < U+1F600 by code point, though '\ud83d' < '\uff5e' as UTF-16 units
    assert.ok(compareCodePoints('\uff5e', '\u{1f600}') < 0);
    assert.ok(compareCodePoints('\u{1f600}', '\uff5e') > 0);
    assert.ok('\u{1f600}' < '\uff5e');
    assert.ok(compareCodePoints('x\u{1f600}', 'x\u{1f601}') < 0);
  });
});
