/**
 * `started_at` and snapshot timestamps as Python's `datetime.fromisoformat` reads them, to order runs by
 * instant (spec backends.md §1, §7.1–7.3) the way every non-SQLite store does: microsecond precision in
 * a BigInt (a JS `Date` keeps milliseconds only, which would make false ties).
 */

/** A parsed ISO 8601 date-time: wall-clock fields, and the UTC offset when aware. */
export interface IsoDateTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly microsecond: number;
  /** Offset from UTC in microseconds; null for a naive value. */
  readonly offsetMicros: bigint | null;
}

const DATE = /^(\d{4})(?:-(\d{2})-(\d{2})|(\d{2})(\d{2}))/;
const TIME_EXT = /^(\d{2})(?::(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?/;
const TIME_BASIC = /^(\d{2})(\d{2})(?:(\d{2})(?:[.,](\d+))?)?/;
// one separator style throughout (`+01:00:30`, `+010030`), a fraction of any length as in the time
const OFFSET = /^([+-])(\d{2})(?:(:?)(\d{2})(?:\3(\d{2})(?:\.(\d+))?)?)?$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Microseconds of a fraction lexeme: digits beyond the sixth are dropped, as Python does. */
function fractionMicros(digits: string | undefined): number {
  return digits === undefined ? 0 : Number((digits + '00000').slice(0, 6));
}

/**
 * Parses what `datetime.fromisoformat` (Python 3.11+) accepts in practice: `YYYY-MM-DD` or
 * `YYYYMMDD`, optionally `T` or a space and a time `HH[:MM[:SS[.f…]]]` (or `HHMM[SS]`), and a zone
 * `Z` / `±HH[:MM[:SS[.f…]]]` / `±HHMM[SS[.f…]]`. Week dates are not accepted. Null when not a date-time.
 */
export function parseIsoDateTime(text: string): IsoDateTime | null {
  const d = DATE.exec(text);
  if (!d) return null;
  const year = Number(d[1]);
  const month = Number(d[2] ?? d[4]);
  const day = Number(d[3] ?? d[5]);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  let rest = text.slice(d[0].length);
  let hour = 0;
  let minute = 0;
  let second = 0;
  let microsecond = 0;
  let offsetMicros: bigint | null = null;
  if (rest.length > 0) {
    if (rest[0] !== 'T' && rest[0] !== ' ') return null;
    rest = rest.slice(1);
    // the time's own form (`09:30`, `0930`) does not follow the date's
    const t = (rest[2] === ':' ? TIME_EXT : TIME_BASIC).exec(rest) ?? TIME_EXT.exec(rest);
    if (!t) return null;
    hour = Number(t[1]);
    minute = t[2] === undefined ? 0 : Number(t[2]);
    second = t[3] === undefined ? 0 : Number(t[3]);
    microsecond = fractionMicros(t[4]);
    if (hour > 23 || minute > 59 || second > 59) return null;
    rest = rest.slice(t[0].length);
    if (rest === 'Z') offsetMicros = 0n;
    else if (rest.length > 0) {
      const o = OFFSET.exec(rest);
      if (!o) return null;
      const oh = Number(o[2]);
      const om = o[4] === undefined ? 0 : Number(o[4]);
      const os = o[5] === undefined ? 0 : Number(o[5]);
      if (oh > 23 || om > 59 || os > 59) return null;
      const magnitude = ((BigInt(oh) * 60n + BigInt(om)) * 60n + BigInt(os)) * 1_000_000n + BigInt(fractionMicros(o[6]));
      offsetMicros = o[1] === '-' ? -magnitude : magnitude;
    }
  }
  return { year, month, day, hour, minute, second, microsecond, offsetMicros };
}

/** Days from 1970-01-01 to the proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Microseconds since the epoch: the instant when aware, the wall clock read as UTC when naive. */
export function epochMicros(t: IsoDateTime): bigint {
  const days = BigInt(daysFromCivil(t.year, t.month, t.day));
  const local = ((days * 24n + BigInt(t.hour)) * 60n + BigInt(t.minute)) * 60n + BigInt(t.second);
  return local * 1_000_000n + BigInt(t.microsecond) - (t.offsetMicros ?? 0n);
}

const pad = (n: number | bigint, w: number): string => String(n).padStart(w, '0');

/** Python `datetime.isoformat()`: microseconds only when non-zero, the offset as `±HH:MM[:SS[.ffffff]]`. */
export function pyIsoformat(t: IsoDateTime): string {
  let s = `${pad(t.year, 4)}-${pad(t.month, 2)}-${pad(t.day, 2)}T${pad(t.hour, 2)}:${pad(t.minute, 2)}:${pad(t.second, 2)}`;
  if (t.microsecond !== 0) s += `.${pad(t.microsecond, 6)}`;
  if (t.offsetMicros !== null) {
    const neg = t.offsetMicros < 0n;
    let rest = neg ? -t.offsetMicros : t.offsetMicros;
    const micros = rest % 1_000_000n;
    rest /= 1_000_000n;
    s += `${neg ? '-' : '+'}${pad(rest / 3600n, 2)}:${pad((rest / 60n) % 60n, 2)}`;
    if (rest % 60n !== 0n || micros !== 0n) s += `:${pad(rest % 60n, 2)}`;
    if (micros !== 0n) s += `.${pad(micros, 6)}`;
  }
  return s;
}

/** Compares by Unicode code point (JS `<` compares UTF-16 units, which misorders astral characters). */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  let i = 0;
  while (i < a.length && i < b.length) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
  }
  return a.length - b.length;
}
