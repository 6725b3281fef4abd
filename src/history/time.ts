import { parseInstant } from './timestamps.js';

/** Microseconds per unit of a relative duration (`90m`, `7d`, `1h30m`). */
const UNITS: Record<string, number> = { s: 1e6, m: 60e6, h: 3600e6, d: 86_400e6, w: 604_800e6 };
const DURATION = /^(?:\d+[smhdw])+$/i;

/**
 * A `--since`/`--until` bound in microseconds since the epoch: an ISO 8601 date or date-time (UTC unless
 * it has an offset; a bare date as `--until` means the end of that day), or a duration back from `now`
 * (`90m`, `36h`, `7d`, `2w`, `1h30m`). Null when it is neither.
 */
export function parseTimeBound(raw: string, untilBound: boolean, now: number = Date.now() * 1000): number | null {
  const text = raw.trim();
  if (DURATION.test(text)) {
    let back = 0;
    for (const m of text.toLowerCase().matchAll(/(\d+)([smhdw])/g)) back += Number(m[1]) * UNITS[m[2]!]!;
    return Number.isSafeInteger(back) ? now - back : null;
  }
  return parseInstant(text, untilBound);
}

/**
 * When a message was made, for `--since`, `--until` and `--sort time`: its timestamp as `show` and the
 * hits print it (a response's own; a request's own, else its first part's), else the time of the
 * snapshot that first carried it. Null when neither parses.
 */
export function messageTime(timestamp: string | null, snapshotTime: () => string | null): number | null {
  const own = timestamp === null ? null : parseInstant(timestamp);
  if (own !== null) return own;
  const snap = snapshotTime();
  return snap === null ? null : parseInstant(snap);
}

/** An instant as ISO 8601 UTC with microseconds: `2026-01-12T10:41:05.007000Z`. */
export function isoMicros(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const frac = String(((micros % 1_000_000) + 1_000_000) % 1_000_000).padStart(6, '0');
  return `${new Date(ms).toISOString().slice(0, 19)}.${frac}Z`;
}
