import { EMPTY_DIGEST } from '../store/content.js';
import { IndexDamagedError } from './errors.js';

/** Meta values the index cannot do without (anything else missing means damage). */
export interface IndexMeta {
  readonly runCount: number;
  readonly nextSegment: number;
  readonly nextRunKey: number;
  /** All postings of runs written before it were merged into this segment (0: never compacted). */
  readonly compacted: number;
  /** The last segment of the base: `compacted`, or the last one a build wrote (each of its segments its runs' own). */
  readonly base: number;
  /** The segments after the base written before it were merged into this one (tiered: the base is not rewritten). */
  readonly merged: number;
  /** The first postings row id not in the base segment (the rows a tier merge reads). */
  readonly tierFrom: number;
  /**
   * The segments after the base whose postings rows have a term directory of their own (tables.ts
   * TIER_PARTS rows each), ascending: an update lists its rows there, not in the main directory, so that
   * one appended run rewrites a few directory rows instead of most of them; a merge folds them.
   */
  readonly tierSegments: readonly number[];
  /** Postings bytes of the base segment, and written since it: the base is rewritten once the tier grows comparable. */
  readonly baseBytes: number;
  readonly tierBytes: number;
  /** Segments that may hold live postings. */
  readonly liveSegments: number;
  readonly content: string;
  readonly mediaCount: number;
  readonly mediaDigest: string;
  readonly storeStamp: string;
  /** Counts the index's updates: the same number means the same rows (a read may be reused under the write lock). */
  readonly generation: number;
}

export function readIndexMeta(meta: ReadonlyMap<string, string>): IndexMeta {
  const text = (k: string): string => {
    const v = meta.get(k);
    if (v === undefined) throw new IndexDamagedError(`the index meta lacks ${k}`);
    return v;
  };
  const int = (k: string): number => {
    // digits only: Number() would also take '', ' 7', '0x10' and '1e3', which String(count) never writes
    const v = text(k);
    const n = Number(v);
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(n)) throw new IndexDamagedError(`the index meta ${k} is not a count`);
    return n;
  };
  return {
    runCount: int('run_count'),
    nextSegment: int('next_segment'),
    nextRunKey: int('next_run_key'),
    compacted: int('compacted'),
    base: int('base'),
    merged: int('merged'),
    tierFrom: int('tier_from'),
    tierSegments: segments(text('tier_segments')),
    baseBytes: int('base_bytes'),
    tierBytes: int('tier_bytes'),
    liveSegments: int('live_segments'),
    content: text('content'),
    mediaCount: int('media_count'),
    mediaDigest: text('media_digest'),
    storeStamp: text('store_stamp'),
    generation: int('generation'),
  };
}

/** `tier_segments`: segment numbers, ascending, one space between (none: empty). */
function segments(v: string): number[] {
  if (v === '') return [];
  if (!/^\d+( \d+)*$/.test(v)) throw new IndexDamagedError('the index meta tier_segments is not a list of segments');
  const out = v.split(' ').map(Number);
  if (!out.every((s, i) => Number.isSafeInteger(s) && s > 0 && (i === 0 || s > out[i - 1]!)))
    throw new IndexDamagedError('the index meta tier_segments is not a list of segments');
  return out;
}

/** The meta of an index that has seen nothing yet. */
export const EMPTY_META: ReadonlyArray<[string, string]> = [
  ['run_count', '0'],
  ['next_segment', '1'],
  ['next_run_key', '1'],
  ['compacted', '0'],
  ['base', '0'],
  ['merged', '0'],
  ['tier_from', '0'],
  ['tier_segments', ''],
  ['base_bytes', '0'],
  ['tier_bytes', '0'],
  ['live_segments', '0'],
  ['content', ''],
  ['media_count', '0'],
  ['media_digest', EMPTY_DIGEST],
  ['store_stamp', ''],
  ['generation', '0'],
];

/** Where merges put what: the base segment, the tier merged into one, the first postings id not in the base. */
export type Layout = Pick<IndexMeta, 'compacted' | 'base' | 'merged' | 'tierFrom' | 'tierSegments'>;

/**
 * The segment holding a run's live postings: its own, unless a later merge took it: into the base
 * (`compacted`) or, for segments after the base, into the tier (`merged`). Segment numbers only grow.
 */
export const liveSegment = (seg: number, at: Pick<Layout, 'compacted' | 'base' | 'merged'>): number => {
  if (seg <= at.compacted) return at.compacted;
  return seg <= at.base ? seg : Math.max(seg, at.merged);
};
