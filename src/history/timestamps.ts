import type { Message } from './messages.js';

/**
 * When a message was made, as stored: the message's own `timestamp`, else (older requests carry none)
 * the first part's. Raw text, never parsed: it is shown and emitted as written.
 */
export function messageTimestamp(m: Message): string | null {
  const t = m.raw.get('timestamp');
  if (typeof t === 'string') return t;
  for (const p of m.parts) {
    const pt = p.get('timestamp');
    if (typeof pt === 'string') return pt;
  }
  return null;
}

const ISO_UTC = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.\d+)?(?:Z|[+-]00:?00)$/;

/** Compact form for tables and headers: `2025-03-01 09:00:04Z` for UTC times; anything else unchanged. */
export function compactTimestamp(raw: string): string {
  const m = ISO_UTC.exec(raw);
  return m ? `${m[1]} ${m[2]}Z` : raw;
}

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * An ISO 8601 date or date-time as microseconds since the epoch (UTC unless an offset is given), or null.
 * `endOfDay` turns a bare date into its last microsecond, so `--until 2025-03-01` includes that day.
 */
export function parseInstant(text: string, endOfDay = false): number | null {
  const m = ISO_INSTANT.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac, off] = m;
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > 31) return null;
  if (h !== undefined && (Number(h) > 23 || Number(mi) > 59 || Number(s ?? '0') > 59)) return null;
  // setUTCFullYear, not Date.UTC: that reads years 0-99 as 1900-1999 and rolls 02-30 over into March
  const date = new Date(0);
  date.setUTCFullYear(Number(y), month - 1, day);
  if (date.getUTCMonth() !== month - 1) return null;
  let ms = date.getTime() + ((Number(h ?? '0') * 60 + Number(mi ?? '0')) * 60 + Number(s ?? '0')) * 1000;
  if (off && off.toUpperCase() !== 'Z') {
    const sign = off[0] === '-' ? -1 : 1;
    const digits = off.slice(1).replace(':', '');
    ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
  }
  const micros = ms * 1000 + Number((frac ?? '').slice(0, 6).padEnd(6, '0'));
  if (endOfDay && h === undefined) return micros + 86_400_000_000 - 1;
  return micros;
}
