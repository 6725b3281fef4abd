/**
 * Starting a server store's driver thread before the rest of the program loads. The thread's start and
 * the driver's import (`pg`, `ioredis`) cost 60–140 ms, the largest part of a warm search on a server;
 * started first, they overlap with the main thread loading convsearch's own modules. Only the thread
 * and the import: the connection is opened when the reader asks, with the reader's own settings.
 * Light on purpose (the launcher imports it before anything else): no driver, no reader here.
 */
import { DRIVERS } from './drivers.js';
import { serverKind } from './server-url.js';
import { SyncBridge } from './sync-bridge.js';

/** The `--db` values of a command line (`--db V` or `--db=V`, each use), else `$CONVSEARCH_DB`. */
function dbTargets(args: readonly string[], env: string | undefined): string[] {
  const found: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') break;
    if (a === '--db' && i + 1 < args.length) found.push(args[++i]!);
    else if (a.startsWith('--db=')) found.push(a.slice(5));
  }
  return found.length ? found : env ? [env] : [];
}

/** Starts a driver thread for each kind of server store the command line names; a no-op for files. */
export function prestartDrivers(args: readonly string[], env: string | undefined): void {
  const kinds = new Set(dbTargets(args, env).map(serverKind));
  for (const kind of kinds) if (kind !== null) SyncBridge.prestart(DRIVERS[kind]);
}
