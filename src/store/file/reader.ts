/**
 * A FileStepStore directory, read in place (spec backends.md §2): `<root>/<run_id>/run.json`,
 * `<run_id>/snapshots/<seq>.json`, media in `<root>/media/<sha256>.bin`.
 *
 * The whole listing (run records, snapshot file names and their stats, media names) is taken once, at
 * the first call that needs it: that is the reader's view, and the stamp is its digest. Files
 * are read later; the writer replaces files atomically (temp sibling + rename), so each is whole or
 * absent. A listed file that has gone is skipped with a `vanished-snapshot` notice; a listed file that
 * was replaced since (another inode, size or time) makes `unchanged()` false, because what was read is
 * then newer than the stamp. Nothing is ever written: no temp file, no lock, no atime promise.
 */
import { isUtf8 } from 'node:buffer';
import { hash } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  statSync,
  type BigIntStats,
  type Stats,
} from 'node:fs';
import { join } from 'node:path';
import { bytesText } from '../bytes-text.js';
import { StoreError } from '../errors.js';
import { SeamDefaults } from '../reader-defaults.js';
import { Notices, unreadable, type StoreNotice } from '../notices.js';
import { pyInt } from '../py-int.js';
import { decodeUtf8, fileSnapshot, runFromJson, type PayloadSnapshot, type SnapshotState } from '../records.js';
import { integerMember, MessagesHint, scanPayload, stringMember } from '../payload.js';
import { orderRuns, type RunFields } from '../run-order.js';
import type { RunSnapshotStats, SnapshotMark, SnapshotStateCounts, StoreReader, StoreRun, StoreSnapshot } from '../reader.js';
import { compareCodePoints } from '../instant.js';

/** FileStepStore's own check on a run id before it becomes a directory name (`_validate_id`). */
const VALID_ID = /^[A-Za-z0-9_.-]{1,200}$/;
/** Enough of a snapshot file to hold every member written before `messages`. */
const HEAD_BYTES = 4096;

interface SnapFile {
  readonly seq: number;
  readonly path: string;
  /** Identity, size and times at listing: a file read later with another stamp was replaced. */
  readonly stamp: string;
}

interface RunFiles {
  readonly run: StoreRun;
  /** Snapshot files in seq order; empty when the run has none (or no reachable directory). */
  readonly files: SnapFile[];
}

interface Listing {
  readonly runs: StoreRun[];
  readonly byId: Map<string, RunFiles>;
  readonly digest: string;
}

/** What a snapshot's first members say, for counts that must not read whole files. */
interface Head {
  /** null: the file cannot be parsed; it is listed with the complete snapshots, as unreadable. */
  readonly state: SnapshotState | null;
  readonly step: number | null;
}

