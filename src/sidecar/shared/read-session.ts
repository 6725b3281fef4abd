import { StoreError } from '../../store/errors.js';
import type { StoreReader } from '../../store/reader.js';
import { SyncBridge } from '../../store/sync-bridge.js';
import { readIndexMeta } from '../meta.js';
import { INDEX_FORMAT } from '../schema.js';
import { bucketOf, IndexTables, tierBucket, tierPart } from '../tables.js';
import type { IndexStatementRequest } from './pg-driver.js';
import { PgIndexDb } from './pg-db.js';
import { findStores, missingIndex, schemaHolds, schemaTablesRead, type StoreEntry } from './schema.js';
import { INDEX_DRIVER } from './prestart.js';
import { isSharedIndex, type SharedIndexTarget, sharedIndexTarget } from './target.js';

/**
 * The readers' side of the shared index: one connection and one REPEATABLE READ READ ONLY transaction
 * for every store a command reads through it (a sync committing meanwhile is seen by none of them), and
 * what a search over several stores reads of each (registry row, meta, corpus cache, the query terms'
 * directory buckets and postings) read ahead in a few statements over all of them, not store by store.
 *
 * A session lives while some store reads through it, or, opened within holdSharedReads (a command:
 * api/session.ts withSession; listings, which read their stores one after the other), until that hold
 * ends: the stores of one command share it; the next command opens a new one, and sees the syncs
 * committed since.
 */

/** A session on the index's server, closed (uncommitted work rolled back) by `end`. */
export function connect(target: SharedIndexTarget): { db: PgIndexDb; end: () => void } {
  const bridge = new SyncBridge(INDEX_DRIVER, target.config, target.label);
  return { db: new PgIndexDb(bridge), end: () => bridge.close() };
}

/** What the stores' reads need to know ahead: the other stores of the command, and the query's terms. */
export interface ReadAhead {
  readonly peers?: readonly StoreReader[];
  readonly terms?: readonly string[];
}

export class ReadSession {
  private users = 0;
  private readonly entries = new Map<string, StoreEntry | null>();
  private readonly parts = new Map<number, IndexTables>();
  private holdsRegistry = false;
  /** Why the session cannot read (the server unreachable, the schema not there): every store is told so. */
  private broken: unknown = null;

  private constructor(
    private readonly target: SharedIndexTarget,
    private readonly db: PgIndexDb,
    private readonly end: () => void,
    private readonly onEnd: () => void,
  ) {}

  /** The session of `target` in this process, opened (transaction begun) when there is none. */
  static acquire(target: SharedIndexTarget, ahead: ReadAhead, store: StoreReader | null): ReadSession {
    const s = ReadSession.opened(target);
    s.begun();
    s.users++;
    if (s.broken === null && store !== null) s.readAhead([store, ...(ahead.peers ?? [])], ahead.terms ?? []);
    return s;
  }

  /** The session of `target` in this process, or a new one whose transaction is being begun (begun() waits for it). */
  private static opened(target: SharedIndexTarget): ReadSession {
    const key = `${target.label}\0${target.schema}\0${JSON.stringify(target.config)}`;
    let s = open.get(key);
    if (s?.db.failed && s.broken === null) {
      s.close();
      s = undefined;
    }
    if (s === undefined) {
      const { db, end } = connect(target);
      s = new ReadSession(target, db, end, () => open.delete(key));
      open.set(key, s);
      s.begin();
    }
    return s;
  }

  /**
   * Opens the session of `value` now, its transaction begun without waiting (the driver thread connects
   * while the stores are opened), for the command that reads it next: within holdSharedReads only,
   * which ends it. A URL that is no shared index's, or refused, is left to the reads to report.
   */
  static start(value: string, env?: NodeJS.ProcessEnv): void {
    if (holds === 0 || !isSharedIndex(value)) return;
    try {
      ReadSession.opened(sharedIndexTarget(value, env));
    } catch {
      // the command's own reads say what is wrong
    }
  }

  /** Runs `fn` over the session of `target` (see acquire), released after. */
  static use<T>(target: SharedIndexTarget, fn: (session: ReadSession) => T): T {
    const s = ReadSession.acquire(target, {}, null);
    try {
      return fn(s);
    } finally {
      s.release();
    }
  }

  /**
   * The finished part of a store the index recorded under one of `names` (its identity or its label as
   * the sync saw them), when the store itself cannot be opened (stand-in.ts); null when none.
   */
  lookUp(names: readonly string[]): { readonly identity: string; readonly tables: IndexTables } | null {
    if (this.broken !== null) throw this.broken;
    if (!this.holdsRegistry) return null;
    const found = findStores(this.db, this.target.schema, names, true);
    const [identity, entry] = [...found].find(([, e]) => e.syncedAt !== null) ?? [];
    if (identity === undefined || entry === undefined) return null;
    this.entries.set(identity, entry);
    return { identity, tables: this.tables(entry.key) };
  }

