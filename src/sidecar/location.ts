import { createHash } from 'node:crypto';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

/** One place the index may live by default, and the directory in it that convsearch owns. */
export interface DefaultPlace {
  readonly path: string;
  /** How the place was chosen, for messages. */
  readonly from: string;
}

/**
 * Where a store's index lives by default, first choice first: $XDG_CACHE_HOME, ~/.cache, then
 * `<tmpdir>/convsearch-<uid>`; never beside the evidence (placement.ts checks). One index per store,
 * named by a digest of the store's real path.
 */
export function defaultIndexPlaces(storeRealPath: string, env: NodeJS.ProcessEnv = process.env): DefaultPlace[] {
  const name = `${createHash('sha256').update(storeRealPath).digest('hex').slice(0, 24)}.index.db`;
  const places: DefaultPlace[] = [];
  if (env.XDG_CACHE_HOME?.startsWith('/')) places.push({ path: join(env.XDG_CACHE_HOME, 'convsearch', name), from: '$XDG_CACHE_HOME' });
  places.push({ path: join(env.HOME?.startsWith('/') ? env.HOME : homedir(), '.cache', 'convsearch', name), from: '~/.cache' });
  const tmp = env.TMPDIR?.startsWith('/') ? env.TMPDIR : tmpdir();
  places.push({ path: join(tmp, `convsearch-${process.getuid?.() ?? 'user'}`, name), from: 'the temporary directory' });
  return places;
}
