import { closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { IndexRefusedError, IndexUnavailableError } from './errors.js';
import { defaultIndexPlaces } from './location.js';
import { signatureOf } from './signature.js';

/**
 * Where the index may live, checked before anything is created: never the evidence, never beside it,
 * never through a symbolic link, never a file or directory someone else owns.
 */

export interface IndexPlace {
  readonly path: string;
  /** Things repaired on the way (modes narrowed), for one warning each. */
  readonly repaired: readonly string[];
  /** Why the first default places could not be used, when a later one is (one notice). */
  readonly notice?: string;
}

const SIDE_FILES = ['-wal', '-shm', '-journal'] as const;

/** What a failed file-system call means, in words (the code alone, `ENOENT … mkdir`, misleads). */
export function describeFsError(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  switch (code) {
    case 'EROFS':
    case 'SQLITE_READONLY':
      return 'read-only file system';
    case 'EACCES':
    case 'EPERM':
    case 'SQLITE_PERM':
      return 'permission denied';
    case 'ENOSPC':
    case 'SQLITE_FULL':
      return 'no space left on the device';
    case 'EDQUOT':
      return 'disk quota exceeded';
    case 'ENOTDIR':
      return 'a path component is not a directory (ENOTDIR)';
    case 'ENOENT':
      return 'no such directory';
    default:
      return typeof code === 'string' ? `${(e as Error).message.split('\n')[0]} (${code})` : String((e as Error).message ?? e);
  }
}

interface Evidence {
  /** The store and the files SQLite keeps beside it (those that exist), by real path and identity. */
  readonly files: ReadonlyArray<{ path: string; st: Stats | null }>;
  /** Directories in which nothing may be created: the store's own, as given and as resolved. */
  readonly dirs: ReadonlyArray<{ path: string; st: Stats | null }>;
  /** A store that is a directory (FileStepStore): nothing may live inside it. */
  readonly tree: string | null;
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

const sameFile = (a: Stats | null, b: Stats | null): boolean => a !== null && b !== null && a.dev === b.dev && a.ino === b.ino;

function evidenceOf(storeRealPath: string, storeInputPath: string): Evidence {
  const st = statOrNull(storeRealPath);
  const isDir = st?.isDirectory() ?? false;
  const files = isDir ? [] : ['', ...SIDE_FILES].map((s) => ({ path: storeRealPath + s, st: statOrNull(storeRealPath + s) }));
  const dirPaths = new Set([dirname(storeRealPath), dirname(resolve(storeInputPath))]);
  return { files, dirs: [...dirPaths].map((path) => ({ path, st: statOrNull(path) })), tree: isDir ? storeRealPath : null };
}

const inside = (path: string, root: string): boolean => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/** The nearest existing ancestor of `dir` (itself included), resolved, and the parts still to create. */
function existingAncestor(dir: string): { real: string; missing: string[] } {
  const missing: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    try {
      return { real: realpathSync(d), missing: missing.reverse() };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(d) === d) throw e;
      missing.push(basename(d));
    }
  }
}

/**
 * Checks the index path against the evidence and returns where it really is. `what` names the path
 * in messages (`--index x` or `the index location x`).
 */
function checkAgainstEvidence(path: string, ev: Evidence, what: string): string {
  let anc: ReturnType<typeof existingAncestor>;
  try {
    anc = existingAncestor(dirname(path));
  } catch (e) {
    throw new IndexUnavailableError(`cannot use ${what}: ${describeFsError(e)}`);
  }
  const realDir = join(anc.real, ...anc.missing);
  const refuse = (why: string): never => {
    throw new IndexRefusedError(`refusing ${what}: ${why}; the index must live outside the evidence (pass another --index, or --no-index)`);
  };
  if (ev.tree !== null && (inside(realDir, ev.tree) || inside(anc.real, ev.tree))) refuse(`it is inside the store ${ev.tree}`);
  const ancSt = statOrNull(anc.real);
  for (const d of ev.dirs) {
    // creating the index, or a directory for it, right in the store's directory
    if (realDir === d.path || (anc.missing.length === 0 && sameFile(ancSt, d.st))) refuse(`it is in the store's directory ${d.path}`);
    if (anc.missing.length > 0 && (anc.real === d.path || sameFile(ancSt, d.st)))
      refuse(`it would create a directory in the store's directory ${d.path}`);
  }
  const realPath = join(realDir, basename(path));
  for (const suffix of ['', ...SIDE_FILES]) {
    const mine = realPath + suffix;
    const st = statOrNull(mine);
    for (const f of ev.files) {
      // the identity recorded earlier is confirmed now: a live writer's -wal/-shm come and go, and a file
      // made since (this index's -wal) may be given the inode one of them had then
      if (mine === f.path || (sameFile(st, f.st) && sameFile(statOrNull(mine), statOrNull(f.path))))
        refuse(`${mine} is the store's file ${f.path}`);
    }
  }
  return realPath;
}

