import type { SearchOutcome } from '../search/search.js';
import type { StoreRun } from '../store/reader.js';
import { type Json, ndjsonEvent } from './json.js';
import { runIdName, runIdNameJson } from './run-name.js';

export type TimelineKey = 'day' | 'run';

/** One bar of the timeline: a day (`YYYY-MM-DD`) or a run id, and its matching messages. */
export interface TimelineBucket {
  readonly key: string;
  readonly count: number;
  /** Per run: the run itself. */
  readonly run?: StoreRun;
}

/** Matching messages per day or per run: what `--timeline` draws and `report` pictures. */
export interface Timeline {
  readonly by: TimelineKey;
  /** Per day: every day from the first to the last, empty ones at 0; per run: the runs with matches, in corpus order. */
  readonly buckets: readonly TimelineBucket[];
  /** First and last day (per day), or the first and last matching run's start day (per run); null without a match. */
  readonly from: string | null;
  readonly to: string | null;
  readonly total: number;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})/;
const MS_PER_DAY = 86_400_000;

/** The calendar day a run started on, as stored (its own offset); null when `started_at` does not start with a date. */
export function runDay(startedAt: string): string | null {
  const m = DAY.exec(startedAt);
  return m ? `${m[1]}-${m[2]}-${m[3]}` : null;
}

/** Days from `from` to `to` inclusive, with none left out. */
function dayRange(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += MS_PER_DAY) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}

/**
 * Every matching message of the outcome (the counts `--count-by run` prints, whatever `-m` shows), per
 * run or per day; a run's matches fall on the day it started. A run whose start has no date is left
 * out of the days (never silently: `undated` says how many matches that was).
 */
export function timeline(outcome: SearchOutcome, by: TimelineKey): Timeline & { readonly undated: number } {
  const byRun = outcome.matches.byRun;
  const total = byRun.reduce((n, r) => n + r.count, 0);
  const days = byRun.map((r) => runDay(r.run.startedAt)).filter((d): d is string => d !== null);
  const sorted = [...days].sort();
  const from = sorted[0] ?? null;
  const to = sorted[sorted.length - 1] ?? null;
  if (by === 'run') {
    return { by, buckets: byRun.map((r) => ({ key: r.run.runId, count: r.count, run: r.run })), from, to, total, undated: 0 };
  }
  const counts = new Map<string, number>();
  let undated = 0;
  for (const r of byRun) {
    const d = runDay(r.run.startedAt);
    if (d === null) undated += r.count;
    else counts.set(d, (counts.get(d) ?? 0) + r.count);
  }
  const buckets = from === null || to === null ? [] : dayRange(from, to).map((key) => ({ key, count: counts.get(key) ?? 0 }));
  return { by, buckets, from, to, total, undated };
}

const BARS = '▁▂▃▄▅▆▇█';

/** One character per bucket (a space for none), scaled to the largest; at most `width`, buckets merged in equal groups beyond. */
export function sparkline(buckets: readonly TimelineBucket[], width: number): string {
  const max = Math.max(1, width);
  const group = Math.ceil(buckets.length / max) || 1;
  const sums: number[] = [];
  for (let i = 0; i < buckets.length; i += group) sums.push(buckets.slice(i, i + group).reduce((n, b) => n + b.count, 0));
  const top = Math.max(0, ...sums);
  return sums.map((n) => (n === 0 ? ' ' : BARS[Math.min(BARS.length - 1, Math.ceil((n / top) * BARS.length) - 1)]!)).join('');
}

/** The line `--timeline` prints above the hits: the range, the sparkline between bars, the total. */
export function timelineLine(t: Timeline, width: number): string {
  const range = t.from === null ? 'no dates' : t.from === t.to ? t.from : `${t.from} … ${t.to}`;
  const unit = t.by === 'day' ? 'day' : 'run';
  const head = `${t.total} match${t.total === 1 ? '' : 'es'} per ${unit}, ${range} `;
  const room = Math.max(8, width - head.length - 2);
  return `${head}▕${sparkline(t.buckets, room)}▏`;
}

/** The timeline as the JSON outputs carry it. */
export function timelineJson(t: Timeline & { readonly undated: number }): Json {
  return {
    by: t.by,
    from: t.from,
    to: t.to,
    total: t.total,
    undated: t.undated,
    buckets: t.buckets.map((b) => ({
      [t.by]: b.key,
      ...(b.run ? { run_id_decoded: runIdNameJson(runIdName(b.run)) } : {}),
      count: b.count,
    })),
  };
}

/** The `--ndjson` event carrying the timeline (before `summary`). */
export function timelineNdjson(t: Timeline & { readonly undated: number }): string {
  return ndjsonEvent('timeline', timelineJson(t));
}
