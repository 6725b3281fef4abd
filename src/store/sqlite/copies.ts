import { lstatSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { StoreError } from '../errors.js';

/**
 * Private copies of a store (read when a -wal has no live writer): named for this process, removed on
 * every exit path we can catch, and left-overs of killed processes removed by the next run.
 */

const COPY_PREFIX = 'convsearch-copy-';
const liveCopies = new Set<string>();
let exitHooks = false;

function removeLiveCopies(): void {
  for (const dir of liveCopies) rmSync(dir, { recursive: true, force: true });
  liveCopies.clear();
}

/** On SIGINT/SIGTERM/SIGHUP: remove the copies, then die of the same signal (the default action). */
function onSignal(signal: NodeJS.Signals): void {
  removeLiveCopies();
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeListener(s, onSignal);
  process.kill(process.pid, signal);
}

function installExitHooks(): void {
  if (exitHooks) return;
  exitHooks = true;
  process.on('exit', removeLiveCopies);
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, onSignal);
}

/** Whether process `pid` is alive (ours or someone else's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // alive, someone else's
  }
}

/** Where copies may go, first choice first: $TMPDIR, then the system's temporary directories. */
const COPY_PLACES = (): string[] => [...new Set([tmpdir(), '/var/tmp', '/tmp', '/dev/shm'])];

const inside = (path: string, root: string): boolean => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

function realDir(path: string): string | null {
  try {
    const real = realpathSync(path);
    return lstatSync(real).isDirectory() ? real : null;
  } catch {
    return null;
  }
}

/**
 * The temporary directories a copy of the store may go to: never the store's directory or one inside
 * it (a $TMPDIR there would put a copy of the evidence beside it).
 */
export function copyPlaces(storePaths: readonly string[]): string[] {
  const evidence = storePaths.map((p) => realDir(dirname(p)) ?? dirname(p));
  const places: string[] = [];
  for (const p of COPY_PLACES()) {
    const real = realDir(p);
    if (real !== null && !evidence.some((d) => inside(real, d)) && !places.includes(real)) places.push(real);
  }
  return places;
}

/** Removes, from each of `dirs`, private copies whose process is gone (SIGKILL, a crash); only ours, and never a live one. */
export function removeStaleCopies(dirs: readonly string[] = [tmpdir()]): void {
  for (const dir of dirs) removeStaleIn(dir);
}

function removeStaleIn(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const m = /^convsearch-copy-(\d+)-/.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || processAlive(pid)) continue;
    const path = join(dir, name);
    try {
      const st = lstatSync(path);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      rmSync(path, { recursive: true, force: true });
    } catch {
      // gone already, or not ours to remove
    }
  }
}

/**
 * A private directory for a copy of the store (`storePaths`: as given and resolved), outside the
 * store's directory, removed on close and on every exit path.
 */
export function copyDirectory(storePaths: readonly string[]): { dir: string; remove: () => void } {
  const place = copyPlaces(storePaths)[0];
  if (place === undefined) {
    throw new StoreError(
      `${storePaths[0]}: no temporary directory outside the store's directory for a private copy of it (set TMPDIR to one)`,
    );
  }
  installExitHooks();
  const dir = mkdtempSync(join(place, `${COPY_PREFIX}${process.pid}-`));
  liveCopies.add(dir);
  return {
    dir,
    remove: () => {
      liveCopies.delete(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
