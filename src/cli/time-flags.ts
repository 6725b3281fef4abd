import { parseTimeBound } from '../history/time.js';
import { UsageError } from './errors.js';

/** `--since`/`--until` as microseconds (null when not given); a bound that does not parse, or an empty range, is a usage error. */
export function timeBounds(f: { since?: string; until?: string }, now: number = Date.now() * 1000): { since: number | null; until: number | null } {
  const bound = (flag: string, raw: string | undefined, end: boolean): number | null => {
    if (raw === undefined) return null;
    const t = parseTimeBound(raw, end, now);
    if (t === null) throw new UsageError(`${flag} expects an ISO 8601 date or time (2025-03-01, 2025-03-01T09:30Z) or a duration (90m, 7d), got ${JSON.stringify(raw)}`);
    return t;
  };
  const since = bound('--since', f.since, false);
  const until = bound('--until', f.until, true);
  if (since !== null && until !== null && since > until) throw new UsageError(`--since ${f.since} is after --until ${f.until}: nothing can match`);
  return { since, until };
}
