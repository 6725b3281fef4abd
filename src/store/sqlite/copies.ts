import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // alive, someone else's
  }
}

/** Removes private copies whose process is gone (SIGKILL, a crash); only ours, and never a live one. */
export function removeStaleCopies(dir = tmpdir()): void {
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

/** A private directory for a copy of the store, removed on close and on every exit path. */
export function copyDirectory(): { dir: string; remove: () => void } {
  installExitHooks();
  const dir = mkdtempSync(join(tmpdir(), `${COPY_PREFIX}${process.pid}-`));
  liveCopies.add(dir);
  return {
    dir,
    remove: () => {
      liveCopies.delete(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
