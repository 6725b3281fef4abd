/**
 * The driver threads a command line needs, started before anything else: bin/convsearch.js runs this
 * module (its own small bundle, dist/bundle/prestart.cjs) before it loads the command line's bundle, so
 * that a thread's start and its driver's import (`pg`, `ioredis`: 60–140 ms) overlap with that load;
 * the bundle's bridges then take those threads (SyncBridge's spares are the process's, not a bundle's).
 * main() calls it too, for callers that load the bundle alone (a no-op for a thread already started).
 */
import { prestartIndexDriver } from './sidecar/shared/prestart.js';
import { prestartDrivers } from './store/prestart.js';

// the launcher sets its process flags once the threads started here are up (see there)
export { whenThreadsUp } from './store/sync-bridge.js';

/** `args`: the command line after `node convsearch` (process.argv.slice(2)). */
export function prestart(args: readonly string[], env: NodeJS.ProcessEnv): void {
  prestartDrivers(args, env.CONVSEARCH_DB, env);
  prestartIndexDriver(args, env.CONVSEARCH_INDEX, env);
}
