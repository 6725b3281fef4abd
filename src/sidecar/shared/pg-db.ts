import { StoreError } from '../../store/errors.js';
import type { SyncBridge } from '../../store/sync-bridge.js';
import type { RowValue } from '../checksum.js';
import { IndexUnavailableError } from '../errors.js';
import type { IndexDb, IndexStatement, IndexTable } from '../index-db.js';
import type { BatchRequest, IndexStatementRequest } from './pg-driver.js';
import { decodeText, encodeText } from './text-codec.js';

/** Writes sent together in one round trip at most (a build writes a row per message). */
const BATCH = 500;

/** `?` parameters as Postgres numbers them (the index's SQL has no `?` anywhere else). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** Rows as posted back from the driver thread: Buffers arrive as Uint8Arrays; text as written (text-codec.ts). */
function asRow(row: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(row))
    if (v instanceof Uint8Array && !Buffer.isBuffer(v)) row[k] = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    else if (typeof v === 'string') row[k] = decodeText(v);
  return row;
}

const encoded = (item: IndexStatementRequest): IndexStatementRequest =>
  item.values === undefined ? item : { text: item.text, values: item.values.map((v) => (typeof v === 'string' ? encodeText(v) : v)) };

/** A read's key among the rows read ahead: its text and its parameters (numbers and strings only). */
function readKey(text: string, values: readonly RowValue[]): string | null {
  return values.every((v) => typeof v === 'number' || typeof v === 'string') ? `${text}\0${JSON.stringify(values)}` : null;
}

/** Thrown by a statement while reads are captured (capture()): the read it would make. */
class Captured {
  constructor(readonly read: IndexStatementRequest) {}
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
  /** Rows read ahead (readAhead), by readKey: a statement asked for them gets them without a round trip. */
  private readonly ahead = new Map<string, Record<string, unknown>[]>();
  private capturing = false;
  /** A statement failed: the server aborted the transaction, nothing more can be read in it. */
  failed = false;

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

