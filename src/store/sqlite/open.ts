import { createHash } from 'node:crypto';
import { closeSync, copyFileSync, existsSync, fstatSync, openSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { openDatabase } from './native.js';
import { StoreError } from '../errors.js';
import { copyDirectory, copyPlaces, removeStaleCopies } from './copies.js';
import { probeSchema, type StoreSchema } from './schema.js';
import { settledAt, stampAt } from './stamp.js';
import { readWalSnapshot, recoveredLog, sameSnapshot, type WalLog } from './wal.js';

const SQLITE_MAGIC = 'SQLite format 3\0';

/** How the evidence file was opened; every mode leaves the store and its siblings byte-identical. */
export type OpenMode = 'immutable' | 'wal-in-place' | 'private-copy';

export interface SqliteFile {
  /** The path as the user gave it (for messages). */
  readonly path: string;
  /** The resolved real path: what identifies the store (index location, identity checks). */
  readonly realPath: string;
  readonly db: BetterSqlite3.Database;
  readonly schema: StoreSchema;
  readonly mode: OpenMode;
  /**
   * A URI another thread can open to read exactly the same bytes (`openSharedSqliteFile`), or null when
   * reading in place next to a live writer: another connection would see another commit.
   */
  readonly sharedUri: string | null;
  /**
   * Identity, size and times of the store file and of its `-wal` (in every mode: the copy's source),
   * taken before anything was read and once their last write was old enough that any later write must
   * change them: the same stamp later means the same committed content, for writes made through the
   * file system while the clock runs forward (no call sets a change time; a write below the file
   * system that sets it back, or one under a clock set back, is what `--verify` is for). Null when the
   * files kept being written while we looked: then nothing may be inferred from it.
   */
  readonly fileStamp: string | null;
  /**
   * Read in place next to a live writer (`wal-in-place`): the writer's wal-index header that the read
   * transaction began on, read just before and just after it began and the same both times; null in
   * the other modes, or when a commit fell between the two reads (then it is not known which one SQLite saw).
   * With the page of each of its frames (wal.ts WalLog).
   */
  readonly walLog: WalLog | null;
  /**
   * False when the file read in place without locks (`immutable`) was written since it was opened: a
   * writer checkpointed into it, so what was read may mix two states. Run the work again with
   * `openSqliteFile(path, { copy: true })`. Always true for the other modes (a read transaction or a copy).
   */
  unchanged(): boolean;
  close(): void;
}

export interface OpenOptions {
  /** Read a private copy instead of the file itself when there is no -wal (validated against concurrent writes). */
  readonly copy?: boolean;
}

/** An SQLite URI for a path, with its query `params`. */
export function fileUri(path: string, params: string): string {
  // Percent-encode everything that could end the path part of a URI (`?`, `#`, `%`) or confuse it.
  const encoded = path
    .split('/')
    .map((seg) => encodeURIComponent(seg))
    .join('/');
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

/** SQLite messages can quote schema text from a damaged file, newlines included; a StoreError is one line. */
function oneLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).replace(/\s*[\r\n]+\s*/g, ' ');
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * The -wal's stamp: identity, size, and a digest of its bytes, or `-` when it is missing or empty (an
 * empty -wal holds nothing). Its times say little: SQLite re-owns a -wal on every open by root, which
 * moves its change time, and its modification time can be set back; a log is small (a checkpoint
 * recycles it), so reading it is cheap.
 */
function walStamp(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return '-';
  }
  try {
    const st = fstatSync(fd, { bigint: true });
    if (st.size === 0n) return '-';
    const h = createHash('sha256');
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let n: number; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) h.update(buf.subarray(0, n));
    return `${st.ino}:${st.size}:${h.digest('base64')}`;
  } finally {
    closeSync(fd);
  }
}

/** Whether the file was last changed long enough ago (see settledStamps), by its change or modification time. */
function settled(path: string, time: 'ctimeNs' | 'mtimeNs'): boolean {
  try {
    return settledAt(statSync(path, { bigint: true }), time);
  } catch {
    return true;
  }
}

/**
 * The files' stamps, taken once their last writes are old enough that any later write must change
 * them: kernels stamp writes with a coarse clock (ticks of a few ms), so a write in the same tick as
 * the stat could otherwise go unseen. `settled` is false when they kept changing for 100 ms.
 */
