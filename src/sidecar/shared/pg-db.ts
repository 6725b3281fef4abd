import { StoreError } from '../../store/errors.js';
import type { SyncBridge } from '../../store/sync-bridge.js';
import type { RowValue } from '../checksum.js';
import { IndexUnavailableError } from '../errors.js';
import type { IndexDb, IndexStatement, IndexTable } from '../index-db.js';
import type { BatchRequest, IndexStatementRequest } from './pg-driver.js';

/** Writes sent together in one round trip at most (a build writes a row per message). */
const BATCH = 500;

/** `?` parameters as Postgres numbers them (the index's SQL has no `?` anywhere else). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** Rows as posted back from the driver thread: Buffers arrive as Uint8Arrays. */
function asRow(row: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(row))
    if (v instanceof Uint8Array && !Buffer.isBuffer(v)) row[k] = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return row;
}

/**
 * One connection to the shared index's schema (pg-driver.ts, over a SyncBridge), as an IndexDb: the
 * tables of one store (`s<key>_runs`, …), statements in the SQL tables.ts writes, writes sent in batches
 * (with the next read, every BATCH rows, or the commit: an error shows there, and aborts the transaction).
 *
 * `held`: the caller keeps one transaction open around everything (a sync: one transaction, so that a
 * sync killed at any point leaves the previous commit; a search: one REPEATABLE READ snapshot), and the
 * index logic's own begin/commit are steps inside it.
 */
export class PgIndexDb implements IndexDb {
  private queue: IndexStatementRequest[] = [];
  private depth = 0;
  private outer = false;

  /** `schema.s<key>_`, the store's tables (validated names): set before IndexTables prepares its statements. */
  prefix = '';

  constructor(private readonly bridge: SyncBridge) {}

  table(name: IndexTable): string {
    return `${this.prefix}${name}`;
  }

  replaceSql(name: IndexTable, columns: readonly string[], key: string): string {
    const set = columns.filter((c) => c !== key).map((c) => `${c} = excluded.${c}`);
    return `INSERT INTO ${this.table(name)} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) ON CONFLICT (${key}) DO UPDATE SET ${set.join(', ')}`;
  }

  prepare(sql: string): IndexStatement {
    const text = numbered(sql);
    const db = this;
    return {
      run(...args: RowValue[]): void {
        db.queue.push({ text, values: args });
        if (db.queue.length >= BATCH) db.send();
      },
      get(...args: RowValue[]): unknown {
        return db.query(text, args)[0];
      },
      all(...args: RowValue[]): unknown[] {
        return db.query(text, args);
      },
      *iterate(...args: RowValue[]): IterableIterator<unknown> {
        yield* db.query(text, args);
      },
    };
  }

  /** Runs `text` after every queued write, and returns its rows. */
  query(text: string, values: readonly unknown[] = []): Record<string, unknown>[] {
    this.queue.push({ text, values });
    return this.send().map(asRow);
  }

  /** Sends the queued statements; the rows of the last. */
  private send(): Record<string, unknown>[] {
    if (this.queue.length === 0) return [];
    const request: BatchRequest = { op: 'batch', items: this.queue };
    this.queue = [];
    try {
      return this.bridge.call<Record<string, unknown>[]>(request);
    } catch (e) {
      // the bridge names the index (its masked URL): its failures are the index's, never the store's
      throw e instanceof StoreError ? new IndexUnavailableError(`index ${e.message}`) : e;
    }
  }

  /** Opens the transaction the index logic's begin/commit run inside (see the class comment). */
  hold(begin: string): void {
    this.query(begin);
    this.outer = true;
  }

  /** Ends the held transaction: COMMIT, or ROLLBACK (queued writes dropped). */
  release(commit: boolean): void {
    if (!this.outer) return;
    this.outer = false;
    this.depth = 0;
    if (commit) {
      this.query('COMMIT');
      return;
    }
    this.queue = [];
    try {
      this.query('ROLLBACK');
    } catch {
      // the connection is gone: the server rolled back already
    }
  }

  begin(): void {
    if (!this.outer) this.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    this.depth++;
  }

  beginWrite(): void {
    if (!this.outer) throw new IndexUnavailableError('the shared index is written only by convsearch index sync');
    this.depth++;
  }

  commit(): void {
    this.depth = Math.max(0, this.depth - 1);
    if (!this.outer) this.query('COMMIT');
    else this.send();
  }

  rollback(): void {
    this.depth = Math.max(0, this.depth - 1);
    // held: the caller rolls the whole transaction back as the error passes
    if (!this.outer) this.query('ROLLBACK');
  }

  get inTransaction(): boolean {
    return this.depth > 0;
  }
}
