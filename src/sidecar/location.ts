import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where a store's index lives by default: the user cache directory, never beside the evidence.
 * One index per store, named by a digest of the store's real path.
 */
export function defaultIndexPath(storeRealPath: string, env: NodeJS.ProcessEnv = process.env): string {
  const cacheRoot = env.XDG_CACHE_HOME?.startsWith('/') ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  const digest = createHash('sha256').update(storeRealPath).digest('hex').slice(0, 24);
  return join(cacheRoot, 'convsearch', `${digest}.index.db`);
}
