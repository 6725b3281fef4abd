/**
 * The same PostgresStepStore content in the two upstream layouts (docs/backends.md, "Table names"): the
 * bundled fixtures (test/fixtures/backends/postgres, written by the lower-case-only version under the
 * default prefix `step_persistence`) and the same dump with its table names spelled as the mixed-case
 * version writes them for another prefix. pg_dump writes lower-case names unquoted, so the renamed ones
 * stay unquoted and Postgres folds them exactly as it folds upstream's unquoted DDL.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, type StoreName } from './servers.js';
import { tempDir } from './stores.js';

const DIR = tempDir('convsearch-pg-layouts-');

/**
 * `<store>.sql` with every `step_persistence_*` name written `<prefix>_*` (and the media table written
 * `media` when given, as a `PostgresMediaStore(table=media)` of its own). Only names change: pg_dump puts
 * table names in DDL and COPY headers, never in the rows, and the tests compare the rows read back.
 */
export function layoutSql(store: StoreName, prefix: string, media?: string): string {
  let sql = readFileSync(join(FIXTURES, 'postgres', `${store}.sql`), 'utf8');
  if (media !== undefined) sql = sql.replace(/\bstep_persistence_media\b/g, media);
  sql = sql.replace(/\bstep_persistence_/g, `${prefix}_`);
  const out = join(DIR, `${store}-${prefix}-${media ?? 'default'}.sql`);
  writeFileSync(out, sql);
  return out;
}
