import type { ProgressFn } from '../../history/source.js';
import type { ParallelOptions } from '../../parallel/threads.js';
import { StoreError } from '../../store/errors.js';
import type { StoreReader } from '../../store/reader.js';
import { ForeignError, IndexDamagedError, IndexRefusedError, IndexUnavailableError } from '../errors.js';
import { IndexedCorpusSource } from '../indexed-source.js';
import { readIndexMeta } from '../meta.js';
import { INDEX_FORMAT } from '../schema.js';
import { IndexSync, type SyncReport } from '../sync.js';
import { IndexTables } from '../tables.js';
import { connect, type ReadAhead, ReadSession } from './read-session.js';
import { IndexStandIn } from './stand-in.js';
import { behindLine, type IndexStanding, standing, uncheckedLine, uncheckedStanding } from './standing.js';
import type { PgIndexDb } from './pg-db.js';
import { checkSchema, dropStoreTables, findStore, missingIndex, REGISTRY_DDL, REGISTRY_EXTRAS_DDL, RETIRED, storeDdl } from './schema.js';
import { refuseEvidenceRole, sharedIndexTarget } from './target.js';

/**
 * The shared index: one Postgres schema holding the index of several stores. `convsearch index sync`
 * is its one writer (syncShared: one transaction per store under an advisory lock); searches and
 * listings only read it (withSharedIndex: one REPEATABLE READ READ ONLY transaction), and never write.
 */

export interface SharedReadOptions extends ReadAhead {
  /** `--verify`: a check this index cannot make (readers never read the store to compare), so refused. */
  readonly verify?: boolean;
  readonly onFallback?: (reason: string) => void;
  readonly onWarning?: (message: string) => void;
  readonly env?: NodeJS.ProcessEnv;
  /** `--fresh`: a store the index is behind is replayed instead (one notice), as `--no-index` would. */
  readonly fresh?: boolean;
  /** Told how the index stands against the store it answers for, or null when it did not answer after all (JSON `index`). */
  readonly onIndexStanding?: (store: string, standing: IndexStanding | null) => void;
}

/** Why the index cannot serve this search (the reader cannot repair it: it says who can), or null for errors that are not the index's. */
function unusable(e: unknown, label: string, storeLabel: string): string | null {
  if (e instanceof IndexDamagedError)
    return `index ${label}: the part of ${storeLabel} is damaged (${e.message}); run convsearch index sync --rebuild`;
  if (e instanceof IndexUnavailableError) return e.message.startsWith('index ') ? e.message : `index ${label}: ${e.message}`;
  return null;
}

/**
 * Runs `fn` over the store's part of the shared index, read in one REPEATABLE READ READ ONLY
 * transaction (a sync committing meanwhile is not seen): the corpus cache, the query terms' postings
 * and the shown messages (and, only when the store's stamp changed since the sync, the run rows, to count
 * how far behind it is: standing.ts), nothing else. With `fresh`, a store it is behind is replayed
 * instead. An index that cannot serve the store (not synced yet, of
 * another format, damaged, unreachable) falls back to `fallback` with one notice; one that endangers the
 * evidence is refused (IndexRefusedError).
 */
export function withSharedIndex<T>(
  store: StoreReader,
  value: string,
  opts: SharedReadOptions,
  fn: (source: IndexedCorpusSource) => T,
  fallback: () => T,
): T {
  const target = sharedIndexTarget(value, opts.env);
  if (opts.verify === true)
    throw new IndexRefusedError(
      `--verify compares a local index with the store; a shared index (${target.label}) is brought up to date by convsearch index sync`,
    );
  refuseEvidenceRole(target, store);
  let session: ReadSession | null = ReadSession.acquire(target, opts, store);
  const done = (): void => {
    session?.release();
    session = null;
  };
  let source: IndexedCorpusSource | null;
  let told: string | null = null;
  try {
    try {
      const { entry, tables } = session.part(store);
      const raw = tables.readMeta();
      if (raw.get('format') !== INDEX_FORMAT)
        throw missingIndex(target.label, `holds ${store.label} in another format (${raw.get('format')})`);
      if (raw.get('store') !== store.identity) throw new IndexDamagedError(`the tables of ${store.label} name another store`);
      const meta = readIndexMeta(raw);
      if (meta.content === '') throw missingIndex(target.label, `has not finished a sync of ${store.label} yet`);
      // a store that could not be read: the index answers, with its age
      const unread = store instanceof IndexStandIn ? store.unreachable.message : null;
      const now =
        unread !== null
          ? uncheckedStanding(target.label, store.label, entry.syncedAt)
          : standing(store, target.label, meta.storeStamp, entry.syncedAt, () => tables.allMarks(meta.runCount));
      const replay = now.stale === true && opts.fresh === true;
      // a store that could not be read is told of once the index has answered (a command it cannot answer says only why)
      if (unread !== null) told = uncheckedLine(now, unread);
      else if (now.stale === true) opts.onWarning?.(behindLine(now, replay));
      if (!replay) opts.onIndexStanding?.(store.label, now);
      source = replay ? null : new IndexedCorpusSource(tables, meta);
    } catch (e) {
      if (e instanceof IndexRefusedError || e instanceof StoreError || store.storeError(e) !== null) throw e;
      const why = unusable(e, target.label, store.label);
      if (why === null) throw e;
      opts.onFallback?.(why);
      done();
      return fallback();
    }
    if (source === null) {
      // `--fresh`, and the index is behind: the store answers, as with --no-index
      done();
      return fallback();
    }
    try {
      const answer = fn(source);
      if (told !== null) opts.onWarning?.(told);
      return answer;
    } catch (e) {
      if (e instanceof ForeignError || e instanceof StoreError || store.storeError(e) !== null || !store.unchanged()) throw e;
      const why = unusable(e, target.label, store.label);
      if (why === null) throw e;
      // nothing is printed before fn returns: the replay answers instead, whole
      opts.onIndexStanding?.(store.label, null);
      opts.onFallback?.(why);
      done();
      return fallback();
    }
  } finally {
    done();
  }
}

