/**
 * What `--db` values name: each a store, except a directory of SQLite files, which names each of its
 * `.db` files (Session reads them together as one corpus).
 */
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { holdsRuns } from '../store/open-reader.js';

/**
 * The stores a `--db` value names: a directory whose entries include `.db` files and no FileStepStore
 * run (no `<name>/run.json`, no `media/`) is a set of SQLite stores, each `.db` file one (sorted by
 * name, labelled by its path); anything else is one store, labelled as given.
 */
export function expandTarget(target: string): string[] {
  let names: string[];
  try {
    if (!statSync(target).isDirectory()) return [target];
    names = readdirSync(target).sort();
  } catch {
    return [target];
  }
  const dbs = names.filter((n) => n.endsWith('.db') && isFile(join(target, n)));
  return holdsRuns(target) || dbs.length === 0 ? [target] : dbs.map((n) => join(target, n));
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * The stores `targets` name, each once: directories of SQLite files expanded (see expandTarget), and a
 * path named twice (`a.db`, `./a.db`, a symlink to it) kept once, under its first label.
 */
export function storeTargets(targets: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of targets.flatMap(expandTarget)) {
    let key = t;
    try {
      key = realpathSync(t);
    } catch {
      // a URL, or a path that does not exist: opening says what it is
    }
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(t);
  }
  return out;
}
