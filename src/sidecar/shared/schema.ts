import { IndexRefusedError, IndexUnavailableError } from '../errors.js';
import { INDEX_TABLE_NAMES } from '../index-db.js';
import { INDEX_DDL } from '../schema.js';
import type { PgIndexDb } from './pg-db.js';

/**
 * The shared index's schema: a `stores` table (which store is `s<key>_`, its label, when it was last
 * synced) and, per store, the SQLite index's tables under that prefix, with the same columns and the
 * same INDEX_FORMAT in their meta. Nothing else may live there: a schema holding other tables (the
 * evidence's above all) is refused.
 */

/** The names a shared index's schema holds: the registry, each store's tables and its postings' partitions. */
const OURS = new RegExp(`^(stores|s[0-9]+_(${INDEX_TABLE_NAMES.join('|')})|s[0-9]+_postings_p[0-9]+)$`);

/** Postings partitions per store: hash of the term, so that a query term's rows are in one. */
export const POSTINGS_PARTITIONS = 8;

/**
 * INDEX_DDL in Postgres's terms, for the store tables `<schema>.s<key>_*`; postings are partitioned by
 * a hash of the term (declarative partitioning: the key must be in the primary key, so it is `(id, term)`).
 */
export function storeDdl(schema: string, key: number): string {
  const prefix = `${schema}.s${key}_`;
  const partitions = Array.from(
    { length: POSTINGS_PARTITIONS },
    (_, i) =>
      `CREATE TABLE ${prefix}postings_p${i} PARTITION OF ${prefix}postings FOR VALUES WITH (MODULUS ${POSTINGS_PARTITIONS}, REMAINDER ${i});`,
  );
  return (
    INDEX_DDL.replace(/\bINTEGER\b/g, 'BIGINT')
      .replace(/\bBLOB\b/g, 'BYTEA')
      .replace(
        /CREATE TABLE postings \(id BIGINT PRIMARY KEY, ([^;]*)\);/,
        (_, rest: string) => `CREATE TABLE postings (id BIGINT NOT NULL, ${rest}, PRIMARY KEY (id, term)) PARTITION BY HASH (term);`,
      )
      .replace(/CREATE TABLE (\w+)/g, (_, t: string) => `CREATE TABLE ${prefix}${t}`)
      .replace(
        /CREATE (UNIQUE )?INDEX (\w+) ON (\w+)/g,
        (_, u: string | undefined, i: string, t: string) => `CREATE ${u ?? ''}INDEX s${key}_${i} ON ${prefix}${t}`,
      ) + partitions.join('\n')
  );
}

export function dropStoreTables(db: PgIndexDb, schema: string, key: number): void {
  const tables = INDEX_TABLE_NAMES.map((t) => `${schema}.s${key}_${t}`).join(', ');
  db.query(`DROP TABLE IF EXISTS ${tables}`);
}

/** Whether the schema exists with our registry; refuses a schema that holds anything but ours. */
export function checkSchema(db: PgIndexDb, schema: string, label: string): boolean {
  const rows = db.query(
    `SELECT c.relname AS name FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY c.relname`,
    [schema],
  ) as Array<{ name: string }>;
  const foreign = rows.map((r) => r.name).filter((n) => !OURS.test(n));
  if (foreign.length > 0)
    throw new IndexRefusedError(
      `refusing --index ${label}: schema ${schema} holds tables that are not convsearch's index (${foreign.slice(0, 3).join(', ')}${foreign.length > 3 ? ', …' : ''}); the index needs a schema of its own, never the evidence's`,
    );
  return rows.some((r) => r.name === 'stores');
}

export const REGISTRY_DDL = (schema: string): string =>
  `CREATE TABLE ${schema}.stores (store_key BIGINT PRIMARY KEY, identity TEXT NOT NULL UNIQUE, label TEXT NOT NULL, synced_at TIMESTAMPTZ)`;

export interface StoreEntry {
  readonly key: number;
  /** When the last sync of this store committed (epoch ms), or null before the first. */
  readonly syncedAt: number | null;
}

export function findStore(db: PgIndexDb, schema: string, identity: string): StoreEntry | null {
  const [row] = db.query(`SELECT store_key AS key, extract(epoch FROM synced_at) * 1000 AS at FROM ${schema}.stores WHERE identity = $1`, [
    identity,
  ]) as Array<{ key: number; at: string | number | null }>;
  return row === undefined ? null : { key: row.key, syncedAt: row.at === null ? null : Number(row.at) };
}

/** The registry must hold what the reader looks for: a reader without it has nothing to read. */
export function missingIndex(label: string, what: string): IndexUnavailableError {
  return new IndexUnavailableError(`index ${label} ${what} (run convsearch index sync --index … --db … first)`);
}
