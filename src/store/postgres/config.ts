/**
 * The settings a Postgres store's driver session is opened with: one function for the reader and for
 * the launcher, which opens the session ahead (store/prestart.ts); the reader's bridge takes a session
 * opened ahead only when its settings are these exactly. Light on purpose (the launcher loads it first).
 */
import type { PostgresTarget } from '../server-url.js';
import type { DriverConfig } from './driver.js';
import { libpqEnv } from './pgpass.js';

export function postgresDriverConfig(t: PostgresTarget, env: NodeJS.ProcessEnv): DriverConfig {
  return { ...t.connection, env: libpqEnv(env) };
}