function settledStamps(main: string, wal: string): { main: string; wal: string; settled: boolean } {
  let ok = false;
  // the store file's change time: a write moves it, and no call sets it (see fileStamp)
  for (let i = 0; i < 10 && !(ok = settled(main, 'ctimeNs') && settled(wal, 'mtimeNs')); i++) sleepMs(10);
  return { main: stampAt(main), wal: walStamp(wal), settled: ok };
}

let staleCopiesRemoved = false;

interface Opened {
  readonly db: BetterSqlite3.Database;
  readonly schema: StoreSchema;
  readonly mode: OpenMode;
  readonly sharedUri: string | null;
  readonly fileStamp: string | null;
  readonly walLog: WalLog | null;
  readonly cleanup: () => void;
  readonly unchanged: () => boolean;
}

/** Existence and identity of the side files: a change means a writer connected or disconnected. */
function sideFiles(realPath: string): string {
  return ['-wal', '-shm']
    .map((suffix) => {
      try {
        const st = statSync(realPath + suffix);
        return `${st.ino}:${st.size > 0 ? 1 : 0}`;
      } catch {
        return '-';
      }
    })
    .join('/');
}

/** Failures that a writer connecting or disconnecting at the same moment can cause. */
function isTransient(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && /^(SQLITE_(BUSY|CANTOPEN|PROTOCOL|READONLY_(CANTINIT|RECOVERY))|ENOENT|ECHANGED)/.test(code);
}

/** Why one open attempt failed: opening the file, or reading it (schema probe). */
class OpenFailure {
  constructor(
    readonly phase: 'open' | 'read',
    readonly error: unknown,
    /** The file was written meanwhile (a checkpoint under an immutable read): worth another try. */
    readonly changed = false,
  ) {}
}

function openOnce(inputPath: string, realPath: string, opts: OpenOptions): Opened {
  const wal = `${realPath}-wal`;
  const shm = `${realPath}-shm`;
  let db: BetterSqlite3.Database;
  let mode: OpenMode;
  let cleanup = (): void => {};
  let unchanged = (): boolean => true;
  let sharedUri: string | null = null;
  let fileStamp: string | null = null;
  try {
    // stamped before anything is read: a commit or checkpoint that ends after this changes the stamp
    const stamps = settledStamps(realPath, wal);
    const before = stamps.main;
    const withWal = stamps.wal !== '-';
    fileStamp = stamps.settled ? `${stamps.main}|${stamps.wal}` : null;
    if (!withWal && !opts.copy) {
      mode = 'immutable';
      sharedUri = fileUri(realPath, 'mode=ro&immutable=1');
      db = openDatabase(sharedUri, { readonly: true, fileMustExist: true });
      unchanged = () => {
        try {
          return stampAt(realPath) === before;
        } catch {
          return false;
        }
      };
    } else if (withWal && existsSync(shm)) {
      mode = 'wal-in-place';
      db = openDatabase(fileUri(realPath, 'mode=ro&readonly_shm=1'), { readonly: true, fileMustExist: true });
    } else {
      // no live writer holds the -wal (or a copy was asked for): copy what is there, and check that no
      // writer touched it meanwhile
      mode = 'private-copy';
      const { dir, remove } = copyDirectory([inputPath, realPath]);
      cleanup = remove;
      const copy = join(dir, basename(realPath));
      copyFileSync(realPath, copy);
      if (withWal) copyFileSync(wal, `${copy}-wal`);
      if (stampAt(realPath) !== before || walStamp(wal) !== stamps.wal) {
        throw Object.assign(new Error('the store changed while it was copied'), { code: 'ECHANGED' });
      }
      sharedUri = fileUri(copy, withWal ? 'mode=ro' : 'mode=ro&immutable=1');
      db = openDatabase(sharedUri, { readonly: true, fileMustExist: true });
    }
  } catch (e) {
    cleanup();
    throw new OpenFailure('open', e);
  }
  try {
    // reads go run by run through idx_snapshots_run: a small page cache does (memory follows the largest run)
    db.exec('PRAGMA cache_size = -4000');
    // One read transaction for the whole session: every query of a command sees the same committed
    // state, however many commits a live writer makes meanwhile (and the WAL cannot be checkpointed
    // away under us). It starts with the schema probe's first read.
    // the index's header, kept only if recovering the log gives it too (wal.ts): then SQLite reads it
    // whether or not a writer is attached, and the same header after the transaction began names its snapshot
    const header = mode === 'wal-in-place' ? readWalSnapshot(shm) : null;
    const before = header === null ? null : recoveredLog(wal, header);
    db.exec('BEGIN');
    const schema = probeSchema(db, inputPath);
    const walLog = before !== null && sameSnapshot(before, readWalSnapshot(shm)) ? before : null;
    // the read transaction now sees one state: the stamp names it only if nothing was written since
    // it was taken (a commit in between would be in what we read, and not in the stamp)
    if (fileStamp !== null && mode !== 'private-copy' && `${stampAt(realPath)}|${walStamp(wal)}` !== fileStamp) fileStamp = null;
    return { db, schema, mode, sharedUri, fileStamp, walLog, cleanup, unchanged };
  } catch (e) {
    db.close();
    cleanup();
    if (e instanceof StoreError && unchanged()) throw e;
    throw new OpenFailure('read', e, !unchanged());
  }
}