  /** Done with it: ended now, or when the enclosing holdSharedReads ends (kept for the next store). */
  release(): void {
    if (--this.users > 0) return;
    // a transaction the server aborted is of no more use (a session that never began keeps saying why)
    if (holds === 0 || (this.db.failed && this.broken === null)) this.close();
  }

  close(): void {
    this.onEnd();
    this.end();
  }

  /** The transaction and the catalog read, sent; `begun` takes their answer. */
  private beginning: number | null = null;

  private begin(): void {
    try {
      const read = schemaTablesRead(this.target.schema);
      this.beginning = this.db.queryEachSoon([{ text: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' }, read]);
    } catch (e) {
      this.broken = e;
    }
  }

  private begun(): void {
    if (this.beginning === null) return;
    const ticket = this.beginning;
    this.beginning = null;
    try {
      const [, tables] = this.db.eachLater(ticket);
      this.holdsRegistry = schemaHolds(tables!, this.target.schema, this.target.label);
      this.db.hold(null);
    } catch (e) {
      this.broken = e;
    }
  }

  /** The store's tables in this snapshot; missingIndex when the index does not hold a finished sync of it. */
  part(store: StoreReader): { readonly entry: StoreEntry; readonly tables: IndexTables } {
    if (this.broken !== null) throw this.broken;
    const label = this.target.label;
    if (!this.holdsRegistry) throw missingIndex(label, `has no index in schema ${this.target.schema} yet`);
    if (!this.entries.has(store.identity)) this.register([store.identity]);
    const entry = this.entries.get(store.identity) ?? null;
    if (entry === null) throw missingIndex(label, `does not hold ${store.label} yet`);
    if (entry.syncedAt === null) throw missingIndex(label, `has not finished a sync of ${store.label} yet`);
    return { entry, tables: this.tables(entry.key) };
  }

  private register(identities: readonly string[]): void {
    const found = findStores(this.db, this.target.schema, identities);
    for (const id of identities) this.entries.set(id, found.get(id) ?? null);
  }

  private tables(key: number): IndexTables {
    let t = this.parts.get(key);
    if (t === undefined) {
      this.db.prefix = `${this.target.schema}.s${key}_`;
      this.parts.set(key, (t = new IndexTables(this.db)));
    }
    return t;
  }

  /**
   * Reads ahead what the stores not read yet will read first: their registry rows (one statement), their
   * meta (one), their corpus caches and the terms' directory buckets (one each), then the terms'
   * postings rows (one). A store whose rows cannot be read ahead (damaged, another format) is read as
   * before, when its turn comes, and fails there.
   */
  private readAhead(stores: readonly StoreReader[], terms: readonly string[]): void {
    const fresh = [...new Set(stores.map((s) => s.identity))].filter((id) => !this.entries.has(id));
    if (fresh.length === 0 || !this.holdsRegistry) return;
    try {
      this.register(fresh);
      const parts = fresh
        .map((id) => this.entries.get(id))
        .filter((e): e is StoreEntry => e != null && e.syncedAt !== null)
        .map((e) => this.tables(e.key));
      const capture = (fn: () => void): IndexStatementRequest[] => {
        const r = this.db.capture(fn);
        return r === null ? [] : [r];
      };
      this.db.readAhead([parts.flatMap((t) => capture(() => t.readMeta()))]);
      const current = parts.flatMap((t) => {
        try {
          const raw = t.readMeta();
          const meta = readIndexMeta(raw);
          return raw.get('format') === INDEX_FORMAT && meta.content !== '' ? [{ t, tiers: meta.tierSegments }] : [];
        } catch {
          return [];
        }
      });
      // each term's main bucket, and its part of every tier segment's own directory
      const buckets = (tiers: readonly number[]): number[] => [
        ...new Set(terms.flatMap((term) => [bucketOf(term), ...tiers.map((seg) => tierBucket(seg, tierPart(term)))])),
      ];
      this.db.readAhead([
        current.flatMap(({ t }) => capture(() => t.cache())),
        current.flatMap(({ t, tiers }) => buckets(tiers).flatMap((b) => capture(() => t.bucket(b)))),
      ]);
      const postings: IndexStatementRequest[] = [];
      for (const { t, tiers } of current)
        for (const term of terms) {
          let ids: number[];
          try {
            ids = t.termRows(term, tiers);
          } catch {
            continue;
          }
          for (const id of ids) postings.push(...capture(() => t.posting(id, term)));
        }
      this.db.readAhead([postings]);
    } catch (e) {
      // reading ahead is only a shortcut: each store's own reads say what is wrong
      if (e instanceof StoreError) throw e;
    }
  }
}

const open = new Map<string, ReadSession>();
let holds = 0;

/**
 * Keeps every shared index session opened from now on until the returned function is called (then
 * ended): one snapshot and one connection for all that a command reads (its stores, one after the other).
 */
export function holdSharedReads(): () => void {
  holds++;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    if (--holds === 0) for (const s of [...open.values()]) s.close();
  };
}

/** Runs `fn` within holdSharedReads. */
export function sharedReads<T>(fn: () => T): T {
  const done = holdSharedReads();
  try {
    return fn();
  } finally {
    done();
  }
}
