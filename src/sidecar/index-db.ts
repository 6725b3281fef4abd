import type BetterSqlite3 from 'better-sqlite3';
import type { RowValue } from './checksum.js';
import { IndexBusyError, IndexDamagedError, IndexSpaceError, IndexUnavailableError } from './errors.js';
import { describeFsError } from './placement.js';

/**
 * Where the index's tables live, as the index logic (tables.ts) sees it: prepared statements with `?`
 * parameters, transactions, blobs as Buffers and integers as numbers. Two homes: a local SQLite file
 * (below) and a schema on a Postgres server shared by several stores (shared/pg-db.ts). The SQL is
 * written once, in the dialect both accept; what differs (a table's name, replacing a row) is asked
 * of the home.
 */

/** The index connection's SQLite errors, as index errors. */
export function indexError(e: unknown): unknown {
  if (e instanceof IndexDamagedError || e instanceof IndexUnavailableError) return e;
  const code = (e as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return e;
  const message = (e as Error).message.replace(/\s*[\r\n]+\s*/g, ' ');
  if (code === 'SQLITE_FULL') return new IndexSpaceError(`no space left on the device (${code})`);
  if (/^SQLITE_(IOERR|READONLY|CANTOPEN|PERM|BUSY|LOCKED|NOMEM|AUTH)/.test(code)) {
    const cause = describeFsError(e);
    const text = cause === message ? `${message}` : `${cause}: ${message}`;
    return /^SQLITE_(BUSY|LOCKED)/.test(code) ? new IndexBusyError(text) : new IndexUnavailableError(text);
  }
  // corruption, a schema that is not ours, a broken constraint: the file is not what we wrote
  return new IndexDamagedError(`${message} (${code})`);
}

/** Runs `fn`, turning the index connection's errors into index errors. */
export function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw indexError(e);
  }
}

/** The index's tables (schema.ts): the same set in every home. */
export const INDEX_TABLE_NAMES = ['meta', 'runs', 'messages', 'field_pieces', 'corpus_cache', 'postings', 'terms', 'pages'] as const;
export type IndexTable = (typeof INDEX_TABLE_NAMES)[number];

export interface IndexStatement {
  run(...args: RowValue[]): void;
  get(...args: RowValue[]): unknown;
  all(...args: RowValue[]): unknown[];
  /** Rows one by one; nothing else may be run on the index until it ends. */
  iterate(...args: RowValue[]): IterableIterator<unknown>;
}

export interface IndexDb {
  /** How an index table is named in SQL here. */
  table(name: IndexTable): string;
  /** The statement that inserts a row or replaces the one with the same `key`. */
  replaceSql(name: IndexTable, columns: readonly string[], key: string): string;
  /** The statement that inserts several new rows at once (`values`: their parameter lists). */
  insertRowsSql(name: IndexTable, columns: string, values: string): string;
  prepare(sql: string): IndexStatement;
  /** A read transaction: every read until commit() sees one commit of the index. */
  begin(): void;
  /** The write lock: one writer at a time; readers keep reading the last commit. */
  beginWrite(): void;
  /** The write lock if no one holds it now (false: another writer does; nothing is waited for). */
  tryBeginWrite(): boolean;
  commit(): void;
  rollback(): void;
  readonly inTransaction: boolean;
  /**
   * Told of reads about to be made (each function makes one, through this home's statements): a home on
   * a server sends them together with the next read it makes, in one round trip. Absent (a local file):
   * each is read when asked.
   */
  readSoon?(reads: ReadonlyArray<() => void>): void;
}

/** A statement prepared on first use (a warm search needs few of them), whose errors are index errors. */
class SqliteStatement implements IndexStatement {
  private s: BetterSqlite3.Statement | null = null;
  constructor(private readonly make: () => BetterSqlite3.Statement) {}
  private get stmt(): BetterSqlite3.Statement {
    return (this.s ??= guard(this.make));
  }
  run(...args: RowValue[]): void {
    const s = this.stmt;
    guard(() => s.run(...args));
  }
  get(...args: RowValue[]): unknown {
    const s = this.stmt;
    return guard(() => s.get(...args));
  }
  all(...args: RowValue[]): unknown[] {
    const s = this.stmt;
    return guard(() => s.all(...args));
  }
  *iterate(...args: RowValue[]): IterableIterator<unknown> {
    const s = this.stmt;
    const it = guard(() => s.iterate(...args));
    try {
      for (;;) {
        const r = guard(() => it.next());
        if (r.done) return;
        yield r.value;
      }
    } finally {
      // a caller that stops early (a break, a throw) ends the statement: the connection is free again
      it.return?.();
    }
  }
}

/** The index in a local SQLite file (file.ts opens it): the default home. */
export class SqliteIndexDb implements IndexDb {
  constructor(readonly db: BetterSqlite3.Database) {}

  table(name: IndexTable): string {
    return name;
  }

  replaceSql(name: IndexTable, columns: readonly string[]): string {
    return `INSERT OR REPLACE INTO ${name} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;
  }

  /**
   * OR FAIL: under the default (ABORT) SQLite keeps a statement journal to take back a statement's first
   * rows if a later one breaks a constraint, and once one statement's journal passes 64 KiB, a temp
   * file takes it for the rest of the transaction (a 613 MB store's build wrote 105 MB to one). Any
   * error here rolls the whole transaction back, so the rows FAIL keeps are never committed.
   */
  insertRowsSql(name: IndexTable, columns: string, values: string): string {
    return `INSERT OR FAIL INTO ${name} (${columns}) VALUES ${values}`;
  }

  prepare(sql: string): IndexStatement {
    return new SqliteStatement(() => this.db.prepare(sql));
  }

  begin(): void {
    guard(() => this.db.exec('BEGIN'));
  }

  beginWrite(): void {
    guard(() => this.db.exec('BEGIN IMMEDIATE'));
  }

  tryBeginWrite(): boolean {
    // (a pragma's argument cannot be bound: the number SQLite gave, checked to be one, is put back)
    const timeout = Number(this.db.pragma('busy_timeout', { simple: true }));
    if (!Number.isSafeInteger(timeout)) return false;
    this.db.pragma('busy_timeout = 0');
    try {
      this.db.exec('BEGIN IMMEDIATE');
      return true;
    } catch (e) {
      const error = indexError(e);
      if (error instanceof IndexBusyError) return false;
      throw error;
    } finally {
      this.db.pragma(`busy_timeout = ${timeout}`);
    }
  }

  commit(): void {
    guard(() => this.db.exec('COMMIT'));
  }

  rollback(): void {
    guard(() => this.db.exec('ROLLBACK'));
  }

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }
}
