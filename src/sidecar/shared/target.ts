import type { DriverConfig } from '../../store/postgres/driver.js';
import { libpqEnv } from '../../store/postgres/pgpass.js';
import { maskedUrl, malformedUrl, postgresTarget, serverKind } from '../../store/server-url.js';
import { StoreError } from '../../store/errors.js';
import type { StoreReader } from '../../store/reader.js';
import { IndexRefusedError } from '../errors.js';

/**
 * `--index postgres://…`: the shared index, in a Postgres schema of its own (`?schema=`, default
 * convsearch_index). The URL is read like a store's (store/server-url.ts: libpq's parameters, `PG*`
 * variables, `.pgpass`), and shown only masked.
 */

export const DEFAULT_INDEX_SCHEMA = 'convsearch_index';
/** Unquoted identifiers only: the schema name stands in SQL as it is. */
const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

export interface SharedIndexTarget {
  /** The URL with its password shown as `***`. */
  readonly label: string;
  readonly schema: string;
  readonly config: DriverConfig;
  /** `host:port user`, as a Postgres store's `login`. */
  readonly login: string;
}

/** Whether `--index` names a shared index (a server URL) rather than an index file. */
export function isSharedIndex(value: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value);
}

export function sharedIndexTarget(value: string, env: NodeJS.ProcessEnv = process.env): SharedIndexTarget {
  if (serverKind(value) !== 'postgres') {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(value)?.[1] ?? '';
    throw new IndexRefusedError(`refusing --index ${scheme}://…: a shared index lives in Postgres (postgres:// or postgresql://)`);
  }
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new IndexRefusedError(`refusing --index: ${malformedUrl(value)}`);
  }
  const label = maskedUrl(u);
  const schema = u.searchParams.get('schema') ?? DEFAULT_INDEX_SCHEMA;
  if (!SCHEMA.test(schema))
    throw new IndexRefusedError(`refusing --index ${label}: invalid schema name ${JSON.stringify(schema)} (want [a-z_][a-z0-9_]*)`);
  for (const key of ['table', 'media'])
    if (u.searchParams.has(key))
      throw new IndexRefusedError(`refusing --index ${label}: ?${key}= names a store's tables; the index takes ?schema=`);
  u.searchParams.delete('schema');
  try {
    const t = postgresTarget(u.href, env);
    return { label, schema, config: { ...t.connection, env: libpqEnv(env) }, login: t.login };
  } catch (e) {
    if (!(e instanceof StoreError)) throw e;
    // the message names the URL without ?schema=: the whole one, masked, reads better
    throw new IndexRefusedError(`refusing --index ${label}: ${e.message.replace(/^[^ ]*: /, '')}`);
  }
}

/** The evidence's role never writes or reads the index: a store read as `login` keeps its index elsewhere. */
export function refuseEvidenceRole(target: SharedIndexTarget, store: StoreReader): void {
  if (store.login !== undefined && store.login === target.login) {
    const user = target.login.slice(target.login.indexOf(' ') + 1);
    throw new IndexRefusedError(
      `refusing --index ${target.label}: it connects as ${user}, the role that reads the evidence (${store.label}); give the index a role of its own`,
    );
  }
}
