/**
 * Starting the shared index's driver thread before the rest of the program loads (see store/prestart.ts):
 * light on purpose, as the launcher runs it before the bundle (src/prestart.ts).
 */
import { SyncBridge } from '../../store/sync-bridge.js';
import { isSharedIndex, sharedIndexTarget } from './target.js';

/** The shared index's driver module, run on a SyncBridge's thread. */
export const INDEX_DRIVER = new URL('./pg-driver.js', import.meta.url);

/**
 * Starts the index's driver thread now when the command line names a shared index (`--index V`,
 * `--index=V`, else `$CONVSEARCH_INDEX`): the thread's start, `pg`'s import and, given the environment
 * the command reads (`vars`: libpq's variables, ~/.pgpass), the connection then overlap with the rest
 * of the program loading. A URL that cannot serve is left to the command to report.
 */
export function prestartIndexDriver(args: readonly string[], env: string | undefined, vars?: NodeJS.ProcessEnv): void {
  let value = env || undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') break;
    if (a === '--no-index') return;
    if (a === '--index' && i + 1 < args.length) value = args[++i];
    else if (a.startsWith('--index=')) value = a.slice(8);
  }
  if (value === undefined || !isSharedIndex(value)) return;
  let config: unknown;
  try {
    config = vars === undefined ? undefined : sharedIndexTarget(value, vars).config;
  } catch {
    config = undefined; // refused: the command says why
  }
  SyncBridge.prestart(INDEX_DRIVER, config);
}
