/**
 * Which store a command reads when it is not told: `--db`, else `$CONVSEARCH_DB`, else the first of the
 * default places that holds a step store (docs/cli.md, "Finding the store"; where upstream keeps its stores:
 * docs/backends.md). Looking opens nothing
 * for writing: a SQLite candidate is opened read-only as a search would open it (no trace left), a
 * directory is only listed. Pure in its inputs: the environment and the working directory are passed in.
 */
import { accessSync, constants, lstatSync, statSync, type Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import { StoreError } from '../store/errors.js';
import { holdsRuns, openStoreReader, storeKind } from '../store/open-reader.js';
import { shownTarget } from '../store/server-url.js';
import { DEFAULTS } from './defaults.js';
import { expandTarget, fileKey, unstattableWhy } from './stores.js';

/** Where a place comes from: the flag, the variable, or one of the default places, in their order. */
export type PlaceSource = 'db' | 'env' | 'cwd' | 'clai2';

/** What a place holds: a SQLite step store, a FileStepStore root, a directory of SQLite stores, a server. */
export type PlaceKind = 'sqlite' | 'file' | 'sqlite-directory' | 'postgres' | 'redis';

/** One place a store is looked for, before it is looked at. */
export interface StorePlace {
  readonly source: PlaceSource;
  /** The path looked at (a default place is absolute), or a server URL as given. */
  readonly target: string;
  /** Why it is looked at, for people: `$CONVSEARCH_DB`, `the current directory`, … */
  readonly from: string;
}

/** A place as it was found. */
export interface PlaceLook extends StorePlace {
  /** The target as it may be shown: a server URL's password masked. */
  readonly shown: string;
  /** Something is there (a dangling link counts: it is skipped, and says so); null: a URL, not contacted. */
  readonly exists: boolean | null;
  /** What it holds; null when it is absent or skipped. */
  readonly kind: PlaceKind | null;
  /** Bytes of a file; null for a directory, a server, or nothing. */
  readonly size: number | null;
  /** Runs of a SQLite store (one COUNT query); null where counting would mean reading more. */
  readonly runs: number | null;
  /** Why something that is there is not a store a search would read; null otherwise. */
  readonly skipped: string | null;
  /** The target of an earlier place this one reaches too (a link, a hard link, the same path). */
  readonly sameAs: string | null;
}

/** What the command reads, and every place looked at on the way (in order). */
export interface StoreResolution {
  /** The `--db`-style values a session opens; empty when nothing was found. */
  readonly targets: string[];
  /** What decided: `db` (the flag), `env` ($CONVSEARCH_DB), `found` (a default place), `none`. */
  readonly source: 'db' | 'env' | 'found' | 'none';
  /** The default place read (`source` is `found`). */
  readonly found: PlaceLook | null;
  /** The places looked at, in order (none when the flag or the variable decided and `all` was not asked). */
  readonly looked: readonly PlaceLook[];
}

/**
 * The default places, in the order they are tried: `./sessions.db` (the name the harness's
 * ConversationSearch documentation gives its SQLite store), then CLAI 2's default store,
 * `$XDG_CONFIG_HOME/pydantic-clai2/sessions.db` (`$XDG_CONFIG_HOME` unset, empty or relative:
 * `$HOME/.config`, as the XDG base directory specification says; neither set: not looked at).
 * `cwd` is the working directory, '' when it is gone (the first place is then left out).
 */
export function defaultPlaces(env: NodeJS.ProcessEnv, cwd: string): StorePlace[] {
  const places: StorePlace[] = [];
  // '' is a working directory that is gone: nothing to look in (resolving against it would throw)
  if (cwd !== '') places.push({ source: 'cwd', target: resolve(cwd, DEFAULTS.db), from: 'the current directory' });
  const xdg = env.XDG_CONFIG_HOME;
  const home = env.HOME;
  if (xdg?.startsWith('/')) {
    places.push({
      source: 'clai2',
      target: join(xdg, 'pydantic-clai2', DEFAULTS.db),
      from: "CLAI 2's default store, under $XDG_CONFIG_HOME",
    });
  } else if (home?.startsWith('/')) {
    places.push({
      source: 'clai2',
      target: join(home, '.config', 'pydantic-clai2', DEFAULTS.db),
      from: "CLAI 2's default store, under ~/.config",
    });
  }
  return places;
}

/** A default place is used when a step store is there: a SQLite store or a FileStepStore root. */
function usable(look: PlaceLook): boolean {
  return (look.kind === 'sqlite' || look.kind === 'file') && look.skipped === null && look.sameAs === null;
}

/**
 * The stores a command reads: `db` (each `--db`) when given, else a non-empty `$CONVSEARCH_DB`, else the
 * first default place holding a step store. `all` looks at every place (what `convsearch where` shows):
 * the named target too, and the default places past the one found.
 */
export function resolveStores(db: readonly string[] | undefined, env: NodeJS.ProcessEnv, cwd: string, all = false): StoreResolution {
  const named: StorePlace[] =
    db !== undefined && db.length > 0
      ? db.map((t) => ({ source: 'db', target: t, from: '--db' }))
      : env.CONVSEARCH_DB
        ? [{ source: 'env', target: env.CONVSEARCH_DB, from: '$CONVSEARCH_DB' }]
        : [];
  if (named.length > 0 && !all)
    return { targets: named.map((p) => p.target), source: named[0]!.source as 'db' | 'env', found: null, looked: [] };
  const looker = new Looker(cwd);
  const looked = named.map((p) => looker.look(p));
  let found: PlaceLook | null = null;
  for (const place of defaultPlaces(env, cwd)) {
    const look = looker.look(place);
    looked.push(look);
    if (named.length === 0 && found === null && usable(look)) {
      found = look;
      if (!all) break;
    }
  }
  if (named.length > 0) return { targets: named.map((p) => p.target), source: named[0]!.source as 'db' | 'env', found: null, looked };
  return { targets: found === null ? [] : [found.target], source: found === null ? 'none' : 'found', found, looked };
}

/** What a looked-at place is, in a few words: `absent`, `skipped: …`, `SQLite step store, 3 runs`. */
export function placeState(look: PlaceLook): string {
  if (look.exists === false) return 'absent';
  if (look.sameAs !== null) return `the same store as ${look.sameAs}`;
  if (look.skipped !== null) return `skipped: ${look.skipped}`;
  switch (look.kind) {
    case 'sqlite':
      return `SQLite step store, ${look.runs} run${look.runs === 1 ? '' : 's'}, ${look.size} bytes`;
    case 'file':
      return 'FileStepStore directory';
    case 'sqlite-directory':
      return 'directory of SQLite stores';
    default:
      return `${look.kind} server (not contacted)`;
  }
}

/** The error of a command that found no store: how to name one, and every place looked at. */
export function noStoreMessage(looked: readonly PlaceLook[]): string {
  const places = looked.map((l) => `${l.shown} (${placeState(l)})`).join(', ');
  return `no store to read: pass --db <path>, set $CONVSEARCH_DB, or put a step store in a default place; looked at ${places}`;
}

/** Looks at places in turn, remembering each file's device and inode so that a link to an earlier one says so. */
class Looker {
  private readonly seen = new Map<string, string>();

  constructor(private readonly cwd: string) {}

  look(place: StorePlace): PlaceLook {
    const base = {
      ...place,
      shown: shownTarget(place.target),
      exists: true,
      kind: null,
      size: null,
      runs: null,
      skipped: null,
      sameAs: null,
    };
    let kind: PlaceKind;
    try {
      kind = storeKind(place.target);
    } catch (e) {
      // a URL of a scheme convsearch does not read (mongodb://, http://): said so, its password masked
      return { ...base, exists: null, skipped: reason(e, base.shown) };
    }
    // a server is not contacted: where has no business connecting, and a command says what it finds
    if (kind === 'postgres' || kind === 'redis') return { ...base, exists: null, kind };
    const path = this.cwd === '' ? place.target : resolve(this.cwd, place.target);
    let st: Stats;
    try {
      st = statSync(path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if ((code === 'ENOENT' || code === 'ENOTDIR') && !linkThere(path)) return { ...base, exists: false };
      return { ...base, skipped: unstattableWhy(code) };
    }
    const key = fileKey(path);
    const was = key === null ? undefined : this.seen.get(key);
    if (was !== undefined) return { ...base, sameAs: was };
    if (key !== null) this.seen.set(key, place.target);
    if (st.isDirectory()) return { ...base, ...this.directory(path, place) };
    // a FIFO or a device is never opened: opening a FIFO blocks
    if (!st.isFile()) return { ...base, skipped: 'not a regular file or directory' };
    return { ...base, size: st.size, ...sqliteLook(path, place.target) };
  }

  private directory(path: string, place: StorePlace): { kind: PlaceKind | null; skipped: string | null } {
    try {
      accessSync(path, constants.R_OK | constants.X_OK);
    } catch (e) {
      // holdsRuns takes a directory it cannot list for a store (the reader says why): here it is skipped
      return { kind: null, skipped: `a directory that cannot be listed (${(e as NodeJS.ErrnoException).code ?? 'error'})` };
    }
    if (holdsRuns(path)) return { kind: 'file', skipped: null };
    // a directory of .db files is several stores: what --db and $CONVSEARCH_DB may name, not a default place
    if (place.source === 'db' || place.source === 'env') {
      try {
        if (expandTarget(path).stores.length > 0) return { kind: 'sqlite-directory', skipped: null };
      } catch (e) {
        return { kind: null, skipped: reason(e, path, place.target) };
      }
    }
    return { kind: null, skipped: 'a directory holding no FileStepStore run (no <run>/run.json, no media/)' };
  }
}

/** Whether a link is at `path` (one whose target is missing: it is there, and skipped). */
function linkThere(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** A SQLite candidate opened as a search opens it (read-only, no trace): a step store, its runs, or why not. */
function sqliteLook(path: string, target: string): { kind: PlaceKind | null; runs: number | null; skipped: string | null } {
  try {
    const reader = openStoreReader(path);
    try {
      return { kind: 'sqlite', runs: reader.runCount(), skipped: null };
    } finally {
      reader.close();
    }
  } catch (e) {
    return { kind: null, runs: null, skipped: reason(e, path, target) };
  }
}

/** A store error's reason without the path it starts with (the place is shown beside it). */
function reason(e: unknown, ...prefixes: string[]): string {
  if (!(e instanceof StoreError)) throw e;
  for (const p of prefixes) if (e.message.startsWith(`${p}: `)) return e.message.slice(p.length + 2);
  return e.message;
}
