/**
 * better-sqlite3, loaded on first use: a command that opens no database (--help, --version,
 * completion) does not pay for loading the native addon (about 6 ms of a 60 ms start).
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

// better-sqlite3 only honours `file:` URIs (needed for mode=ro, immutable, readonly_shm) when this is set
// before the addon first opens a database: anyone's, so on import, not on first use.
process.env.SQLITE_USE_URI = '1';

let Database: typeof BetterSqlite3 | undefined;

/** `new Database(filename, options)` of better-sqlite3. */
export function openDatabase(filename: string, options?: BetterSqlite3.Options): BetterSqlite3.Database {
  Database ??= createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  return new Database(filename, options);
}
