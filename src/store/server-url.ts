import { userInfo } from 'node:os';
import { StoreError } from './errors.js';

/**
 * `--db` URLs of the server backends (spec backends.md §8). Labels and identities never carry a
 * password: the label is what the user typed without it, the identity (what keys the sidecar index)
 * is the normalized location without any credentials, plus the table or key prefix.
 */

export type ServerKind = 'postgres' | 'redis';

export function serverKind(target: string): ServerKind | null {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(target)?.[1]?.toLowerCase();
  if (scheme === 'postgresql' || scheme === 'postgres') return 'postgres';
  if (scheme === 'redis' || scheme === 'rediss') return 'redis';
  return null;
}

function parse(target: string): URL {
  try {
    return new URL(target);
  } catch {
    // the message must not echo a password: say only what kind of URL failed
    throw new StoreError(`${redactLoosely(target)}: not a valid URL`);
  }
}

/** Best effort for an unparsable URL: drop anything between `//` and `@`. */
function redactLoosely(target: string): string {
  return target.replace(/\/\/[^/@]*@/, '//…@');
}

/** The URL as given, without its password. */
function withoutPassword(u: URL): string {
  const c = new URL(u.href);
  c.password = '';
  return c.href;
}

const TABLE = /^[a-z_][a-z0-9_]{0,39}$/;
export const DEFAULT_TABLE = 'step_persistence';
export const DEFAULT_PREFIX = 'pydantic-ai-harness:step';

/** Where and how the Postgres driver connects: explicit fields (unset ones follow `PG*` variables, as in libpq). */
export interface PostgresConnection {
  readonly host: string | undefined;
  readonly port: number | undefined;
  readonly user: string | undefined;
  readonly database: string | undefined;
  /** From the URL; otherwise the driver asks `PGPASSWORD`, then `.pgpass`. */
  readonly password: string | undefined;
  readonly sslmode: string | undefined;
  readonly sslrootcert: string | undefined;
  readonly sslcert: string | undefined;
  readonly sslkey: string | undefined;
  readonly applicationName: string;
  readonly connectTimeoutSeconds: number;
  readonly options: string | undefined;
}

export interface PostgresTarget {
  readonly label: string;
  readonly identity: string;
  readonly connection: PostgresConnection;
  readonly table: string;
}

const PG_PARAMS = new Set([
  'table',
  'host',
  'port',
  'user',
  'password',
  'dbname',
  'sslmode',
  'sslrootcert',
  'sslcert',
  'sslkey',
  'application_name',
  'connect_timeout',
  'options',
]);
const SSLMODES = new Set(['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full']);

export function postgresTarget(target: string, env: NodeJS.ProcessEnv = process.env): PostgresTarget {
  const u = parse(target);
  const label = withoutPassword(u);
  const q = u.searchParams;
  for (const key of q.keys()) {
    if (!PG_PARAMS.has(key))
      throw new StoreError(`${label}: unknown URL parameter ${JSON.stringify(key)} (read: ${[...PG_PARAMS].join(', ')})`);
  }
  const table = q.get('table') ?? DEFAULT_TABLE;
  if (!TABLE.test(table)) {
    throw new StoreError(`${label}: invalid table prefix ${JSON.stringify(table)} (want [a-z_][a-z0-9_]{0,39}, as PostgresStepStore)`);
  }
  const sslmode = q.get('sslmode') ?? undefined;
  if (sslmode !== undefined && !SSLMODES.has(sslmode)) throw new StoreError(`${label}: unknown sslmode ${JSON.stringify(sslmode)}`);
  const timeout = q.get('connect_timeout');
  if (timeout !== null && !/^\d{1,6}$/.test(timeout)) throw new StoreError(`${label}: connect_timeout must be a number of seconds`);
  const portText = q.get('port') ?? u.port;
  if (portText && !/^\d{1,5}$/.test(portText)) throw new StoreError(`${label}: invalid port ${JSON.stringify(portText)}`);
  const host = (q.get('host') ?? decodeURIComponent(u.hostname).replace(/^\[|\]$/g, '')) || undefined;
  const user = (q.get('user') ?? decodeURIComponent(u.username)) || undefined;
  const database = (q.get('dbname') ?? decodeURIComponent(u.pathname.replace(/^\//, ''))) || undefined;
  const password = (q.get('password') ?? decodeURIComponent(u.password)) || undefined;
  const connection: PostgresConnection = {
    host,
    port: portText ? Number(portText) : undefined,
    user,
    database,
    password,
    sslmode,
    sslrootcert: q.get('sslrootcert') ?? undefined,
    sslcert: q.get('sslcert') ?? undefined,
    sslkey: q.get('sslkey') ?? undefined,
    applicationName: q.get('application_name') ?? 'convsearch',
    connectTimeoutSeconds: timeout === null ? 10 : Number(timeout),
    options: q.get('options') ?? undefined,
  };
  // the identity names the data, not who reads it: no user, no password
  const effUser = user ?? env.PGUSER ?? userInfo().username;
  const effHost = (host ?? env.PGHOST ?? 'localhost').toLowerCase();
  const effPort = connection.port ?? (env.PGPORT ? Number(env.PGPORT) : 5432);
  const effDb = database ?? env.PGDATABASE ?? effUser;
  // the label must not show a password given as ?password= either
  const shown = new URL(label);
  if (shown.searchParams.has('password')) shown.searchParams.set('password', '***');
  return {
    label: shown.href,
    identity: `postgresql://${effHost}:${effPort}/${encodeURIComponent(effDb)}?table=${table}`,
    connection,
    table,
  };
}

export interface RedisTarget {
  readonly label: string;
  readonly identity: string;
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: boolean;
  readonly prefix: string;
}

export function redisTarget(target: string): RedisTarget {
  const u = parse(target);
  const label = withoutPassword(u);
  for (const key of u.searchParams.keys()) {
    if (key !== 'prefix') throw new StoreError(`${label}: unknown URL parameter ${JSON.stringify(key)} (only ?prefix= is read)`);
  }
  const prefix = u.searchParams.get('prefix') ?? DEFAULT_PREFIX;
  const dbText = u.pathname.replace(/^\//, '') || '0';
  if (!/^\d{1,9}$/.test(dbText)) throw new StoreError(`${label}: the path must be a database number, not ${JSON.stringify(dbText)}`);
  const host = (u.hostname || '127.0.0.1').replace(/^\[|\]$/g, '');
  const port = Number(u.port || '6379');
  const db = Number(dbText);
  return {
    label,
    identity: `redis://${host.toLowerCase()}:${port}/${db}?prefix=${encodeURIComponent(prefix)}`,
    host,
    port,
    db,
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    tls: u.protocol === 'rediss:',
    prefix,
  };
}
