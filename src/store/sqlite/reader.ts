import { Notices, type StoreNotice } from '../notices.js';
import type { ConversationMeta } from '../conversation-meta.js';
import { statSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import type { ContentBasis, DigestRow, RunCut, StoreContent } from '../content.js';
import type { RunListDigests } from '../run-list.js';
import { StoreError } from '../errors.js';
import type {
  OpenReaderOptions,
  RunSnapshotStats,
  SnapshotMark,
  SnapshotStateCounts,
  StoreReader,
  StoreRun,
  StoreShare,
  StoreSnapshot,
} from '../reader.js';
import { sqliteContent } from './content.js';
import { watchValues } from './large-values.js';
import { prestartPageHashing, type WalView } from './pages.js';
import { stampAt } from './stamp.js';
import { openSharedSqliteFile, openSqliteFile, type OpenMode, type SqliteFile } from './open.js';
import { ConversationCatalog } from './conversations.js';
import { bytesText } from '../bytes-text.js';
import { RawRunIds } from './raw-ids.js';
import { readRunsTable, type RunsTable } from './runs.js';
import { SnapshotReader } from './snapshots.js';
import { lastSteps } from './steps.js';

export const SQLITE_BACKEND = 'sqlite';

/** A SQLite step store (`SqliteStepStore`), read through one read-only connection (see open.ts). */
export class SqliteReader implements StoreReader {
  private statements: SnapshotReader | null = null;
  private mediaStatement: BetterSqlite3.Statement | null = null;
  /**
   * The last steps read by the scan countsByRun just made, for the lastSteps call listings make right
   * after it: a scan of the snapshots table reads a page per row (~35 ms on the 702 MB bench store), so
   * one scan answers both. Taken once; a later call scans again.
   */
  private stepsOfLastCount: Map<string, number | null> | null = null;
  private timeStatement: BetterSqlite3.Statement | null = null;
  private readonly times = new Map<number, string | null>();
  private readonly told = new Notices();
  private catalog: ConversationCatalog | null = null;
  private readonly ids: RawRunIds;
  private table: RunsTable | null = null;

  /** `file` is the open connection (tests look at it; nothing above store/ does). */
  constructor(readonly file: SqliteFile) {
    this.ids = new RawRunIds(file.db, file.path);
  }

  get label(): string {
    return this.file.path;
  }

  get identity(): string {
    return this.file.realPath;
  }

  /** How the file is read (every mode leaves it and its siblings byte-identical). */
  get mode(): OpenMode {
    return this.file.mode;
  }

  private get snapshots(): SnapshotReader {
    return (this.statements ??= new SnapshotReader(this.file.db, this.file.schema, this.ids));
  }

  /**
   * The run list and its digest, read once: the session is one read transaction (open.ts). `cut`: the
   * runs a content read's basis says the index placed (ContentBasis.listed), whose list digest the scan takes too.
   */
  private runsTable(cut: number | null = null): RunsTable {
    return (this.table ??= readRunsTable(this.file.db, this.file.path, cut));
  }

  runListDigests(n: number): RunListDigests | null {
    return this.table?.listDigests(n) ?? null;
  }

  runs(): StoreRun[] {
    const runs = this.runsTable().runs();
    if (runs.some((r) => r.runId.includes('\uFFFD'))) this.noteRuns();
    return runs;
  }

  /** The run ids that are not UTF-8 (every one reads with U+FFFD): read by their own bytes (raw-ids.ts), but shown with U+FFFD, so said once, with the bytes. */
  noteRuns(): void {
    for (const [text, { raw, rowid }] of this.ids.all()) {
      this.told.add('non-utf8-run-id', text, null, `stored as b'${bytesText(raw)}', runs row ${rowid}`);
    }
  }

  runCount(): number {
    return this.file.db.prepare('SELECT COUNT(*) FROM runs').pluck().get() as number;
  }

  completeSnapshots(runId: string): Iterable<StoreSnapshot> {
    return watchValues(this.snapshots.completeSnapshots(runId));
  }

  completeSnapshotsAfter(runId: string, afterSeq: number): Iterable<StoreSnapshot> {
    return watchValues(this.snapshots.completeSnapshotsAfter(runId, afterSeq));
  }

  completeUpToSeq(runId: string, seq: number): SnapshotMark {
    return this.snapshots.completeUpToSeq(runId, seq);
  }

  snapshotRows(runId: string): Iterable<DigestRow> {
    return watchValues(this.snapshots.allSnapshots(runId));
  }

  snapshotTotals(): SnapshotMark {
    return this.snapshots.totals();
  }

  interruptedSnapshots(runId: string): Iterable<StoreSnapshot> {
    return watchValues(this.snapshots.interruptedSnapshots(runId));
  }

  latestSnapshots(): Iterable<StoreSnapshot> {
    return watchValues(this.snapshots.latestSnapshots());
  }

  watermarks(): Map<string, SnapshotMark> {
    return this.snapshots.watermarks();
  }

  countsByRun(): Map<string, SnapshotStateCounts> {
    const { counts, steps } = this.snapshots.countsAndSteps();
    this.stepsOfLastCount = steps;
    return counts;
  }

  runSnapshotStats(runId: string): RunSnapshotStats {
    return this.snapshots.runStats(runId);
  }

  lastSteps(): Map<string, number | null> {
    const steps = this.stepsOfLastCount;
    this.stepsOfLastCount = null;
    return steps ?? lastSteps(this.file.db);
  }

  snapshotTime(_runId: string, seq: number): string | null {
    // seq is store-wide here
    let t = this.times.get(seq);
    if (t === undefined) {
      this.timeStatement ??= this.file.db.prepare('SELECT timestamp FROM snapshots WHERE seq = ?').pluck();
      const v = this.timeStatement.get(seq);
      this.times.set(seq, (t = typeof v === 'string' ? v : null));
    }
    return t;
  }

  media(sha256: string): Buffer | null {
    if (!this.file.schema.hasMedia) return null;
    this.mediaStatement ??= this.file.db.prepare('SELECT bytes FROM media WHERE sha256 = ?');
    const b = (this.mediaStatement.get(sha256) as { bytes: unknown } | undefined)?.bytes;
    return Buffer.isBuffer(b) ? b : typeof b === 'string' ? Buffer.from(b, 'utf8') : null;
  }

  conversationMeta(ids: readonly string[] | null): Map<string, ConversationMeta> {
    this.catalog ??= new ConversationCatalog(this.file.db, this.told);
    return this.catalog.read(ids);
  }

  content(cuts: ReadonlyMap<string, RunCut>, mediaCut: number, basis?: ContentBasis): StoreContent {
    const pages = basis && this.mapped() ? { path: this.file.realPath, basis, wal: this.walView() } : undefined;
    const runsTable = (): RunsTable => this.runsTable(basis?.listed ?? null);
    return sqliteContent(this.file.db, this.file.schema, cuts, mediaCut, runsTable, pages, basis?.rowsElsewhere === true);
  }

  /**
   * Whether the page map can read the bytes SQLite reads: the file itself when it is read without locks
   * (no -wal), or the file and a live writer's log as the read transaction's snapshot of it shows them
   * (not a private copy: SQLite recovers its log on open, in memory of its own).
   */
  private mapped(): boolean {
    return this.file.mode === 'immutable' || this.file.walLog !== null;
  }

  private walView(): WalView | null {
    const log = this.file.walLog;
    return log === null ? null : { wal: `${this.file.realPath}-wal`, shm: `${this.file.realPath}-shm`, log };
  }

  contentAhead(keptFile: string | null = null): boolean {
    if (!this.mapped()) return false;
    // next to a live writer, a file the kept pass stands for is not hashed: a helper started for it would
    // only take a core from this thread (and its start-up, ~1,500 fresh pages of memory)
    if (keptFile !== null && this.file.walLog !== null && keptFile === stampIfAny(this.file.realPath)) return false;
    prestartPageHashing(this.byteSize() ?? 0);
    return true;
  }

  byteSize(): number | null {
    try {
      return statSync(this.file.realPath).size;
    } catch {
      return null;
    }
  }

  stamp(): string | null {
    return this.file.fileStamp;
  }

  /** SQLite rows are read as they are (what cannot be read is an unreadable snapshot or a StoreError), but for run ids that are not UTF-8 and the conversation catalog's. */
  notices(): readonly StoreNotice[] {
    return this.told.notices();
  }

  share(): StoreShare | null {
    const uri = this.file.sharedUri;
    return uri === null
      ? null
      : { backend: SQLITE_BACKEND, label: this.file.path, identity: this.file.realPath, location: `${this.file.mode} ${uri}` };
  }

  unchanged(): boolean {
    return this.file.unchanged();
  }

  storeError(e: unknown): StoreError | null {
    const code = (e as { code?: unknown }).code;
    if (!(e instanceof Error) || typeof code !== 'string' || !code.startsWith('SQLITE_')) return null;
    return new StoreError(`${this.file.path}: database error: ${e.message} (${code})`);
  }

  close(): void {
    this.file.close();
  }
}

/** Opens a SQLite step store read-only without leaving a trace (see open.ts); `stable` reads a private copy. */
export function openSqliteReader(path: string, options: OpenReaderOptions = {}): SqliteReader {
  return new SqliteReader(openSqliteFile(path, { copy: options.stable === true }));
}

/** In another thread: the bytes a {@link SqliteReader} shared. The sharing thread owns the files. */
export function openSharedSqliteReader(share: StoreShare): SqliteReader {
  const space = share.location.indexOf(' ');
  const mode = share.location.slice(0, space) as OpenMode;
  return new SqliteReader(openSharedSqliteFile(share.location.slice(space + 1), share.label, share.identity, mode));
}

/** The stamp of the file at `path` now; null when it cannot be read. */
function stampIfAny(path: string): string | null {
  try {
    return stampAt(path);
  } catch {
    return null;
  }
}
