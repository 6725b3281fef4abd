import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { openDatabase } from '../store/sqlite/native.js';
import { fileUri } from '../store/sqlite/open.js';

/**
 * What a file at an index path is, told before anything writes it: only convsearch's own index may be
 * rebuilt in place. Ours carry SQLite's `application_id` (header offset 68); indexes written before it
 * (formats up to convsearch-index-8) are known by their table set and their meta format row.
 */

/** 'csix': the `application_id` of every index this version writes. */
export const INDEX_APPLICATION_ID = 0x63736978;

/** Every table any index format had. */
const INDEX_TABLES = new Set(['meta', 'runs', 'messages', 'field_pieces', 'postings', 'corpus_cache', 'terms', 'pages']);
const OUR_FORMAT = /^convsearch-index-\d+$/;

export type Signature = { readonly kind: 'new' | 'ours' } | { readonly kind: 'foreign'; readonly why: string };

/** Reads the header without following a link; a missing or empty file is a new index. */
export function signatureOf(path: string): Signature {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'new' };
    throw e;
  }
  const header = Buffer.alloc(100);
  let size: number;
  let read: number;
  try {
    size = fstatSync(fd).size;
    read = size === 0 ? 0 : readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  if (size === 0) return { kind: 'new' };
  if (read < 100 || header.toString('latin1', 0, 16) !== 'SQLite format 3\0')
    return { kind: 'foreign', why: 'it is not an SQLite database' };
  const id = header.readUInt32BE(68);
  if (id === INDEX_APPLICATION_ID) return { kind: 'ours' };
  if (id !== 0) return { kind: 'foreign', why: `it is an SQLite database of another application (application_id ${id})` };
  return olderIndex(path) ? { kind: 'ours' } : { kind: 'foreign', why: 'it is an SQLite database that is not a convsearch index' };
}

/** An index of an earlier format: only our tables, and a meta row naming one of our formats. Read immutable: no side file, no lock. */
function olderIndex(path: string): boolean {
  let db: ReturnType<typeof openDatabase> | null = null;
  try {
    db = openDatabase(fileUri(path, 'mode=ro&immutable=1'), { readonly: true, fileMustExist: true });
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
    if (!tables.includes('meta') || !tables.every((t) => INDEX_TABLES.has(t))) return false;
    const format = db.prepare("SELECT value FROM meta WHERE key = 'format'").pluck().get();
    return typeof format === 'string' && OUR_FORMAT.test(format);
  } catch {
    return false;
  } finally {
    db?.close();
  }
}