/** Opens without following a final symbolic link, and checks type, owner, links and mode. */
function checkOwned(path: string, kind: 'directory' | 'file', what: string, repaired: string[], create: boolean): void {
  const flags =
    kind === 'directory'
      ? constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW
      : constants.O_RDWR | constants.O_NOFOLLOW | (create ? constants.O_CREAT : 0);
  let fd: number;
  try {
    fd = openSync(path, flags, 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK' || (code === 'ENOTDIR' && isSymlink(path))) {
      throw new IndexRefusedError(
        `refusing ${what}: ${path} is a symbolic link, and the index never follows links (remove it, or pass --index <file>)`,
      );
    }
    if (code === 'ENOTDIR' && kind === 'directory') throw new IndexRefusedError(`refusing ${what}: ${path} is not a directory`);
    if (code === 'EISDIR') throw new IndexRefusedError(`refusing ${what}: ${path} is a directory, not an index file`);
    // a -wal or -shm that another process's SQLite removed as we looked
    if (code === 'ENOENT' && !create) return;
    throw new IndexUnavailableError(`cannot open ${path}: ${describeFsError(e)}`);
  }
  try {
    const st = fstatSync(fd);
    if (kind === 'file' && !st.isFile()) throw new IndexRefusedError(`refusing ${what}: ${path} is not a regular file`);
    const uid = process.getuid?.();
    if (uid !== undefined && st.uid !== uid) {
      throw new IndexRefusedError(
        `refusing ${what}: ${path} belongs to uid ${st.uid}, not to you (uid ${uid}); it could be read or changed by them`,
      );
    }
    if (kind === 'file' && st.nlink > 1) throw new IndexRefusedError(`refusing ${what}: ${path} has other hard links`);
    const private_ = kind === 'directory' ? 0o700 : 0o600;
    if ((st.mode & 0o077) !== 0) {
      // the index holds store text: narrowed, not refused (a umask or a copy widened it)
      try {
        fchmodSync(fd, st.mode & private_);
      } catch (e) {
        throw new IndexUnavailableError(`cannot make ${path} private: ${describeFsError(e)}`);
      }
      repaired.push(`${path} was readable or writable by others (mode ${(st.mode & 0o777).toString(8)}); made it ${private_.toString(8)}`);
    }
  } finally {
    closeSync(fd);
  }
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Creates the directories that are missing, owner-only; never through a final symbolic link. */
function makeDirs(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST' && isSymlink(dir)) return; // refused by the check that follows
    // mkdir -p reports the first missing component (ENOENT) even when the real cause is a read-only
    // or full disk: try the last one alone for the real reason
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      try {
        mkdirSync(dir, { mode: 0o700 });
      } catch (e2) {
        throw new IndexUnavailableError(`cannot create ${dir}: ${describeFsError(e2)}`);
      }
    }
    throw new IndexUnavailableError(`cannot create ${dir}: ${describeFsError(e)}`);
  }
}

/** Checks and prepares one place; `owned`: the directory is convsearch's (checked like the file). */
function placeAt(given: string, what: string, ev: Evidence, owned: boolean, repaired: string[]): string {
  checkAgainstEvidence(given, ev, what);
  const dir = dirname(given);
  makeDirs(dir);
  if (owned) checkOwned(dir, 'directory', what, repaired, false);
  // again now that the directories exist: a link may resolve differently once its target is there
  const real = checkAgainstEvidence(given, ev, what);
  let signature: ReturnType<typeof signatureOf>;
  try {
    signature = signatureOf(given);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') {
      throw new IndexRefusedError(
        `refusing ${what}: ${given} is a symbolic link, and the index never follows links (remove it, or pass --index <file>)`,
      );
    }
    throw new IndexUnavailableError(`cannot read ${given}: ${describeFsError(e)}`);
  }
  // before anything changes it (its mode included): only our own index is ever rewritten
  if (signature.kind === 'foreign') {
    throw new IndexRefusedError(`refusing ${what}: ${given} is not a convsearch index (${signature.why}); it is left as it is`);
  }
  for (const suffix of SIDE_FILES) {
    const side = given + suffix;
    if (isSymlink(side)) {
      throw new IndexRefusedError(`refusing ${what}: ${side} is a symbolic link, and the index never follows links (remove it)`);
    }
    if (statOrNull(side) !== null) checkOwned(side, 'file', what, repaired, false);
  }
  checkOwned(given, 'file', what, repaired, true);
  if (relative(real, realpathSync(given)) !== '') {
    throw new IndexRefusedError(`refusing ${what}: it changed while it was checked`);
  }
  return given;
}

/**
 * Settles where the store's index lives and prepares it: the directory (owner-only) and an empty
 * index file (0600) when there is none. `explicit` is `--index`, refused (IndexRefusedError) when it
 * cannot be used safely. Otherwise the default places are tried in turn ($XDG_CACHE_HOME, ~/.cache,
 * `<tmpdir>/convsearch-<uid>`); when none will do, IndexUnavailableError: the search goes without.
 */
export function placeIndex(
  storeRealPath: string,
  storeInputPath: string,
  explicit: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): IndexPlace {
  const ev = evidenceOf(storeRealPath, storeInputPath);
  if (explicit !== undefined) {
    const repaired: string[] = [];
    return { path: placeAt(resolve(explicit), `--index ${explicit}`, ev, false, repaired), repaired };
  }
  const failed: string[] = [];
  for (const place of defaultIndexPlaces(storeRealPath, env)) {
    const repaired: string[] = [];
    try {
      const path = placeAt(place.path, `the index location ${place.path} (from ${place.from})`, ev, true, repaired);
      const notice = failed.length > 0 ? `${failed.join('; ')}; the index is at ${path}` : undefined;
      return notice === undefined ? { path, repaired } : { path, repaired, notice };
    } catch (e) {
      if (!(e instanceof IndexRefusedError || e instanceof IndexUnavailableError)) throw e;
      failed.push(e.message.replace(/; the index must live outside the evidence \(pass another --index, or --no-index\)$/, ''));
    }
  }
  throw new IndexUnavailableError(`no default place will do for the index: ${failed.join('; ')}`);
}
