/**
 * The Postgres driver session, run on the driver thread of a SyncBridge (never imported by the main
 * thread, so a SQLite search never loads `pg`). One connection, one transaction for the whole session:
 * `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`, ended with the session on close. Only single `SELECT`
 * statements are sent; the server refuses any write in a read-only transaction anyway.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
// first: before pg loads (see there)
import './pg-probe.js';
import pg from 'pg';
import type { DriverSession } from '../sync-bridge.js';
import type { PostgresConnection } from '../server-url.js';
import { pgpassLookup } from './pgpass.js';

export interface SelectRequest {
  readonly op: 'select';
  readonly text: string;
  readonly values?: readonly unknown[];
}

/** What the reader sends: the connection, and libpq's variables as the main thread saw them (see libpqEnv). */
export interface DriverConfig extends PostgresConnection {
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** libpq's sslmode in node's TLS terms (`prefer`/`allow` cannot fall back here: they mean no TLS). */
function tlsOptions(c: DriverConfig): false | ConnectionOptions {
  const mode = c.sslmode ?? (c.env.PGSSLMODE || 'disable');
  if (mode === 'disable' || mode === 'allow' || mode === 'prefer') return false;
  const tls: ConnectionOptions = {};
  const rootcert = c.sslrootcert ?? c.env.PGSSLROOTCERT;
  if (rootcert) tls.ca = readFileSync(rootcert);
  if (c.sslcert) tls.cert = readFileSync(c.sslcert);
  if (c.sslkey) tls.key = readFileSync(c.sslkey);
  if (mode === 'require' && !rootcert) tls.rejectUnauthorized = false;
  // verify-ca checks the chain but not the host name
  if (mode === 'verify-ca' || (mode === 'require' && rootcert)) tls.checkServerIdentity = () => undefined;
  return tls;
}

/**
 * A connected client for `c` (the store's reader here, the shared index's sessions in sidecar/shared/):
 * one way to reach a server, whoever asks. `types` overrides how column types are parsed.
 */
export async function connectClient(c: DriverConfig, types?: pg.CustomTypesConfig): Promise<pg.Client> {
  const client = new pg.Client({
    host: c.host,
    port: c.port,
    user: c.user,
    database: c.database,
    // asked only when the server wants one: the URL's, else PGPASSWORD, else ~/.pgpass (libpq's order)
    password: async (p: { host: string; port: number; database: string; user: string }) => {
      const found =
        c.password ??
        (c.env.PGPASSWORD || undefined) ??
        pgpassLookup({ host: p.host, port: String(p.port), database: p.database, user: p.user }, c.env);
      // pg would go on without one and fail with "SASL: … client password must be a string"
      if (found === undefined)
        throw new Error(
          "the server asks for a password and none was given (the URL's, ?password=, PGPASSWORD, or a PGPASSFILE / ~/.pgpass line)",
        );
      return found;
    },
    ssl: tlsOptions(c),
    application_name: c.applicationName,
    connectionTimeoutMillis: c.connectTimeoutSeconds * 1000,
    options: c.options,
    types,
  } as pg.ClientConfig);
  client.on('error', () => {
    // a dropped connection fails the pending query; nothing else to do here
  });
  await client.connect();
  return client;
}

export async function open(config: unknown): Promise<DriverSession> {
  // int8 (seq, counts) as text, turned into numbers by the reader; bytea as Buffer (the default)
  const client = await connectClient(config as DriverConfig);
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  return {
    async handle(request: unknown) {
      const r = request as SelectRequest;
      if (r.op !== 'select' || !/^\s*SELECT\s/i.test(r.text) || r.text.includes(';'))
        throw new Error('only single SELECT statements are sent');
      const result = await client.query({ text: r.text, values: r.values as unknown[] | undefined, rowMode: 'array' });
      return result.rows;
    },
    async close() {
      // Terminate ends the session and its transaction with it (read only: nothing to undo, nothing logged);
      // the server's closing of the socket is not waited for: a command's exit need not wait a round trip
      void client.end();
    },
  };
}
