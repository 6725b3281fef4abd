/**
 * Starting a server store's driver thread before the rest of the program loads. The thread's start and
 * the driver's import (`pg`, `ioredis`) cost 60–140 ms, the largest part of a warm search on a server;
 * started first, they overlap with the main thread loading convsearch's own modules. A Postgres store's
 * session is opened ahead too (connection and transaction), with the settings its reader will ask for
 * (postgres/config.ts): the reader's bridge takes it only when they are equal.
 * Light on purpose (the launcher imports it before anything else): no driver, no reader here.
 */
import { DRIVERS } from './drivers.js';
import { postgresDriverConfig } from './postgres/config.js';
import { postgresTarget, serverKind } from './server-url.js';
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

/** The settings a Postgres store's session would be opened with, or undefined when its URL is refused (the command says why). */
function postgresConfig(target: string, vars: NodeJS.ProcessEnv): unknown {
  try {
    return postgresDriverConfig(postgresTarget(target, vars), vars);
  } catch {
    return undefined;
  }
}

/**
 * Starts a driver thread for each kind of server store the command line names; a no-op for files.
 * Given the environment the command reads (`vars`), the thread of a command that names one Postgres
 * store opens its session ahead too (a thread serves one session at a time: with several, none).
 */
export function prestartDrivers(args: readonly string[], env: string | undefined, vars?: NodeJS.ProcessEnv): void {
  const targets = dbTargets(args, env);
  const kinds = new Set(targets.map(serverKind));
  for (const kind of kinds) {
    if (kind === null) continue;
    const mine = targets.filter((t) => serverKind(t) === kind);
    const config = kind === 'postgres' && vars !== undefined && mine.length === 1 ? postgresConfig(mine[0]!, vars) : undefined;
    SyncBridge.prestart(DRIVERS[kind], config);
  }
}
