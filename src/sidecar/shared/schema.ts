import { IndexRefusedError, IndexUnavailableError } from '../errors.js';
import { INDEX_TABLE_NAMES } from '../index-db.js';
import { INDEX_DDL } from '../schema.js';
import type { PgIndexDb } from './pg-db.js';
import { encodeText } from './text-codec.js';

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

/** The catalog read that tells what the schema holds (judged by schemaHolds). */
export const schemaTablesRead = (schema: string): { text: string; values: string[] } => ({
  text: `SELECT c.relname AS name FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY c.relname`,
  values: [schema],
});

/** Whether the schema holds our registry, from its tables; refuses a schema that holds anything but ours. */
export function schemaHolds(rows: ReadonlyArray<Record<string, unknown>>, schema: string, label: string): boolean {
  const names = rows.map((r) => r.name as string);
  const foreign = names.filter((n) => !OURS.test(n));
  if (foreign.length > 0)
    throw new IndexRefusedError(
      `refusing --index ${label}: schema ${schema} holds tables that are not convsearch's index (${foreign.slice(0, 3).join(', ')}${foreign.length > 3 ? ', …' : ''}); the index needs a schema of its own, never the evidence's`,
    );
  return names.includes('stores');
}

/** Whether the schema exists with our registry; refuses a schema that holds anything but ours. */
export function checkSchema(db: PgIndexDb, schema: string, label: string): boolean {
  const read = schemaTablesRead(schema);
  return schemaHolds(db.query(read.text, read.values), schema, label);
}

export const REGISTRY_DDL = (schema: string): string =>
  `CREATE TABLE ${schema}.stores (store_key BIGINT PRIMARY KEY, identity TEXT NOT NULL UNIQUE, label TEXT NOT NULL, synced_at TIMESTAMPTZ)`;

/**
 * Beside the registry: the key sequence (a rebuilt part gets a new key while the old one is still
 * read). Made by the first sync that needs it: indexes from before it existed get it there too. (A
 * sequence is no table: readers of before it still take the schema as the index's.)
 */
export const REGISTRY_EXTRAS_DDL = (schema: string): string[] => [
  `CREATE SEQUENCE IF NOT EXISTS ${schema}.store_keys`,
  // the sequence starts past every key in use (an index made before it existed)
  `SELECT setval('${schema}.store_keys', m) FROM (SELECT max(store_key) AS m FROM ${schema}.stores) x
   WHERE m >= (SELECT last_value FROM ${schema}.store_keys)`,
];

/**
 * A part replaced by a rebuild stays in the registry, under an identity no store has
 * (`retired:<key>`, label '', `synced_at` the time it was replaced), until a later sync drops it once
 * no search can still be reading it: in the registry rather than a table of its own, so that the schema
 * holds nothing a reader of before would refuse.
 */
export const RETIRED = 'retired:';

export interface StoreEntry {
  readonly key: number;
  /** When the last sync of this store committed (epoch ms), or null before the first. */
  readonly syncedAt: number | null;
}

const REGISTRY_READ = (schema: string, byLabel: boolean): string =>
  `SELECT identity, store_key AS key, extract(epoch FROM synced_at) * 1000 AS at FROM ${schema}.stores WHERE identity = ANY($1::text[])${byLabel ? ' OR label = ANY($1::text[]) ORDER BY store_key' : ''}`;

const asEntry = (row: Record<string, unknown>): StoreEntry => ({
  key: row.key as number,
  syncedAt: row.at === null ? null : Number(row.at),
});

/** The registry rows of `identities` (one statement; `byLabel`: or of those labels), by identity. */
export function findStores(db: PgIndexDb, schema: string, identities: readonly string[], byLabel = false): Map<string, StoreEntry> {
  // the codec (text-codec.ts) encodes parameters that are strings: an array's elements are encoded here
  const rows = db.query(REGISTRY_READ(schema, byLabel), [identities.map(encodeText)]);
  return new Map(rows.map((r) => [r.identity as string, asEntry(r)]));
}

export function findStore(db: PgIndexDb, schema: string, identity: string): StoreEntry | null {
  return findStores(db, schema, [identity]).get(identity) ?? null;
}

/** The registry must hold what the reader looks for: a reader without it has nothing to read. */
export function missingIndex(label: string, what: string): IndexUnavailableError {
  return new IndexUnavailableError(`index ${label} ${what} (run convsearch index sync --index … --db … first)`);
}