  insertRowsSql(name: IndexTable, columns: string, values: string): string {
    return `INSERT INTO ${this.table(name)} (${columns}) VALUES ${values}`;
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
        return db.read(text, args)[0];
      },
      all(...args: RowValue[]): unknown[] {
        return db.read(text, args);
      },
      *iterate(...args: RowValue[]): IterableIterator<unknown> {
        yield* db.read(text, args);
      },
    };
  }

  /** A read: rows read ahead when there are, else a round trip (with the reads told to come soon, when there are). */
  private read(text: string, values: RowValue[]): Record<string, unknown>[] {
    if (this.capturing) throw new Captured({ text, values });
    const key = readKey(text, values);
    let rows = key === null ? undefined : this.ahead.get(key);
    if (rows === undefined && key !== null && this.soon.length > 0) {
      const soon = this.soon;
      this.soon = [];
      // one UNION ALL per shape (what the statement selects: the same over every store's tables)
      const shapes = new Map<string, Map<string, IndexStatementRequest>>();
      for (const r of [...soon, { text, values }]) {
        const shape = r.text.slice(0, r.text.indexOf(' FROM '));
        if (!shapes.has(shape)) shapes.set(shape, new Map());
        shapes.get(shape)!.set(readKey(r.text, r.values as RowValue[]) ?? '', r);
      }
      this.readAhead([...shapes.values()].map((reads) => [...reads.values()]));
      rows = this.ahead.get(key);
    }
    return rows !== undefined ? rows.map((r) => ({ ...r })) : this.query(text, values);
  }

  /** Reads told to come (readSoon), sent with the next read that is not read ahead. */
  private soon: IndexStatementRequest[] = [];

  readSoon(reads: ReadonlyArray<() => void>): void {
    for (const fn of reads) {
      const r = this.capture(fn);
      if (r !== null) this.soon.push(r);
    }
  }

  /** The read `fn` makes first through this connection's statements (made, not sent), or null when it makes none. */
  capture(fn: () => void): IndexStatementRequest | null {
    this.capturing = true;
    try {
      fn();
      return null;
    } catch (e) {
      if (e instanceof Captured) return e.read;
      throw e;
    } finally {
      this.capturing = false;
    }
  }

  /**
   * Reads ahead, in one round trip, what several captured reads of the same shape would read one by one
   * (the same statement over several stores' tables, or with several parameters): one UNION ALL
   * statement per group, each read's rows kept for the statement that will ask (`read`). In a savepoint:
   * a group that fails (a table of another layout) is only not read ahead.
   */
  readAhead(groups: ReadonlyArray<readonly IndexStatementRequest[]>): void {
    const todo = groups.map((g) => g.filter((r) => readKey(r.text, r.values as RowValue[]) !== null)).filter((g) => g.length > 0);
    if (todo.length === 0) return;
    const statements = todo.map((g) => {
      const values: unknown[] = [];
      const arms = g.map((r, i) => {
        const shifted = r.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + values.length}`);
        values.push(...(r.values ?? []));
        return `SELECT ${i} AS ahead_n, t.* FROM (${shifted}) t`;
      });
      return { text: arms.join(' UNION ALL '), values };
    });
    let each: Record<string, unknown>[][];
    try {
      each = this.queryEach([{ text: 'SAVEPOINT ahead' }, ...statements, { text: 'RELEASE SAVEPOINT ahead' }]).slice(1, -1);
    } catch {
      this.failed = false;
      this.query('ROLLBACK TO SAVEPOINT ahead');
      return;
    }
    for (const [gi, g] of todo.entries()) {
      const byRead = g.map((): Record<string, unknown>[] => []);
      for (const row of each[gi]!) {
        const { ahead_n: n, ...rest } = row;
        byRead[n as number]!.push(rest);
      }
      for (const [i, r] of g.entries()) this.ahead.set(readKey(r.text, r.values as RowValue[])!, byRead[i]!);
    }
  }

  /** Runs the statements (after every queued write) in one round trip, and returns each one's rows. */
  queryEach(items: readonly IndexStatementRequest[]): Record<string, unknown>[][] {
    return this.eachLater(this.queryEachSoon(items));
  }

  /** Runs `text` after every queued write, and returns its rows. */
  query(text: string, values: readonly unknown[] = []): Record<string, unknown>[] {
    this.queue.push({ text, values });
    return this.send().map(asRow);
  }

  /** Sends the queued statements; the rows of the last (`all`: of each). */
  private send(all = false): Record<string, unknown>[] {
    if (this.queue.length === 0) return [];
    return this.take(this.post(all));
  }

  /** Posts the queued statements without waiting for their rows (take them with `take`). */
  private post(all: boolean): number {
    const request: BatchRequest = { op: 'batch', items: this.queue.map(encoded), all };
    this.queue = [];
    return this.guarded(() => this.bridge.post(request));
  }

  private take(ticket: number): Record<string, unknown>[] {
    return this.guarded(() => this.bridge.take<Record<string, unknown>[]>(ticket));
  }

  private guarded<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      this.failed = true;
      // the bridge names the index (its masked URL): its failures are the index's, never the store's
      throw e instanceof StoreError ? new IndexUnavailableError(`index ${e.message}`) : e;
    }
  }

  /**
   * Sends the statements (after every queued write) and returns at once: the driver thread connects and
   * runs them while this one goes on. `eachLater(ticket)` waits for their rows, each one's.
   */
  queryEachSoon(items: readonly IndexStatementRequest[]): number {
    this.queue.push(...items);
    return this.post(true);
  }

  eachLater(ticket: number): Record<string, unknown>[][] {
    return (this.take(ticket) as unknown as Record<string, unknown>[][]).map((rows) => rows.map(asRow));
  }

  /** Opens the transaction the index logic's begin/commit run inside (see the class comment). */
  hold(begin: string | null): void {
    if (begin !== null) this.query(begin);
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

  /** Within `convsearch index sync`'s transaction, which holds the lock; a search never writes. */
  tryBeginWrite(): boolean {
    if (!this.outer) return false;
    this.depth++;
    return true;
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
