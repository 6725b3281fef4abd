import { closeSync, constants, openSync, readFileSync, renameSync, rmSync, statfsSync, statSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { parallelOptionsFromEnv } from '../parallel/threads.js';
import { StoreError } from '../store/errors.js';
import type { StoreReader } from '../store/reader.js';
import { ForeignError, IndexBusyError, IndexDamagedError, IndexRefusedError, IndexSpaceError, IndexUnavailableError } from './errors.js';
import { closeIndexDatabase, openIndexDatabase, removeIndexFiles } from './file.js';
import { IndexedCorpusSource } from './indexed-source.js';
import { describeFsError, type IndexPlace, placeIndex } from './placement.js';
import { readIndexMeta } from './meta.js';
import type { ProgressFn } from '../history/source.js';
import type { ReadAhead } from './shared/read-session.js';
import { withSharedIndex } from './shared/shared-index.js';
import type { IndexStanding } from './shared/standing.js';
import { isSharedIndex } from './shared/target.js';
import { IndexSync, type SyncReport } from './sync.js';
import type { IndexTables } from './tables.js';

export interface IndexOptions extends ReadAhead {
  /** Index file to use; default: one per store in the user cache directory. */
  readonly path?: string;
  readonly onProgress?: ProgressFn;
  /** Told when the index cannot be used and the search replays the store instead. */
  readonly onFallback?: (reason: string) => void;
  /** Told of what was repaired or rebuilt on the way (one line each). */
  readonly onWarning?: (message: string) => void;
  /** Where the default place and the thread count are read from; default: the process's environment. */
  readonly env?: NodeJS.ProcessEnv;
  /** Re-read and digest the whole store even when its stamp says nothing changed (`--verify`, see sync.ts). */
  readonly verify?: boolean;
  /** A shared index behind the store: replay the store instead (`--fresh`; a local index is always brought up to date first). */
  readonly fresh?: boolean;
  /** Told how a shared index stands against each store it answers for (null: it did not answer after all). */
  readonly onIndexStanding?: (store: string, standing: IndexStanding | null) => void;
  /** Told before the index is written in bulk (see IndexSync's onBulkWrite). */
  readonly onBulkWrite?: () => void;
  /**
   * withIndex's `fn` answers from its source alone, with no effect beyond its answer (a search), so it
   * may be run twice: for a store whose stamp is read on another thread (StoreReader.stampAhead) it runs
   * over the index as it stands while the stamp is read, and again only if bringing the index up to
   * date changed the content it answers for.
   */
  readonly answerAhead?: boolean;
}

export interface IndexedSource {
  readonly source: IndexedCorpusSource;
  readonly report: SyncReport;
  readonly path: string;
}

/**
 * Tells the store the stamp the index recorded (StoreReader.stampAhead), then runs `ahead` over the index
 * as it stands (one read transaction, ended before any update), and gives the content it answered for;
 * null when it threw (it is asked again once the index is up to date, and throws there if it must).
 */
function answeredAhead(tables: IndexTables, store: StoreReader, ahead: (source: IndexedCorpusSource) => void): string | null {
  tables.begin();
  try {
    const meta = readIndexMeta(tables.readMeta());
    store.stampAhead?.(meta.storeStamp);
    ahead(new IndexedCorpusSource(tables, meta));
    return meta.content;
  } catch {
    return null;
  } finally {
    tables.commit();
  }
}

/**
 * Opens the index at a checked `path`, folds in what changed in the store, and hands back a corpus source
 * over it. `ahead`, if given, is first run over the index as it stands; `aheadStands` tells whether the
 * index still answers for the content it was run on (then its answer is this source's).
 */
function openAt(
  store: StoreReader,
  path: string,
  opts: IndexOptions,
  ahead?: (source: IndexedCorpusSource) => void,
): IndexedSource & { db: BetterSqlite3.Database; aheadStands: boolean } {
  const { db, tables } = openIndexDatabase(path, store.identity);
  try {
    const aheadContent = ahead === undefined ? null : answeredAhead(tables, store, ahead);
    const sync = new IndexSync(tables, store, parallelOptionsFromEnv(opts.env), opts.onBulkWrite);
    for (let attempt = 1; ; attempt++) {
      const report = sync.sync(opts.onProgress, opts.verify === true);
      // the search reads one commit, and only the one that answers for this store's content: another
      // process may have updated the index (to another state of the store) since
      tables.begin();
      const meta = readIndexMeta(tables.readMeta());
      if (meta.content === report.content || attempt >= 5) {
        if (meta.content !== report.content)
          throw new IndexUnavailableError('other processes keep updating the index to another state of the store');
        return { db, source: new IndexedCorpusSource(tables, meta), report, path, aheadStands: aheadContent === meta.content };
      }
      tables.commit();
    }
  } catch (e) {
    closeIndexDatabase(db, path);
    throw e;
  }
}

/** Opens the store's index (placed and checked like withIndex's), brings it up to date, and hands back a corpus source over it. */
export function openIndexedSource(store: StoreReader, opts: IndexOptions = {}): IndexedSource & { db: BetterSqlite3.Database } {
  const place = placeIndex(store.identity, store.label, opts.path, opts.env);
  reportPlace(place, opts);
  return openAt(store, place.path, opts);
}

// ---------------------------------------------------------------------------------------------
// Disk space: a build that cannot fit is not started, and one that failed is not retried on every search

/** A first build writes about this much of the store's size (index, and its -wal until the end). */
const BUILD_SPACE_RATIO = 0.6;
const BUILD_SPACE_MIN = 16 * 1024 * 1024;

function freeBytes(dir: string): number | null {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}

const mb = (n: number): string => `${Math.ceil(n / 1e6)} MB`;

interface SpaceMark {
  readonly stamp: string;
  readonly free: number;
}

const markPath = (path: string): string => `${path}.nospace`;

/** The mark's text, read without following a link (a planted link is no mark). */
function readMark(path: string): string {
  const fd = openSync(markPath(path), constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** Why the index should not be written now, or null: a failure for space recorded while nothing changed, or too little room for a first build. */
function spaceVeto(store: StoreReader, path: string): string | null {
  const free = freeBytes(dirname(path));
  try {
    const mark = JSON.parse(readMark(path)) as SpaceMark;
    const stamp = store.stamp(mark.stamp);
    if (stamp !== null && mark.stamp === stamp && free !== null && free <= mark.free + BUILD_SPACE_MIN) {
      return `the disk was full when the index was last updated (${mb(free)} free in ${dirname(path)}); free some space, or pass --no-index`;
    }
    rmSync(markPath(path), { force: true }); // something changed: try again
  } catch {
    // no mark
  }
  let size = 0;
  try {
    size = statSync(path).size;
  } catch {
    // no index yet
  }
  if (size > 0 || free === null) return null;
  const need = Math.max(BUILD_SPACE_MIN, (store.byteSize() ?? 0) * BUILD_SPACE_RATIO);
  return free < need
    ? `not enough free space for the index: a first build needs about ${mb(need)}, ${mb(free)} free in ${dirname(path)}`
    : null;
}

function rememberNoSpace(store: StoreReader, path: string): void {
  const free = freeBytes(dirname(path));
  const stamp = store.stamp();
  if (stamp === null || free === null) return;
  // a new file of our own (never through a link someone planted), then renamed over the mark: a
  // rename replaces a link, it never writes through it
  const temp = `${markPath(path)}.${process.pid}.${randomBytes(6).toString('hex')}`;
  try {
    const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, JSON.stringify({ stamp, free } satisfies SpaceMark));
    } finally {
      closeSync(fd);
    }
    renameSync(temp, markPath(path));
  } catch {
    // the disk is full after all: the next search tries again
    rmSync(temp, { force: true });
  }
}

/** File-system and SQLite errors that say the index cannot be written here, in words. */
function unavailable(e: unknown): IndexUnavailableError | null {
  if (e instanceof IndexUnavailableError) return e;
  const code = (e as { code?: unknown }).code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return new IndexSpaceError(describeFsError(e));
  if (typeof code === 'string' && /^(EACCES|EPERM|EROFS|ENOTDIR|EISDIR|ELOOP|EMFILE|ENFILE|EIO|ENOENT)$/.test(code))
    return new IndexUnavailableError(describeFsError(e));
  return null;
}

/**
 * Runs `fn` over the index, and never lets the index harm the answer:
 * - a location that endangers the evidence or cannot be trusted is refused (IndexRefusedError, exit 2);
 * - a damaged index (checksums, missing rows, SQLite corruption, anything it cannot decode) is removed
 *   and rebuilt once, with one warning;
 * - an index that cannot be written (read-only, full disk, no permission) falls back to `fallback`
 *   (a fresh replay) after telling `onFallback` why in words.
 * Store errors pass through untouched: they are the store's, reported as such.
 */
/** Tries after SQLITE_BUSY the busy wait could not resolve, before replaying instead. */
const BUSY_TRIES = 3;

/** Tells what placement repaired, and where the index went when the first default places would not do. */
function reportPlace(place: IndexPlace, opts: IndexOptions): void {
  for (const r of place.repaired) opts.onWarning?.(r);
  if (place.notice !== undefined) opts.onWarning?.(place.notice);
}

/** A refusal ends the search only where the user named the place (`--index`); the default place never fails a search. */
const refusedHere = (e: unknown, opts: IndexOptions): boolean => e instanceof IndexRefusedError && opts.path !== undefined;

export function withIndex<T>(store: StoreReader, opts: IndexOptions, fn: (source: IndexedCorpusSource) => T, fallback: () => T): T {
  // a server URL: the shared index, kept by `convsearch index sync` and only read here
  if (opts.path !== undefined && isSharedIndex(opts.path)) return withSharedIndex(store, opts.path, opts, fn, fallback);
  let place: IndexPlace;
  try {
    place = placeIndex(store.identity, store.label, opts.path, opts.env);
  } catch (e) {
    if (refusedHere(e, opts)) throw e;
    const u = e instanceof IndexRefusedError ? new IndexUnavailableError(e.message) : unavailable(e);
    if (!u) throw e;
    opts.onFallback?.(u.message);
    return fallback();
  }
  reportPlace(place, opts);
  const path = place.path;
  const veto = spaceVeto(store, path);
  if (veto !== null) {
    opts.onFallback?.(veto);
    return fallback();
  }
  let damage: string | null = null;
  let busyTries = 0;
  // the stamp is read elsewhere meanwhile: the index answers first (see answerAhead)
  const aheadFirst = opts.answerAhead === true && store.stampAhead !== undefined && opts.verify !== true;
  for (;;) {
    let opened: ReturnType<typeof openAt> | null = null;
    let early: { value: T } | null = null;
    try {
      opened = openAt(store, path, opts, aheadFirst ? (source) => void (early = { value: fn(source) }) : undefined);
      const result = opened.aheadStands && early !== null ? (early as { value: T }).value : fn(opened.source);
      if (damage !== null) opts.onWarning?.(`index ${path} was damaged (${damage}); rebuilt it`);
      return result;
    } catch (e) {
      if (opened) closeIndexDatabase(opened.db, path);
      opened = null;
      // the store changed under a read in place, or the store itself is at fault: not the index's business
      if (
        !store.unchanged() ||
        e instanceof ForeignError ||
        e instanceof StoreError ||
        refusedHere(e, opts) ||
        store.storeError(e) !== null
      )
        throw e;
      if (e instanceof IndexRefusedError) {
        opts.onFallback?.(`${e.message} (${path})`);
        return fallback();
      }
      const u = unavailable(e);
      if (u instanceof IndexBusyError && busyTries < BUSY_TRIES) {
        // another convsearch is writing the index: its commit ends soon, then read what it wrote
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50 * ++busyTries);
        continue;
      }
      if (u) {
        if (u instanceof IndexSpaceError) rememberNoSpace(store, path);
        opts.onFallback?.(
          damage === null ? `${u.message} (${path})` : `index ${path} was damaged (${damage}) and could not be rebuilt: ${u.message}`,
        );
        return fallback();
      }
      // anything else is the index not being what we wrote: rebuild it once, then give up on it
      const why = e instanceof IndexDamagedError ? e.message : `${(e as Error).name}: ${(e as Error).message}`;
      removeIndexFiles(path);
      if (damage !== null) {
        opts.onFallback?.(`index ${path} is still damaged after a rebuild (${why})`);
        return fallback();
      }
      damage = why.replace(/\s*[\r\n]+\s*/g, ' ');
      try {
        place = placeIndex(store.identity, store.label, opts.path, opts.env);
      } catch (e2) {
        if (refusedHere(e2, opts)) throw e2;
        opts.onFallback?.(`index ${path} was damaged (${damage}) and could not be rebuilt: ${unavailable(e2)?.message ?? String(e2)}`);
        return fallback();
      }
    } finally {
      if (opened) closeIndexDatabase(opened.db, path);
    }
  }
}

/** `false`: replay the store for this search (the reference's way); otherwise the index, at `path` or the default place. */
export type IndexChoice = false | { readonly path?: string; readonly verify?: boolean; readonly fresh?: boolean };
