/**
 * What `--db` values name: each a store, except a directory of SQLite files, which names each of its
 * `.db` files (Session reads them together as one corpus). A store reached by two paths is one store.
 */
import { accessSync, constants, readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { StoreError } from '../store/errors.js';
import { Notices, type StoreNotice } from '../store/notices.js';
import { holdsRuns } from '../store/open-reader.js';

/** The stores a `--db` value names, and the entries named like stores that cannot be read (`<path>: why`). */
export interface Expansion {
  readonly stores: string[];
  readonly unreadable: string[];
}

/**
 * The stores a `--db` value names: a directory whose entries include `.db` names and no FileStepStore
 * run (no `<name>/run.json`, no `media/`) is a set of SQLite stores, each readable `.db` file one (sorted
 * by name, labelled by its path); anything else is one store, labelled as given. A `.db` entry that is
 * not a readable file is listed in `unreadable`, never opened (a FIFO would block the open); a directory
 * whose `.db` entries are all unreadable is an error naming them.
 */
export function expandTarget(target: string): Expansion {
  let names: string[];
  try {
    if (!statSync(target).isDirectory()) return { stores: [target], unreadable: [] };
    names = readdirSync(target).sort();
  } catch {
    return { stores: [target], unreadable: [] };
  }
  const candidates = names.filter((n) => n.endsWith('.db'));
  if (candidates.length === 0 || holdsRuns(target)) return { stores: [target], unreadable: [] };
  const stores: string[] = [];
  const unreadable: string[] = [];
  for (const n of candidates) {
    const p = join(target, n);
    const why = unreadableWhy(p);
    if (why === null) stores.push(p);
    else unreadable.push(`${p}: ${why}`);
  }
  if (stores.length === 0)
    throw new StoreError(`${target}: none of its ${candidates.length} .db entries can be read (${unreadable.join('; ')})`);
  return { stores, unreadable };
}

/** Why the entry `p` cannot be read as a store file, or null when it can. Looks only: opens nothing. */
function unreadableWhy(p: string): string | null {
  let st: Stats;
  try {
    st = statSync(p);
  } catch (e) {
    return unstattableWhy((e as NodeJS.ErrnoException).code);
  }
  if (st.isDirectory()) return 'a directory, not a file';
  if (st.isFIFO()) return 'a FIFO, not a file';
  if (!st.isFile()) return 'not a regular file';
  try {
    accessSync(p, constants.R_OK);
  } catch (e) {
    return `no permission to read (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  return null;
}

/** Why a path whose name is there cannot be stat'ed (`code`: the error's), in a few words. */
export function unstattableWhy(code: string | undefined): string {
  if (code === 'ENOENT') return 'a dangling symlink';
  if (code === 'ELOOP') return 'a symlink loop';
  return `cannot be looked at (${code ?? 'error'})`;
}

/** The stores a session reads, each once, with the notices of what was set aside. */
export interface TargetSet {
  readonly targets: string[];
  /** `same-store`: a store named again (by another path, a link); `unreadable-entry`: a `.db` entry that cannot be read. */
  readonly notices: readonly StoreNotice[];
}

/**
 * The stores `targets` name, each once: directories of SQLite files expanded (see expandTarget), and a
 * file or directory reached again (`a.db`, `./a.db`, a symlink, a hard link: the same device and inode)
 * kept once, under its first label, with a `same-store` notice naming both paths.
 */
export function targetSet(targets: readonly string[]): TargetSet {
  const first = new Map<string, string>();
  const notices = new Notices();
  /** False (and a notice) when `label` reaches a file or directory already kept. */
  const once = (label: string): boolean => {
    const key = fileKey(label);
    if (key === null) return true; // a URL, or a path that does not exist: opening says what it is
    const was = first.get(key);
    if (was === undefined) {
      first.set(key, label);
      return true;
    }
    notices.add('same-store', null, null, sameStore(label, was));
    return false;
  };
  const out: string[] = [];
  for (const t of targets) {
    if (!once(t)) continue;
    const { stores, unreadable } = expandTarget(t);
    for (const u of unreadable) notices.add('unreadable-entry', null, null, u);
    for (const s of stores) if (s === t || once(s)) out.push(s);
  }
  return { targets: out, notices: notices.notices() };
}

/** What a `same-store` notice says: `label` reaches the store first named `was`. */
export function sameStore(label: string, was: string): string {
  return label === was ? `${label} named twice` : `${label} is ${was}`;
}

/** The stores `targets` name, each once (see targetSet). */
export function storeTargets(targets: readonly string[]): string[] {
  return targetSet(targets).targets;
}

/** Device and inode: what is the same file (or directory) however it is reached. */
export function fileKey(path: string): string | null {
  try {
    const st = statSync(path, { bigint: true });
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}
