import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { attributed } from './attributed.js';
import { StoreError } from './errors.js';
import { FileStoreReader } from './file/reader.js';
import { PostgresStoreReader } from './postgres/reader.js';
import type { OpenReaderOptions, StoreReader } from './reader.js';
import { RedisStoreReader } from './redis/reader.js';
import { openSqliteReader } from './sqlite/reader.js';
import { serverKind, shownTarget } from './server-url.js';

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
  if (/^mongodb(\+srv)?:/i.test(target)) throw new StoreError(`${shownTarget(target)}: MongoStepStore is not supported yet`);
  // another scheme's URL is no file name: refused before it could be echoed as one (it may hold a password)
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target))
    throw new StoreError(
      `${shownTarget(target)}: not a store convsearch reads (a SQLite file, a FileStepStore directory, a postgresql:// or redis:// URL)`,
    );
  try {
    if (statSync(target).isDirectory()) return 'file';
  } catch {
    // a missing path is reported by the opener
  }
  return 'sqlite';
}

/**
 * Opens the store `target` names read-only: a SQLite file, a FileStepStore directory, a Postgres
 * database or a Redis key space. A directory holding no run (no `<run>/run.json`, no `media/`) is not
 * taken for an empty FileStepStore: a mistyped path must fail, so the SQLite opener says what it is.
 * The reader's own failures name it (attributed.ts).
 */
export function openStoreReader(target: string, options: OpenReaderOptions = {}): StoreReader {
  return attributed(openUnattributed(target, options));
}

function openUnattributed(target: string, options: OpenReaderOptions): StoreReader {
  switch (storeKind(target)) {
    case 'postgres':
      return new PostgresStoreReader(target, options.env);
    case 'redis':
      return new RedisStoreReader(target);
    case 'file':
      // a directory of .db files is several stores (api/stores.ts expands it before opening): the SQLite opener refuses it
      if (!holdsRuns(target)) return openSqliteReader(target, options);
      return new FileStoreReader(target);
    case 'sqlite':
      return openSqliteReader(target, options);
  }
}

/** A FileStepStore root: some `<name>/run.json`, or the `media/` directory. */
export function holdsRuns(dir: string): boolean {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return true; // the reader says why it cannot be listed
  }
  return names.some((n) => {
    try {
      return n === 'media' ? statSync(join(dir, n)).isDirectory() : statSync(join(dir, n, 'run.json')).isFile();
    } catch {
      return false;
    }
  });
}
