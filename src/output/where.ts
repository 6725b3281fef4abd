/**
 * `convsearch where`: the places a store is looked for, what each holds, and which one a command reads.
 */
import { placeState, type PlaceLook, type StoreResolution } from '../api/discover.js';
import { escapeInline } from './escape.js';
import { SCHEMA_VERSION } from './json.js';

type Json = Record<string, unknown>;

/** The place a command reads, of those `r` looked at (null: none). */
function usedPlace(r: StoreResolution): PlaceLook | null {
  if (r.found !== null) return r.found;
  return r.source === 'db' || r.source === 'env' ? (r.looked.find((l) => l.source === r.source) ?? null) : null;
}

/** Whether the store a command would read is one: found, or named and holding a store (a server is not contacted). */
export function whereFound(r: StoreResolution): boolean {
  const used = usedPlace(r);
  return used !== null && used.kind !== null && used.skipped === null;
}

/** One line per place, numbered in the order looked at, then what a command reads. Every path escaped. */
export function whereLines(r: StoreResolution): string[] {
  const used = usedPlace(r);
  const lines = r.looked.map((l, i) => {
    const mark = l === used ? '  <- read' : '';
    return escapeInline(`${i + 1}. ${l.shown}  (${l.from}): ${placeState(l)}`) + mark;
  });
  if (used === null) lines.push('No store found: pass --db <path>, set $CONVSEARCH_DB, or put a step store in one of these places.');
  else if (r.source === 'env') lines.push('$CONVSEARCH_DB names the store, so a command does not look at the other places.');
  return lines;
}

export function placeJson(l: PlaceLook, used: boolean): Json {
  return {
    path: l.shown,
    source: l.source,
    from: l.from,
    exists: l.exists,
    kind: l.kind,
    size_bytes: l.size,
    runs: l.runs,
    skipped: l.skipped,
    same_as: l.sameAs,
    used,
  };
}

/** The JSON document of `where --json`. */
export function whereJson(r: StoreResolution): Json {
  const used = usedPlace(r);
  return {
    schema_version: SCHEMA_VERSION,
    used: used === null ? null : used.shown,
    source: r.source,
    found: whereFound(r),
    places: r.looked.map((l) => placeJson(l, l === used)),
  };
}
