import type { IndexStanding } from '../sidecar/shared/standing.js';

type Json = Record<string, unknown>;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function standingJson(s: IndexStanding): Json {
  return {
    store: s.store,
    checked: s.checked,
    stale: s.stale,
    synced_at: iso(s.syncedAt),
    behind_runs: s.behindRuns,
    behind_minutes: s.behindMinutes,
  };
}

/**
 * JSON's `index`: how the shared index stands against the stores it answered for (the facts of the
 * stderr line), or null when no shared index answered (a local index, `--no-index`, a replay: the
 * document is then the store's answer alone). The top fields sum up the stores: checked when all were
 * (a store that could not be read: not checked, and its stale and behind fields null), stale when any
 * is, the oldest sync, the runs behind added up, the largest lag.
 */
export function indexJson(standings: readonly IndexStanding[]): Json | null {
  if (standings.length === 0) return null;
  const times = standings.map((s) => s.syncedAt);
  const minutes = standings.map((s) => s.behindMinutes);
  const behind = standings.map((s) => s.behindRuns);
  const stale = standings.some((s) => s.stale === true) ? true : standings.some((s) => s.stale === null) ? null : false;
  return {
    shared: true,
    checked: standings.every((s) => s.checked),
    stale,
    synced_at: times.includes(null) ? null : iso(Math.min(...(times as number[]))),
    behind_runs: behind.includes(null) ? null : (behind as number[]).reduce((n, b) => n + b, 0),
    behind_minutes: minutes.includes(null) ? null : Math.max(...(minutes as number[])),
    stores: standings.map(standingJson),
  };
}

/** The document with `index` added at its end when a shared index answered. */
export function withIndexJson(doc: Json, standings: readonly IndexStanding[]): Json {
  const index = indexJson(standings);
  return index === null ? doc : { ...doc, index };
}
