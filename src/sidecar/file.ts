import { rmSync, statSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import { openDatabase } from '../store/sqlite/native.js';
import { IndexDamagedError, IndexRefusedError } from './errors.js';
import { INDEX_DDL, INDEX_FORMAT } from './schema.js';
import { INDEX_APPLICATION_ID } from './signature.js';
import { guard, SqliteIndexDb } from './index-db.js';
import { IndexTables } from './tables.js';

export function removeIndexFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
}

/** The schema objects an index of this format has, as SQLite lists them. */
let expectedSchema: string | null = null;
function schemaOf(db: BetterSqlite3.Database): string {
  const rows = db
    .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
    .raw()
    .all();
  return JSON.stringify(rows);
}
function expected(): string {
  if (expectedSchema === null) {
    const db = openDatabase(':memory:');
    try {
      db.exec(INDEX_DDL);
      expectedSchema = schemaOf(db);
    } finally {
      db.close();
    }
  }
  return expectedSchema;
}

/** Every table any index format had: what a file must hold some of to be taken for an index. */
const INDEX_TABLES = ['meta', 'runs', 'messages', 'field_pieces', 'postings', 'corpus_cache', 'terms', 'pages'];
const DROP_INDEX_TABLES =
  'DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS runs; DROP TABLE IF EXISTS messages; DROP TABLE IF EXISTS field_pieces; DROP TABLE IF EXISTS postings; DROP TABLE IF EXISTS corpus_cache; DROP TABLE IF EXISTS terms; DROP TABLE IF EXISTS pages;';

/** Drops an index of another format or store and lays out an empty one. */
function initialize(db: BetterSqlite3.Database, storeRealPath: string): void {
  db.exec(DROP_INDEX_TABLES);
  db.exec(INDEX_DDL);
  new IndexTables(new SqliteIndexDb(db)).layOut(storeRealPath);
}

export interface OpenedIndex {
  readonly db: BetterSqlite3.Database;
  readonly tables: IndexTables;
  /** The file was laid out anew (it was empty, or of another format or store). */
  readonly fresh: boolean;
}

/**
 * Opens the index file (which placement.ts created or checked) for one store. A file of another
 * format or for another store is laid out anew; one whose schema or meta is not what this format
 * writes is damaged (IndexDamagedError): the caller removes it and builds again.
 */
export function openIndexDatabase(path: string, storeRealPath: string): OpenedIndex {
  const db = guard(() => openDatabase(path, { fileMustExist: true, timeout: 60_000 }));
  try {
    return guard(() => {
      db.exec('PRAGMA cache_size = -8000');
      const schema = schemaOf(db);
      if (schema === expected()) {
        const tables = new IndexTables(new SqliteIndexDb(db));
        const meta = tables.readMeta();
        if (meta.get('format') === INDEX_FORMAT && meta.get('store') === storeRealPath) {
          // an index written before the signature: signed now that it is known for ours
          if (db.pragma('application_id', { simple: true }) !== INDEX_APPLICATION_ID) sign(db);
          return { db, tables, fresh: false };
        }
        if (meta.get('format') === INDEX_FORMAT && meta.get('store') === undefined)
          throw new IndexDamagedError('the index meta lacks its store');
      } else if (schema !== '[]' && formatOf(db) === INDEX_FORMAT) {
        throw new IndexDamagedError('the index schema is not the one this version writes');
      } else if (schema !== '[]' && !hasIndexTables(db)) {
        // somebody's database: never dropped to make room for an index
        throw new IndexRefusedError(`refusing --index ${path}: it is an SQLite database that is not a convsearch index`);
      }
      // signed before the switch to WAL: a new file then carries the signature in its own header at
      // once, not only in a log that another process's check (signature.ts) does not read
      if (db.pragma('application_id', { simple: true }) !== INDEX_APPLICATION_ID) db.pragma(`application_id = ${INDEX_APPLICATION_ID}`);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.exec('BEGIN IMMEDIATE');
      try {
        // another process may have laid it out while we waited for the lock
        const again = schemaOf(db) === expected() ? new IndexTables(new SqliteIndexDb(db)).readMeta() : null;
        if (!again || again.get('format') !== INDEX_FORMAT || again.get('store') !== storeRealPath) initialize(db, storeRealPath);
        db.exec('COMMIT');
      } catch (e) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw e;
      }
      return { db, tables: new IndexTables(new SqliteIndexDb(db)), fresh: true };
    });
  } catch (e) {
    closeIndexDatabase(db, path);
    throw e;
  }
}

/** Signs an index of ours written before signatures; where it cannot be written, it stays recognisable by its tables. */
function sign(db: BetterSqlite3.Database): void {
  try {
    db.pragma(`application_id = ${INDEX_APPLICATION_ID}`);
  } catch {
    // read-only or busy: the next search signs it
  }
}

function hasIndexTables(db: BetterSqlite3.Database): boolean {
  const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
  return names.some((n) => INDEX_TABLES.includes(n));
}

/** The format an older or damaged file says it has, if it says. */
function formatOf(db: BetterSqlite3.Database): string | undefined {
  try {
    return db.prepare("SELECT value FROM meta WHERE key = 'format'").pluck().get() as string | undefined;
  } catch {
    return undefined;
  }
}

/**
 * Closes the index connection and leaves no `-wal` behind: a failed write (a full disk) can keep the
 * log from being checkpointed; then the whole index goes (it is derived data, rebuilt on demand).
 */
export function closeIndexDatabase(db: BetterSqlite3.Database, path: string): void {
  try {
    if (db.inTransaction) db.exec('ROLLBACK');
  } catch {
    // closing rolls back too
  }
  try {
    db.close();
  } catch {
    // closed already
  }
  if (!hasLog(path)) return;
  try {
    const again = openDatabase(path, { fileMustExist: true });
    try {
      again.pragma('busy_timeout = 2000');
      // busy: another process is using the index, and its -wal is its own
      again.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      again.close();
    }
  } catch {
    // cannot checkpoint it (no space, no permission): the index goes
    removeIndexFiles(path);
  }
}

function hasLog(path: string): boolean {
  try {
    return statSync(`${path}-wal`).size > 0;
  } catch {
    return false;
  }
}
