import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { StoreError } from './errors.js';
import { FileStoreReader } from './file/reader.js';
import { PostgresStoreReader } from './postgres/reader.js';
import type { StoreReader } from './reader.js';
import { RedisStoreReader } from './redis/reader.js';
import { serverKind } from './server-url.js';

/** Which backend a `--db` value names. */
export type StoreKind = 'sqlite' | 'file' | 'postgres' | 'redis';

/**
 * `postgresql://`/`postgres://` and `redis://`/`rediss://` URLs name servers, `mongodb://` is refused
 * (MongoStepStore is not supported yet), a directory is a FileStepStore root, anything else a SQLite
 * file. Only the URL's scheme and the path's type are looked at; opening says the rest.
 */
export function storeKind(target: string): StoreKind {
  const server = serverKind(target);
  if (server) return server;
  if (/^mongodb(\+srv)?:/i.test(target)) throw new StoreError(`${target.replace(/\/\/[^/@]*@/, '//…@')}: MongoStepStore is not supported yet`);
  try {
    if (statSync(target).isDirectory()) return 'file';
  } catch {
    // a missing path is reported by the opener
  }
  return 'sqlite';
}

/**
 * Opens a FileStepStore directory, a Postgres database or a Redis key space read-only. SQLite files
 * are the SQLite adapter's (the caller dispatches `storeKind(...) === 'sqlite'` there).
 */
export function openStoreReader(target: string): StoreReader {
  switch (storeKind(target)) {
    case 'postgres':
      return new PostgresStoreReader(target);
    case 'redis':
      return new RedisStoreReader(target);
    case 'file':
      if (holdsOnlySqliteFiles(target)) throw new StoreError(`${target}: a directory of SQLite files, not a FileStepStore directory`);
      return new FileStoreReader(target);
    case 'sqlite':
      throw new StoreError(`${target}: not a FileStepStore directory or a server URL (SQLite files are opened by the SQLite reader)`);
  }
}

/** A directory with `.db` files and no run directory: several SQLite stores, not one FileStepStore. */
function holdsOnlySqliteFiles(dir: string): boolean {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return false;
  }
  if (!names.some((n) => n.endsWith('.db'))) return false;
  return !names.some((n) => {
    try {
      return statSync(join(dir, n, 'run.json')).isFile();
    } catch {
      return false;
    }
  });
}