export interface SharedSyncOptions {
  readonly onProgress?: ProgressFn;
  readonly onWarning?: (message: string) => void;
  readonly env?: NodeJS.ProcessEnv;
  readonly parallel?: ParallelOptions;
  /** Lay the store's part out anew and build it from the store (what a reader's damage notice asks for). */
  readonly rebuild?: boolean;
  /** Told before the store's part is written in bulk (see IndexSync's onBulkWrite). */
  readonly onBulkWrite?: () => void;
}

/**
 * The store's row in the registry, made on its first sync, in a short transaction of its own under the
 * schema's advisory lock (what every sync of the schema shares: the schema, the registry, the key
 * sequence); parts retired by a rebuild long enough ago that no search still reads them are dropped
 * there too. A row whose first sync has not committed (`synced_at` NULL) is not read by searches.
 */
function register(db: PgIndexDb, schema: string, label: string, store: StoreReader): void {
  db.hold('BEGIN');
  try {
    db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`convsearch-index:${schema}`]);
    const [exists] = db.query('SELECT to_regnamespace($1) IS NOT NULL AS ok', [schema]) as Array<{ ok: boolean }>;
    if (!exists!.ok) db.query(`CREATE SCHEMA ${schema}`);
    if (!checkSchema(db, schema, label)) db.query(REGISTRY_DDL(schema));
    for (const statement of REGISTRY_EXTRAS_DDL(schema)) db.query(statement);
    const old = db.query(
      `DELETE FROM ${schema}.stores WHERE starts_with(identity, $1) AND synced_at < now() - $2::interval RETURNING store_key AS key`,
      [RETIRED, RETIRED_FOR],
    ) as Array<{ key: number }>;
    for (const { key } of old) dropStoreTables(db, schema, key);
    if (findStore(db, schema, store.identity) === null)
      db.query(`INSERT INTO ${schema}.stores (store_key, identity, label) VALUES (nextval('${schema}.store_keys'), $1, $2)`, [
        store.identity,
        store.label,
      ]);
    db.release(true);
  } catch (e) {
    db.release(false);
    throw e;
  }
}

/** How long a part replaced by a rebuild is kept for the searches that began before it (REPEATABLE READ) and still read it. */
const RETIRED_FOR = '10 minutes';

/**
 * Brings the store's part of the shared index up to date (sync.ts: only what changed is read and
 * written) in one transaction that first takes the store's advisory lock: a second sync of the same
 * store waits for the first to commit, then finds the index current; syncs of other stores go on
 * meanwhile. Killed at any point, the transaction is rolled back by the server and readers keep the
 * previous commit. A part laid out anew (`rebuild`, damage: one warning, another format) is built
 * beside the one readers read, under a new key, and replaces it in the registry at the commit: readers
 * never wait for a rebuild nor see half of one.
 */
export function syncShared(store: StoreReader, value: string, opts: SharedSyncOptions = {}): SyncReport {
  const target = sharedIndexTarget(value, opts.env);
  refuseEvidenceRole(target, store);
  const { schema, label } = target;
  const { db, end } = connect(target);
  try {
    register(db, schema, label, store);
    for (let attempt = 1; ; attempt++) {
      db.hold('BEGIN');
      try {
        db.query('SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))', [`convsearch-index:${schema}`, store.identity]);
        // read after the lock: a sync that held it may have built or replaced the part
        const entry = findStore(db, schema, store.identity);
        if (entry === null) throw new IndexUnavailableError(`index ${label}: the registry row of ${store.label} is gone`);
        let key = entry.key;
        let fresh = entry.syncedAt === null || attempt > 1 || opts.rebuild === true;
        if (!fresh) {
          db.prefix = `${schema}.s${key}_`;
          const meta = new IndexTables(db).readMeta();
          fresh = meta.get('format') !== INDEX_FORMAT || meta.get('store') !== store.identity;
        }
        if (fresh) {
          if (entry.syncedAt === null)
            dropStoreTables(db, schema, key); // a first sync: no reader reads it yet
          else {
            const [next] = db.query(`SELECT nextval('${schema}.store_keys') AS key`) as Array<{ key: number }>;
            key = next!.key;
          }
          for (const statement of storeDdl(schema, key).split(';')) if (statement.trim() !== '') db.query(statement);
        }
        db.prefix = `${schema}.s${key}_`;
        const tables = new IndexTables(db);
        if (fresh) tables.layOut(store.identity);
        const report = new IndexSync(tables, store, opts.parallel ?? {}, opts.onBulkWrite).sync(opts.onProgress);
        db.query(`UPDATE ${schema}.stores SET store_key = $2, label = $3, synced_at = now() WHERE identity = $1`, [
          store.identity,
          key,
          store.label,
        ]);
        if (key !== entry.key)
          db.query(`INSERT INTO ${schema}.stores (store_key, identity, label, synced_at) VALUES ($1, $2, '', now())`, [
            entry.key,
            `${RETIRED}${entry.key}`,
          ]);
        db.release(true);
        return report;
      } catch (e) {
        db.release(false);
        if (e instanceof IndexDamagedError && attempt === 1) {
          opts.onWarning?.(`index ${label}: the tables of ${store.label} were damaged (${e.message}); rebuilt them`);
          continue;
        }
        throw e;
      }
    }
  } finally {
    end();
  }
}