function stampOf(st: BigIntStats): string {
  return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

function errno(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? 'error';
}

function isMissing(e: unknown): boolean {
  const code = errno(e);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export class FileStoreReader extends SeamDefaults implements StoreReader {
  readonly label: string;
  readonly identity: string;
  private readonly root: string;
  private readonly notes = new Notices();
  private listed: Listing | null = null;
  private readonly heads = new Map<string, Head>();
  private readonly mediaCache = new Map<string, Buffer | null>();
  private replaced = false;
  private readonly hint = new MessagesHint();

  constructor(root: string) {
    super();
    this.label = root;
    let st: Stats;
    try {
      st = statSync(root);
    } catch {
      throw new StoreError(`${root}: no such directory`);
    }
    if (!st.isDirectory()) throw new StoreError(`${root}: not a directory`);
    this.root = realpathSync(root);
    this.identity = this.root;
  }

  private listing(): Listing {
    return (this.listed ??= this.list());
  }

  /** Upstream `_sync_list_runs`: every entry of the root holding a `run.json`; a bad record fails the listing. */
  private list(): Listing {
    const parts: string[] = [];
    let entries: Buffer[];
    try {
      entries = readdirSync(this.root, { encoding: 'buffer' });
    } catch (e) {
      throw new StoreError(`${this.label}: cannot list the directory (${errno(e)})`);
    }
    // a name that is not UTF-8 is opened by its bytes (as Python's os.listdir would), shown as b'…'
    const names = entries
      .map((b) => (isUtf8(b) ? { name: b.toString(), file: join(this.root, b.toString(), 'run.json') } : this.rawEntry(b)))
      .sort((a, b) => compareCodePoints(a.name, b.name));
    const found: Array<{ fields: RunFields; dirName: string }> = [];
    for (const { name, file } of names) {
      let bytes: Buffer;
      let st: BigIntStats;
      try {
        const fd = openSync(file, 'r');
        try {
          st = fstatSync(fd, { bigint: true });
          if (!st.isFile()) continue;
          bytes = readFileSync(fd);
        } finally {
          closeSync(fd);
        }
      } catch (e) {
        if (isMissing(e)) continue;
        throw new StoreError(`${this.label}: cannot read ${name}/run.json (${errno(e)})`);
      }
      parts.push(`r${name}\0${stampOf(st)}\0${bytes.length}`);
      found.push({ fields: runFromJson(decodeUtf8(bytes), `${this.label}: ${name}/run.json`), dirName: name });
    }
    // one record per run id: the directory named after it wins, else the first name (code point order)
    const chosen = new Map<string, { fields: RunFields; dirName: string }>();
    for (const f of found) {
      const prev = chosen.get(f.fields.runId);
      if (prev === undefined || (prev.dirName !== f.fields.runId && f.dirName === f.fields.runId)) chosen.set(f.fields.runId, f);
    }
    for (const f of found) {
      if (chosen.get(f.fields.runId) !== f)
        this.notes.add('duplicate-run', f.fields.runId, null, `${f.dirName}/run.json repeats run id ${f.fields.runId}: ignored`);
    }
    const runs = orderRuns(
      [...chosen.values()].map((c) => c.fields),
      this.label,
      this.notes,
    );
    const byId = new Map<string, RunFiles>();
    for (const run of runs) {
      const files = this.snapshotFiles(run.runId, parts);
      byId.set(run.runId, { run, files });
    }
    try {
      const media = readdirSync(join(this.root, 'media'))
        .filter((n) => n.endsWith('.bin'))
        .sort();
      parts.push(`m${media.join('\0')}`);
    } catch {
      parts.push('m-');
    }
    return { runs, byId, digest: hash('sha1', parts.join('\n'), 'base64') };
  }

  private rawEntry(b: Buffer): { name: string; file: Buffer } {
    return { name: `b'${bytesText(b)}'`, file: Buffer.concat([Buffer.from(`${this.root}/`), b, Buffer.from('/run.json')]) };
  }

  /** Upstream `_sync_read_snapshot_texts`: `*.json` whose stem is a Python int, ascending; snapshots of `<root>/<run_id>`. */
  private snapshotFiles(runId: string, parts: string[]): SnapFile[] {
    if (!VALID_ID.test(runId) || runId.includes('..')) {
      // upstream raises in list_snapshots for such an id; its snapshots cannot be located
      this.notes.add('unreachable-run', runId, null, 'run id is not a valid FileStepStore directory name: no snapshots read');
      return [];
    }
    const dir = join(this.root, runId, 'snapshots');
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (e) {
      if (isMissing(e)) return [];
      throw new StoreError(`${this.label}: cannot list ${runId}/snapshots (${errno(e)})`);
    }
    const bySeq = new Map<number, SnapFile>();
    for (const name of names.sort(compareCodePoints)) {
      if (!name.endsWith('.json') || name.length === 5) continue;
      const seq = pyInt(name.slice(0, -5));
      if (seq === null) continue;
      const path = join(dir, name);
      let stamp: string;
      try {
        stamp = stampOf(statSync(path, { bigint: true }));
      } catch (e) {
        if (isMissing(e)) continue; // gone between the listing and the stat: never seen
        stamp = `error:${errno(e)}`;
      }
      if (bySeq.has(seq)) {
        this.notes.add('foreign-snapshot-entry', runId, seq, `${name} repeats snapshot ${seq}: ignored`);
        continue;
      }
      bySeq.set(seq, { seq, path, stamp });
      parts.push(`s${runId}\0${name}\0${stamp}`);
    }
    return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  }

  private files(runId: string): SnapFile[] {
    return this.listing().byId.get(runId)?.files ?? [];
  }

  /** Reads one listed file in full; null when it has gone (a `vanished-snapshot` notice). */
  private read(runId: string, f: SnapFile): PayloadSnapshot | null {
    let bytes: Buffer;
    try {
      const fd = openSync(f.path, 'r');
      try {
        if (stampOf(fstatSync(fd, { bigint: true })) !== f.stamp) this.replaced = true;
        bytes = readFileSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch (e) {
      if (isMissing(e)) {
        this.notes.add('vanished-snapshot', runId, f.seq, 'snapshot file gone since it was listed: skipped');
        return null;
      }
      // upstream logs `Skipping unreadable snapshot file` for any OSError
      return { state: null, snapshot: unreadable(f.seq, `cannot read snapshot file (${errno(e)})`) };
    }
    const r = fileSnapshot(f.seq, decodeUtf8(bytes), this.hint);
    this.heads.set(f.path, { state: r.state, step: typeof r.snapshot.stepIndex === 'number' ? r.snapshot.stepIndex : null });
    return r;
  }

  /** State and step of a listed file from its first bytes (the whole file when they do not tell); null when gone. */
  private head(runId: string, f: SnapFile): Head | null {
    const known = this.heads.get(f.path);
    if (known) return known;
    let chunk: Buffer;
    let whole: boolean;
    try {
      const fd = openSync(f.path, 'r');
      try {
        const buf = Buffer.alloc(HEAD_BYTES);
        const n = readSync(fd, buf, 0, HEAD_BYTES, 0);
        whole = n < HEAD_BYTES || fstatSync(fd).size <= HEAD_BYTES;
        chunk = buf.subarray(0, n);
      } finally {
        closeSync(fd);
      }
    } catch (e) {
      if (isMissing(e)) return null;
      const h: Head = { state: null, step: null };
      this.heads.set(f.path, h);
      return h;
    }
    if (!whole) {
      // the members before `messages` (in the writer's order: ids, step_index, timestamp, state)
      const text = decodeUtf8(chunk.subarray(0, chunk.lastIndexOf(0x2c) + 1)); // cut at a comma: never inside a UTF-8 sequence
      try {
        const p = text === null ? null : scanPayload(text + '"messages": 0}', true);
        const rawState = p?.members.get('state');
        const step =
          p && (p.members.get('step_index') === 'true' ? 1 : p.members.get('step_index') === 'false' ? 0 : integerMember(p, 'step_index'));
        if (p?.stopped && rawState !== undefined && step !== undefined) {
          const s = rawState === 'null' ? 'complete' : stringMember(p, 'state');
          if (s === 'complete' || s === 'interrupted') {
            const h: Head = { state: s, step };
            this.heads.set(f.path, h);
            return h;
          }
        }
      } catch {
        // a cut that does not fall between members: read the whole file
      }
    }
    const r = this.read(runId, f);
    return r === null ? null : this.heads.get(f.path)!;
  }

  runs(): StoreRun[] {
    return this.listing().runs;
  }

  runCount(): number {
    return this.listing().runs.length;
  }

  private *snapshotsOf(runId: string, wanted: SnapshotState, afterSeq = -Infinity): Generator<StoreSnapshot> {
    for (const f of this.files(runId)) {
      if (f.seq <= afterSeq) continue;
      // an interrupted listing needs only the files whose head says so
      if (wanted === 'interrupted' && this.head(runId, f)?.state !== 'interrupted') continue;
      const r = this.read(runId, f);
      if (r === null) continue;
      // a file whose state cannot be told is listed (unreadable) with the complete ones, once
      if ((r.state ?? 'complete') === wanted) yield r.snapshot;
    }
  }

  completeSnapshots(runId: string): Iterable<StoreSnapshot> {
    return this.snapshotsOf(runId, 'complete');
  }

  completeSnapshotsAfter(runId: string, afterSeq: number): Iterable<StoreSnapshot> {
    return this.snapshotsOf(runId, 'complete', afterSeq);
  }

  completeUpToSeq(runId: string, seq: number): SnapshotMark {
    let count = 0;
    let maxSeq = 0;
    for (const f of this.files(runId)) {
      if (f.seq > seq) break;
      const h = this.head(runId, f);
      if (h === null || (h.state ?? 'complete') !== 'complete') continue;
      count++;
      maxSeq = f.seq;
    }
    return { count, maxSeq };
  }

  interruptedSnapshots(runId: string): Iterable<StoreSnapshot> {
    return this.snapshotsOf(runId, 'interrupted');
  }

  *latestSnapshots(): Iterable<StoreSnapshot> {
    for (const [runId, r] of this.listing().byId) {
      const last = r.files[r.files.length - 1];
      const snap = last === undefined ? null : this.read(runId, last);
      if (snap !== null) yield snap.snapshot;
    }
  }

  watermarks(): Map<string, SnapshotMark> {
    const out = new Map<string, SnapshotMark>();
    for (const [runId, r] of this.listing().byId) {
      if (r.files.length > 0) out.set(runId, { count: r.files.length, maxSeq: r.files[r.files.length - 1]!.seq });
    }
    return out;
  }

  countsByRun(): Map<string, SnapshotStateCounts> {
    const out = new Map<string, SnapshotStateCounts>();
    for (const [runId, r] of this.listing().byId) {
      if (r.files.length === 0) continue;
      const { complete, interrupted } = this.statsOf(runId, r.files);
      out.set(runId, { complete, interrupted });
    }
    return out;
  }

  lastSteps(): Map<string, number | null> {
    const out = new Map<string, number | null>();
    for (const [runId, r] of this.listing().byId) if (r.files.length > 0) out.set(runId, this.statsOf(runId, r.files).lastStep);
    return out;
  }

  runSnapshotStats(runId: string): RunSnapshotStats {
    return this.statsOf(runId, this.listing().byId.get(runId)?.files ?? []);
  }

  /** From the files' heads (read once each): a snapshot whose head cannot be read is in neither count. */
  private statsOf(runId: string, files: readonly SnapFile[]): RunSnapshotStats {
    let complete = 0;
    let interrupted = 0;
    let lastStep: number | null = null;
    for (const f of files) {
      const h = this.head(runId, f);
      if (h === null) continue;
      if (h.state === 'interrupted') interrupted++;
      else complete++;
      if (h.step !== null && (lastStep === null || h.step > lastStep)) lastStep = h.step;
    }
    return { complete, interrupted, lastStep };
  }

  /** `DiskMediaStore(<root>/media)`: `<sha256>.bin`, raw bytes. */
  media(sha256: string): Buffer | null {
    if (!/^[0-9a-f]{64}$/.test(sha256)) return null;
    let hit = this.mediaCache.get(sha256);
    if (hit === undefined) {
      try {
        hit = readFileSync(join(this.root, 'media', `${sha256}.bin`));
      } catch {
        hit = null;
      }
      this.mediaCache.set(sha256, hit);
    }
    return hit;
  }

  stamp(): string {
    return this.listing().digest;
  }

  unchanged(): boolean {
    return !this.replaced;
  }
  notices(): readonly StoreNotice[] {
    return this.notes.notices();
  }

  close(): void {
    this.listed = null;
    this.heads.clear();
    this.mediaCache.clear();
  }
}
