/**
 * The backend tests' fixtures and servers: the parity stores copied into each backend
 * (test/fixtures/backends, from ../shared/parity/backends), and the throwaway servers of
 * scripts/lib/servers.ts.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openStoreReader } from '../../src/store/open-reader.js';
import type { StoreReader } from '../../src/store/reader.js';

export { freePort, PG_SUPERUSER, pgBinDir, startPostgres, startRedis, type PgServer, type RedisServer } from '../../scripts/lib/servers.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
/** test/fixtures/backends in the repository (the compiled tests run from dist/test/helpers). */
export const FIXTURES = join(HERE, '..', '..', '..', 'test', 'fixtures', 'backends');
/** The shared parity copy, when this checkout sits beside it. */
export const SHARED_FIXTURES = join(HERE, '..', '..', '..', '..', 'shared', 'parity', 'backends');
export const SQLITE_FIXTURES = join(HERE, '..', '..', '..', 'test', 'fixtures', 'parity');
export const STORES = ['small', 'threaded', 'media', 'unicode'] as const;
export type StoreName = (typeof STORES)[number];

/** A file tree's names, types, modes, sizes, modification times and bytes, for before/after comparisons. */
export function treeState(root: string): string {
  const out: string[] = [];
  const walk = (rel: string): void => {
    const st = lstatSync(join(root, rel), { bigint: true });
    const kind = st.isDirectory() ? 'd' : st.isFile() ? 'f' : 'o';
    const body =
      kind === 'f'
        ? createHash('sha256')
            .update(readFileSync(join(root, rel)))
            .digest('hex')
        : '';
    out.push(`${rel || '.'} ${kind} ${st.mode.toString(8)} ${st.size} ${st.mtimeNs} ${st.ctimeNs} ${body}`);
    if (kind === 'd') for (const n of readdirSync(join(root, rel)).sort()) walk(join(rel, n));
  };
  walk('');
  return out.join('\n');
}

/** The started server, or null after skipping the test with the reason it could not start. */
export function need<T>(t: TestContext, server: T | string): T | null {
  if (typeof server === 'string') {
    t.skip(server);
    return null;
  }
  return server;
}

/** `body` over a reader of `target` (libpq's variables read from `env`, default the process's), closed afterwards. */
export function withReader<T>(target: string, body: (r: StoreReader) => T, env?: NodeJS.ProcessEnv): T {
  const r = openStoreReader(target, { env }) as StoreReader;
  try {
    return body(r);
  } finally {
    r.close();
  }
}
