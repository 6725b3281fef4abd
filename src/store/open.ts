import { createRequire } from 'node:module';
import { copyFileSync, existsSync, mkdtempSync, openSync, readSync, closeSync, rmSync, statSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { StoreError } from './errors.js';
import { probeSchema, type StoreSchema } from './schema.js';

// better-sqlite3 only honours `file:` URIs (needed for mode=ro, immutable, readonly_shm) when this is set
// before the addon first opens a database.
process.env.SQLITE_USE_URI = '1';
const require = createRequire(import.meta.url);
const Database = require('better-sqlite3') as typeof BetterSqlite3;

const SQLITE_MAGIC = 'SQLite format 3\0';

/** How the evidence file was opened; every mode leaves the store and its siblings byte-identical. */
export type OpenMode = 'immutable' | 'wal-in-place' | 'private-copy';

export interface Store {
  /** The path as the user gave it (for messages). */
  readonly path: string;
  /** The resolved real path: what identifies the store (index location, identity checks). */
  readonly realPath: string;
  readonly db: BetterSqlite3.Database;
  readonly schema: StoreSchema;
  readonly mode: OpenMode;
  close(): void;
}

function fileUri(path: string, params: string): string {
  // Percent-encode everything that could end the path part of a URI (`?`, `#`, `%`) or confuse it.
  const encoded = path.split('/').map((seg) => encodeURIComponent(seg)).join('/');
  return `file:${encoded}?${params}`;
}

function hasSqliteHeader(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(16);
    const n = readSync(fd, buf, 0, 16, 0);
    return n === 16 && buf.toString('latin1') === SQLITE_MAGIC;
  } finally {
    closeSync(fd);
  }
}

function nonEmpty(path: string): boolean {
  try {
    return statSync(path).size > 0;
  } catch {
    return false;
  }
}

/**
 * Opens a step store read-only without leaving a trace.
 *
 * SQLite creates `-wal`/`-shm` beside a WAL-mode file on open, even read-only, and readers write read
 * marks into `-shm`. So: with no `-wal` there is nothing beyond the main file to read, and `immutable=1`
 * reads it without locks or side files; with the writer's `-wal` and `-shm` present we read in place
 * with `readonly_shm=1` (SQLite then never writes the shared-memory file); a `-wal` without `-shm` means
 * no live writer, so a private copy of both is safe to open.
 */
export function openStore(inputPath: string): Store {
  const path = resolve(inputPath);
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new StoreError(`${inputPath}: no such file`);
  }
  if (st.isDirectory()) throw new StoreError(`${inputPath}: is a directory, not a step store`);
  if (!st.isFile()) throw new StoreError(`${inputPath}: not a regular file`);
  if (st.size === 0) throw new StoreError(`${inputPath}: empty file, not a step store`);
  let header: boolean;
  try {
    header = hasSqliteHeader(path);
  } catch (e) {
    throw new StoreError(`${inputPath}: cannot read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (!header) throw new StoreError(`${inputPath}: not an SQLite database`);

  const realPath = realpathSync(path);
  const wal = `${realPath}-wal`;
  const shm = `${realPath}-shm`;
  let db: BetterSqlite3.Database;
  let mode: OpenMode;
  let cleanup = (): void => {};
  try {
    if (!nonEmpty(wal)) {
      mode = 'immutable';
      db = new Database(fileUri(realPath, 'mode=ro&immutable=1'), { readonly: true, fileMustExist: true });
    } else if (existsSync(shm)) {
      mode = 'wal-in-place';
      db = new Database(fileUri(realPath, 'mode=ro&readonly_shm=1'), { readonly: true, fileMustExist: true });
    } else {
      mode = 'private-copy';
      const dir = mkdtempSync(join(tmpdir(), 'convsearch-'));
      cleanup = () => rmSync(dir, { recursive: true, force: true });
      const copy = join(dir, basename(realPath));
      copyFileSync(realPath, copy);
      copyFileSync(wal, `${copy}-wal`);
      db = new Database(fileUri(copy, 'mode=ro'), { readonly: true, fileMustExist: true });
    }
  } catch (e) {
    cleanup();
    throw new StoreError(`${inputPath}: cannot open as SQLite (${(e as Error).message})`);
  }
  let schema: StoreSchema;
  try {
    schema = probeSchema(db, inputPath);
  } catch (e) {
    db.close();
    cleanup();
    if (e instanceof StoreError) throw e;
    throw new StoreError(`${inputPath}: not a readable SQLite database (${(e as Error).message})`);
  }
  let closed = false;
  return {
    path: inputPath,
    realPath,
    db,
    schema,
    mode,
    close() {
      if (closed) return;
      closed = true;
      db.close();
      cleanup();
    },
  };
}