/**
 * Opens a step store read-only without leaving a trace.
 *
 * SQLite creates `-wal`/`-shm` beside a WAL-mode file on open, even read-only, and readers write read
 * marks into `-shm`. So: with no `-wal` there is nothing beyond the main file to read, and `immutable=1`
 * reads it without locks or side files; with the writer's `-wal` and `-shm` present we read in place
 * with `readonly_shm=1` (SQLite then never writes the shared-memory file); a `-wal` without `-shm` means
 * no live writer, so a private copy of both is safe to open. A writer may still connect and checkpoint
 * into an `immutable` file while it is read: `unchanged()` tells, and `{ copy: true }` reads a copy instead.
 * Residual race: if the writer's close deletes -wal/-shm between our look and SQLite's first read in
 * place, SQLite's read-only open creates an empty -wal (the open then fails and is retried).
 */
export function openSqliteFile(inputPath: string, opts: OpenOptions = {}): SqliteFile {
  const path = resolve(inputPath);
  let st: Stats;
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
  if (!staleCopiesRemoved) {
    staleCopiesRemoved = true; // once per process: a directory listing of $TMPDIR is not free
    removeStaleCopies(copyPlaces([inputPath, realPath]));
  }
  // A writer that opens or closes a connection while we decide makes -wal/-shm appear or vanish (the
  // Python store's path mode does so for every call): an open that fails then is tried again.
  let opened: Opened;
  for (let attempt = 1; ; attempt++) {
    const before = sideFiles(realPath);
    try {
      opened = openOnce(inputPath, realPath, opts);
      break;
    } catch (e) {
      if (!(e instanceof OpenFailure)) throw e;
      if (attempt >= 8 || (!e.changed && !isTransient(e.error) && sideFiles(realPath) === before)) {
        if (e.error instanceof StoreError) throw e.error;
        const what = e.phase === 'open' ? 'cannot open as SQLite' : 'not a readable SQLite database';
        throw new StoreError(`${inputPath}: ${what} (${oneLine(e.error)})`);
      }
      sleepMs(5 * attempt);
    }
  }
  const { cleanup, ...file } = opened;
  const { db } = file;
  let closed = false;
  return {
    path: inputPath,
    realPath,
    ...file,
    close() {
      if (closed) return;
      closed = true;
      db.close();
      cleanup();
    },
  };
}

/**
 * Opens, in another thread, the bytes a store opened with `openSqliteFile` reads (its `sharedUri`). The
 * opening thread owns the files: it checks `unchanged()` and removes a private copy when it is done.
 */
export function openSharedSqliteFile(uri: string, inputPath: string, realPath: string, mode: OpenMode): SqliteFile {
  const db = openDatabase(uri, { readonly: true, fileMustExist: true });
  try {
    db.exec('PRAGMA cache_size = -4000');
    db.exec('BEGIN');
    const schema = probeSchema(db, inputPath);
    return {
      path: inputPath,
      realPath,
      db,
      schema,
      mode,
      sharedUri: uri,
      fileStamp: null,
      walLog: null,
      unchanged: () => true,
      close: () => db.close(),
    };
  } catch (e) {
    db.close();
    throw e;
  }
}
