import { userInfo } from 'node:os';
import { StoreError } from './errors.js';

/**
 * `--db` URLs of the server backends (spec backends.md §8). Labels and identities never carry a
 * password: the label is what the user typed with the password shown as `***` (as psql shows it), the
 * identity (what keys the sidecar index) is the normalized location without any credentials, plus the
 * table or key prefix. A URL that does not parse is described, never echoed.
 */

export type ServerKind = 'postgres' | 'redis';

export function serverKind(target: string): ServerKind | null {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(target)?.[1]?.toLowerCase();
  if (scheme === 'postgresql' || scheme === 'postgres') return 'postgres';
  if (scheme === 'redis' || scheme === 'rediss') return 'redis';
  return null;
}

function parse(target: string): URL {
  let u: URL;
  try {
    u = new URL(target);
  } catch {
    throw new StoreError(malformedUrl(target));
  }
  if (misplacedAt(target) || !decodable(u)) throw new StoreError(malformedUrl(target));
  return u;
}

/** The parts later percent-decoded: a bad escape (`%zz`) must be a described URL, not an internal URIError. */
function decodable(u: URL): boolean {
  try {
    for (const part of [u.username, u.password, u.hostname, u.pathname]) decodeURIComponent(part);
    return true;
  } catch {
    return false;
  }
}

/**
 * An `@` past the authority (outside a `password=` value): a password holding an unencoded `/`, `?`
 * or `#` ended the authority early and the rest, password included, would read as path or query.
 */
function misplacedAt(target: string): boolean {
  const rest = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  return rest.replace(/([?&]password=)[^&#]*/gi, '$1').includes('@');
}

/**
 * What to say of a URL that does not parse: its scheme and nothing else of it (where it fails to parse
 * cannot be told from where a password ends, so no part of it is safe to show).
 */
export function malformedUrl(target: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(target)?.[1]?.toLowerCase() ?? 'server';
  return `a ${scheme}:// URL that does not parse (not shown: it may hold a password); a password holding / @ # ? or : must be percent-encoded (%2F %40 %23 %3F %3A)`;
}

/** The URL as it may be shown: a password, in the user part or as `?password=`, replaced by `***`. */
export function maskedUrl(u: URL): string {
  const c = new URL(u.href);
  if (c.password !== '') c.password = '***';
  // any spelling of the key: a wrong-case ?PASSWORD= is still a password, and is echoed as unknown
  for (const key of [...new Set(c.searchParams.keys())]) if (key.toLowerCase() === 'password') c.searchParams.set(key, '***');
  return c.href;
}

/** `target` fit to be shown: a server URL masked (or described, when it does not parse), anything else as given. */
export function shownTarget(target: string): string {
  if (serverKind(target) === null && !/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return target;
  if (misplacedAt(target)) return malformedUrl(target);
  try {
    return maskedUrl(new URL(target));
  } catch {
    return malformedUrl(target);
  }
}

/**
 * `PostgresStepStore`'s `table=` prefix and `PostgresMediaStore`'s `table=` name, as upstream's mixed-case
 * version accepts them (its other version refuses upper case; docs/backends.md, "Table names"). Both put
 * them into SQL unquoted, so Postgres folds them to lower case: the tables of `Steps` are `steps_runs`…,
 * the ones `steps` names. The media table is a whole name (63 bytes, Postgres's limit), not a prefix.
 */
const TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,39}$/;
const MEDIA_TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
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
  /** The prefix as Postgres resolves upstream's unquoted names: folded to lower case. */
  readonly table: string;
  /** The prefix as given (it differs from `table` only in case). */
  readonly tableAsGiven: string;
  /** `?media=`, folded like `table`: the `PostgresMediaStore` table when it is not `{table}_media`. */
  readonly media: string | null;
  readonly mediaAsGiven: string | null;
  /** The server and role it connects as (`host:port user`): what keeps a shared index off the evidence's role. */
  readonly login: string;
}

const PG_PARAMS = new Set([
  'table',
  'media',
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
  const label = maskedUrl(u);
  const q = u.searchParams;
  for (const key of q.keys()) {
    if (!PG_PARAMS.has(key))
      throw new StoreError(`${label}: unknown URL parameter ${JSON.stringify(key)} (read: ${[...PG_PARAMS].join(', ')})`);
  }
  const tableAsGiven = q.get('table') ?? DEFAULT_TABLE;
  if (!TABLE.test(tableAsGiven)) {
    throw new StoreError(
      `${label}: invalid table prefix ${JSON.stringify(tableAsGiven)} (want a letter or _, then letters, digits or _, 40 at most, as PostgresStepStore)`,
    );
  }
  const mediaAsGiven = q.get('media');
  if (mediaAsGiven !== null && !MEDIA_TABLE.test(mediaAsGiven)) {
    throw new StoreError(
      `${label}: invalid media table ${JSON.stringify(mediaAsGiven)} (want a letter or _, then letters, digits or _, 63 at most, as PostgresMediaStore)`,
    );
  }
  // ASCII only (the patterns allow nothing else), as Postgres folds an unquoted identifier
  const table = tableAsGiven.toLowerCase();
  const media = mediaAsGiven?.toLowerCase() ?? null;
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
  return {
    label,
    // folded names: `?table=Steps` and `?table=steps` are the same tables, so the same index
    identity: `postgresql://${effHost}:${effPort}/${encodeURIComponent(effDb)}?table=${table}${media === null ? '' : `&media=${media}`}`,
    connection,
    table,
    tableAsGiven,
    media,
    mediaAsGiven,
    login: `${effHost}:${effPort} ${effUser}`,
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
  /** How long a connection, and then each reply, may take (`?connect_timeout=`, seconds; default 10). */
  readonly timeoutSeconds: number;
}

export function redisTarget(target: string): RedisTarget {
  const u = parse(target);
  const label = maskedUrl(u);
  for (const key of u.searchParams.keys()) {
    if (key !== 'prefix' && key !== 'connect_timeout')
      throw new StoreError(`${label}: unknown URL parameter ${JSON.stringify(key)} (read: prefix, connect_timeout)`);
  }
  const timeout = u.searchParams.get('connect_timeout');
  if (timeout !== null && !/^\d{1,6}$/.test(timeout)) throw new StoreError(`${label}: connect_timeout must be a number of seconds`);
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
    timeoutSeconds: timeout === null ? 10 : Number(timeout),
  };
}
