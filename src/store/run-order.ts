import { StoreError } from './errors.js';
import { compareCodePoints, epochMicros, parseIsoDateTime } from './instant.js';
import type { Notices } from './notices.js';
import type { StoreRun } from './reader.js';

/** A validated run record before ordering (no rowid yet). */
export type RunFields = Omit<StoreRun, 'rowid'>;

/**
 * Corpus order for the stores that sort by instant (File, Postgres, Redis; spec backends.md §7):
 * `started_at` parsed like `datetime.fromisoformat` and compared at microsecond precision, ties by
 * `run_id` code points (upstream keeps retrieval order, which is unspecified: a documented divergence).
 * A naive `started_at` reads as UTC; mixed with aware ones (where Python raises `TypeError`) each naive
 * run gets a `naive-started-at` notice. `rowid` is the 1-based position in this order: unique,
 * deterministic for a given store state, and consistent with the order itself.
 */
export function orderRuns(runs: readonly RunFields[], label: string, notices: Notices): StoreRun[] {
  const keyed = runs.map((run) => {
    const t = parseIsoDateTime(run.startedAt);
    if (t === null) {
      // upstream list_runs raises on such a record: the whole listing fails
      throw new StoreError(
        `${label}: run ${JSON.stringify(run.runId)} has a started_at that is not an ISO date-time: ${JSON.stringify(run.startedAt)}`,
      );
    }
    return { run, micros: epochMicros(t), naive: t.offsetMicros === null };
  });
  const naive = keyed.filter((k) => k.naive);
  if (naive.length > 0 && naive.length < keyed.length) {
    for (const k of naive)
      notices.add('naive-started-at', k.run.runId, null, `started_at ${k.run.startedAt} has no UTC offset: read as UTC`);
  }
  keyed.sort((a, b) => (a.micros < b.micros ? -1 : a.micros > b.micros ? 1 : compareCodePoints(a.run.runId, b.run.runId)));
  return keyed.map((k, i) => ({ ...k.run, rowid: i + 1 }));
}
