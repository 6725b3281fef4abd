/**
 * The file an export writes: never a store or one of its files, written whole or not at all. The text
 * goes to a new private temporary file beside the target (O_EXCL, 0600: it holds store text), which is
 * renamed over the target once complete, so a reader never sees half an export, several processes can
 * write outputs at once, and a link planted at the target is replaced, never written through.
 */
import {
  closeSync,
  constants,
  ftruncateSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { describeFsError } from '../sidecar/placement.js';
import { copyPlaces, processAlive } from '../store/sqlite/copies.js';
import { RequestError } from './errors.js';

const SIDE_FILES = ['', '-wal', '-shm', '-journal'];

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

const inside = (path: string, root: string): boolean => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/**
 * `path` with its directory's links resolved (the file itself may not exist yet). A directory that does
 * not resolve holds no store: the path is returned as it is, and the write itself says why it fails.
 */
function realTarget(path: string): string {
  const abs = resolve(path);
  try {
    return realpathSync(abs);
  } catch {
    try {
      return join(realpathSync(dirname(abs)), basename(abs));
    } catch {
      return abs;
    }
  }
}

/**
 * Refuses an output path that is one of the stores `targets` names (as given to `--db`: files,
 * directories; server URLs name no file), a file SQLite keeps beside one, a link or hard link to any of
 * them, or anything inside a store that is a directory (or a directory of stores).
 */
export function refuseStoreOutput(output: string, targets: readonly string[]): void {
  const out = realTarget(output);
  const outSt = statOrNull(out);
  for (const target of targets) {
    const st = statOrNull(target);
    if (st === null) continue; // a server URL, or nothing: it names no file here
    const real = realpathSync(target);
    const clash = st.isDirectory()
      ? inside(out, real)
      : SIDE_FILES.some((s) => {
          const f = statOrNull(real + s);
          return out === real + s || (f !== null && outSt !== null && f.dev === outSt.dev && f.ino === outSt.ino);
        });
    if (clash)
      throw new RequestError(
        `refusing to write ${output}: it is the store ${target} or one of its files (convsearch never writes over the evidence)`,
      );
  }
}

/**
 * Temporary files not yet renamed or removed: removed at exit. A signal kills at once (an export runs
 * synchronously, so a handler would wait for its end); what it leaves is removed by the next export
 * to the same place (removeStale).
 */
const live = new Set<string>();
let hooked = false;

function removeLive(): void {
  for (const p of live) removeQuietly(p);
  live.clear();
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

const tempPrefix = (base: string): string => `.${base}.convsearch-`;

/** Removes temporary files of earlier exports to `base` in `dir` whose process is gone (killed). */
function removeStale(dir: string, base: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const prefix = tempPrefix(base);
  for (const name of names) {
    const m = name.startsWith(prefix) ? /^(\d+)-[0-9a-f]{12}\.tmp$/.exec(name.slice(prefix.length)) : null;
    if (m && Number(m[1]) !== process.pid && !processAlive(Number(m[1]))) removeQuietly(join(dir, name));
  }
}

/**
 * Text written to a private temporary file, then either renamed to `target` (`commit`), or read back
 * (`drain`: a spool for standard output, so that a read retried on a changed store never prints
 * twice), or removed (`discard`).
 */
export class OutputFile {
  private readonly temp: string;
  private fd: number;
  private size = 0;

  /**
   * `target`: the file to replace on commit (checked with refuseStoreOutput first); null: a spool in the
   * temporary directory, never one of the `stores`' directories (store text never lands beside the evidence).
   */
  constructor(
    private readonly target: string | null,
    stores: readonly string[] = [],
  ) {
    if (target !== null && statOrNull(target)?.isDirectory()) throw new RequestError(`cannot write ${target}: it is a directory`);
    const dir = target === null ? copyPlaces(stores)[0] : dirname(resolve(target));
    if (dir === undefined) throw new RequestError("no temporary directory outside the stores' directories: set TMPDIR to another");
    const base = target === null ? 'export' : basename(target);
    removeStale(dir, base);
    this.temp = join(dir, `${tempPrefix(base)}${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
    if (!hooked) {
      hooked = true;
      process.on('exit', removeLive);
    }
    try {
      this.fd = openSync(this.temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    } catch (e) {
      throw new RequestError(`cannot write ${target ?? this.temp}: ${describeFsError(e)}`);
    }
    live.add(this.temp);
  }

  write(text: string): void {
    const b = Buffer.from(text);
    for (let off = 0; off < b.length; ) off += writeSync(this.fd, b, off, b.length - off, this.size + off);
    this.size += b.length;
  }

  /** Forgets everything written: the export starts again (a read retried on stable copies). */
  reset(): void {
    ftruncateSync(this.fd, 0);
    this.size = 0;
  }

  get bytes(): number {
    return this.size;
  }

  /** Puts the complete file in place of the target. */
  commit(): void {
    closeSync(this.fd);
    this.fd = -1;
    try {
      renameSync(this.temp, this.target!);
    } catch (e) {
      this.discard();
      throw new RequestError(`cannot write ${this.target}: ${describeFsError(e)}`);
    }
    live.delete(this.temp);
  }

  /** Hands the spooled text to `out` in pieces, then removes the spool. */
  drain(out: (text: string) => void): void {
    closeSync(this.fd);
    this.fd = -1;
    try {
      const fd = openSync(this.temp, 'r');
      try {
        const buf = Buffer.alloc(1 << 20);
        const utf8 = new StringDecoder('utf8'); // never splits a character between two pieces
        for (let pos = 0; ; ) {
          const n = readSync(fd, buf, 0, buf.length, pos);
          if (n === 0) break;
          pos += n;
          out(utf8.write(buf.subarray(0, n)));
        }
        const rest = utf8.end();
        if (rest) out(rest);
      } finally {
        closeSync(fd);
      }
    } finally {
      this.discard();
    }
  }

  /** Removes the temporary file (an export that failed): the target is left as it was. */
  discard(): void {
    if (this.fd >= 0) {
      try {
        closeSync(this.fd);
      } catch {
        // closed already
      }
      this.fd = -1;
    }
    removeQuietly(this.temp);
    live.delete(this.temp);
  }
}
