/**
 * Starting the shared index's driver thread before the rest of the program loads (see store/prestart.ts):
 * light on purpose, as the launcher runs it before the bundle (src/prestart.ts).
 */
import { SyncBridge } from '../../store/sync-bridge.js';

/** The shared index's driver module, run on a SyncBridge's thread. */
export const INDEX_DRIVER = new URL('./pg-driver.js', import.meta.url);

/** Whether `--index` names a shared index (a server URL) rather than an index file. */
export function isSharedIndex(value: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value);
}

/**
 * Starts the index's driver thread now when the command line names a shared index (`--index V`,
 * `--index=V`, else `$CONVSEARCH_INDEX`): the thread's start and `pg`'s import then overlap with the
 * rest of the program loading, as a server store's do.
 */
export function prestartIndexDriver(args: readonly string[], env: string | undefined): void {
  let value = env || undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') break;
    if (a === '--no-index') return;
    if (a === '--index' && i + 1 < args.length) value = args[++i];
    else if (a.startsWith('--index=')) value = a.slice(8);
  }
  if (value !== undefined && isSharedIndex(value)) SyncBridge.prestart(INDEX_DRIVER);
}
