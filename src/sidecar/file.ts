import { closeSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { INDEX_DDL, INDEX_FORMAT } from './schema.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3') as typeof BetterSqlite3;

/** The index cannot be used (unwritable location, repeated corruption): search falls back to replaying. */
export class IndexUnavailableError extends Error {}

/** The index file reads fine as SQLite but holds data convsearch cannot decode: discard it and rebuild. */
export class IndexDamagedError extends Error {}

function isCorruption(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT_INDEX' || code === 'SQLITE_IOERR_SHORT_READ';
}

function removeIndexFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
}

function createEmpty(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    // the index holds store text: owner-only from its first byte (SQLite gives -wal/-shm the same mode)
    closeSync(openSync(path, 'wx', 0o600));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

function wipe(db: BetterSqlite3.Database): void {
  db.exec('DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS runs; DROP TABLE IF EXISTS messages; DROP TABLE IF EXISTS postings; DROP TABLE IF EXISTS corpus_cache;');
}

/** The common case: an index of this format for this store already exists; no write, no DDL. */
function isReady(db: BetterSqlite3.Database, storeRealPath: string): boolean {
  try {
    const rows = db.prepare("SELECT key, value FROM meta WHERE key IN ('format', 'store')").all() as Array<{ key: string; value: string }>;
    const meta = new Map(rows.map((r) => [r.key, r.value]));
    return meta.get('format') === INDEX_FORMAT && meta.get('store') === storeRealPath;
  } catch (e) {
    if (isCorruption(e)) throw e;
    return false; // no meta table yet
  }
}

function prepare(path: string, storeRealPath: string): BetterSqlite3.Database {
  createEmpty(path);
  const db = new Database(path);
  try {
    db.pragma('busy_timeout = 60000');
    if (isReady(db, storeRealPath)) return db;
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec(INDEX_DDL);
      const meta = new Map(
        (db.prepare('SELECT key, value FROM meta').all() as Array<{ key: string; value: string }>).map((r) => [r.key, r.value]),
      );
      if (meta.get('format') !== INDEX_FORMAT || meta.get('store') !== storeRealPath) {
        // another format, another store, or a fresh file: start from nothing
        wipe(db);
        db.exec(INDEX_DDL);
        const put = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
        put.run('format', INDEX_FORMAT);
        put.run('store', storeRealPath);
        put.run('next_segment', '1');
      }
      db.exec('COMMIT');
    } catch (e) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw e;
    }
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

/**
 * Opens (creating if needed) the index file for one store. A corrupt or foreign file is discarded and
 * rebuilt: the index is derived data and is never trusted over the store.
 */
export function openIndexDatabase(path: string, storeRealPath: string): BetterSqlite3.Database {
  try {
    return prepare(path, storeRealPath);
  } catch (e) {
    if (!isCorruption(e)) throw new IndexUnavailableError(`index ${path}: ${(e as Error).message}`);
  }
  removeIndexFiles(path);
  try {
    return prepare(path, storeRealPath);
  } catch (e) {
    throw new IndexUnavailableError(`index ${path}: ${(e as Error).message}`);
  }
}

/** Whether the index file passes SQLite's own structural check (only asked after a corruption error). */
export function indexIsSound(path: string): boolean {
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      return db.pragma('quick_check(1)', { simple: true }) === 'ok';
    } finally {
      db.close();
    }
  } catch {
    return false;
  }
}

export { isCorruption, removeIndexFiles };
