/**
 * The store seam: everything above `store/` reads a step-persistence store through this interface and
 * never learns which backend holds it (SQLite file, FileStepStore directory, Postgres, Redis; spec
 * backends.md). Every method is synchronous: backends whose drivers are asynchronous answer through a
 * driver thread (see the backend folders), so the replay stays one synchronous pipeline.
 *
 * Every implementation is read-only: no write of any kind reaches the store, ever.
 */
import type { StoreNotice } from './notices.js';
import type { ConversationMeta } from './conversation-meta.js';
import type { ContentBasis, DigestRow, RunCut, StoreContent } from './content.js';
import type { StoreError } from './errors.js';
import type { RunListDigests } from './run-list.js';

/** One run record, as every backend lists it. */
export interface StoreRun {
  readonly runId: string;
  readonly conversationId: string | null;
  readonly parentRunId: string | null;
  readonly agentName: string | null;
  /** `started_at` as stored (isoformat text). */
  readonly startedAt: string;
  /**
   * The backend's own tie-break among equal `started_at` (SQLite: rowid; elsewhere a documented
   * deterministic rule), and what tells a re-registered run from the same one. Unique per store.
   */
  readonly rowid: number;
  /**
   * Which store the run comes from, set only when several stores are searched as one (see
   * search/union.ts): the store's label. Absent for a single store.
   */
  readonly store?: string;
  /** With `store`: the run's id inside its store (`runId` is then the union's name for it, qualified where stores share the id). */
  readonly storeRunId?: string;
}

/** One stored snapshot; `messages` is the raw JSON text of the message list (untyped: a corrupt row may hold anything). */
export interface StoreSnapshot {
  /** Orders a run's snapshots; per run (File, Redis) or store-wide (SQLite, Postgres). Never reused within a run. */
  readonly seq: number;
  readonly stepIndex: unknown;
  readonly timestamp: unknown;
  readonly messages: unknown;
  /** Why the reader could not read the row at all (then `messages` is null): the replay skips it with this reason. */
  readonly problem?: string;
}

export interface SnapshotMark {
  /** Snapshots of any state. */
  readonly count: number;
  readonly maxSeq: number;
}

export interface SnapshotStateCounts {
  readonly complete: number;
  readonly interrupted: number;
}

/** One run's entries of countsByRun and lastSteps. */
export interface RunSnapshotStats extends SnapshotStateCounts {
  readonly lastStep: number | null;
}

export interface StoreReader {
  /** What the user named (path or URL without credentials), for messages. */
  readonly label: string;
  /** What identifies the store for the sidecar index: a real path, or a URL without credentials plus prefix. */
  readonly identity: string;
  /** A server store's server and role (`host:port user`), which a shared index must not use. */
  readonly login?: string;
  /** Runs in corpus order (`started_at`, then the backend's tie rule); a malformed run record throws StoreError. */
  runs(): StoreRun[];
  /**
   * The digests of runs() (store/run-list.ts), of its first `n` runs and of all, when the reader took them
   * while it read the list for a content read whose basis said `n` (ContentBasis.listed); else null, and
   * the caller hashes the list.
   */
  runListDigests?(n: number): RunListDigests | null;
  runCount(): number;
  /** The run's `complete` snapshots in seq order, streamed where the backend can. */
  completeSnapshots(runId: string): Iterable<StoreSnapshot>;
  /** Complete snapshots with `seq > afterSeq`, in order: what was added since a watermark. */
  completeSnapshotsAfter(runId: string, afterSeq: number): Iterable<StoreSnapshot>;
  /** Count and last seq of the run's complete snapshots up to `seq`. */
  completeUpToSeq(runId: string, seq: number): SnapshotMark;
  interruptedSnapshots(runId: string): Iterable<StoreSnapshot>;
  /**
   * The run's rows of every state in seq order, with the cells its content digest covers: a build
   * digests each run from the rows its replay reads (content.ts `completeDigested`) instead of reading
   * every row twice. Absent where the backend digests otherwise.
   */
  snapshotRows?(runId: string): Iterable<DigestRow>;
  /** With snapshotRows: the rows of any run (the snapshots table's count, orphans included) and the highest seq. */
  snapshotTotals?(): SnapshotMark;
  /** Per run, its latest snapshot (highest seq, any state), streamed: a quick look at each run, no replay. */
  latestSnapshots(): Iterable<StoreSnapshot>;
  /** Per run: snapshots of any state and the highest seq. */
  watermarks(): Map<string, SnapshotMark>;
  countsByRun(): Map<string, SnapshotStateCounts>;
  /** Per run, the highest `step_index` of any state (null when not an integer). */
  lastSteps(): Map<string, number | null>;
  /**
   * One run's countsByRun and lastSteps entries, read through that run's rows alone (what a sync of a
   * few changed runs records in the index).
   */
  runSnapshotStats(runId: string): RunSnapshotStats;
  /**
   * The stored `timestamp` of the run's complete snapshot `seq` (null when it has none, or not text): what
   * dates a message that carries no time of its own (the snapshot that first held it).
   */
  snapshotTime(runId: string, seq: number): string | null;
  /** Externalized media bytes by sha256 hex, or null when the store does not hold them. */
  media(sha256: string): Buffer | null;
  /**
   * The conversation catalog's title, tags and outcome of the conversations `ids` names (null: all it
   * holds), by conversation id. Only a SQLite file can hold a catalog (docs/backends.md); a store without
   * one answers an empty map. A row that cannot be read is left out with a notice.
   */
  conversationMeta(ids: readonly string[] | null): Map<string, ConversationMeta>;
  /**
   * Everything the store holds, digested per run (see content.ts): `cuts` gives per run the last seq
   * an index saw, for the prefix digests that tell an append from a rewrite; `mediaCut` the media it saw.
   * Reads every snapshot: asked for only when the stamp does not vouch for the content. With a `basis`
   * (what the index knows), a backend that can prove which runs are untouched reads only the others.
   */
  content(cuts: ReadonlyMap<string, RunCut>, mediaCut: number, basis?: ContentBasis): StoreContent;
  /** Roughly how many bytes the store holds (SQLite: the file), to plan an index's disk space; null when unknown. */
  byteSize(): number | null;
  /**
   * A cheap identity of the state being read: a later reader with the same stamp reads the same content,
   * so the index answers without reading the store (the content digest is compared only when it
   * differs). SQLite: identity, size and times of a file read without locks (no read at all); File: the
   * tree's listing (names and stats); Postgres: one query in the command's transaction; Redis: the
   * run records and seq counters, and every run's index only when those moved (no payload). Null when the backend cannot give one (a live
   * writer's -wal). What each can detect: docs/backends.md. `recorded` (a stamp this backend gave before, as an
   * index recorded it) lets a backend with a cheaper proof that nothing changed since return it as it is
   * (Postgres: the transaction snapshot; Redis: its listing and a probe of each run's first and last payload); the others ignore it.
   */
  stamp(recorded?: string | null): string | null;
  /**
   * A reader whose stamp is read on another thread, asked for as it opens (a server's driver thread),
   * has this: told the stamp an index recorded, it may start proving it there. The index is then
   * searched while the stamp is read, the answer kept when the index proves to answer for the content
   * the stamp vouches for (sidecar/with-index.ts, answerAhead).
   */
  stampAhead?(recorded: string | null): void;
  /**
   * After `stamp(recorded)` returned `recorded` on a proof other than its cheap one (Postgres: the rows,
   * after a commit elsewhere on the server moved the transaction snapshot): the stamp that proves the same
   * state cheaply from now on. The index records it, or every later check pays that proof again.
   * Undefined when there is none newer.
   */
  freshStamp?(): string | undefined;
  /**
   * Told that content() comes next (the stamp differs from the index's): a backend may start ahead
   * what that read needs (SQLite: the page map's helper thread, whose start-up then overlaps the caller's work).
   * `keptFile`: the stamp of the store file's pass the index keeps (FilePass), if any; what a pass of
   * that very file would need is not started (SQLite: a live writer's commits leave the file as it was).
   * True when something was asked to start.
   */
  contentAhead?(keptFile?: string | null): boolean;
  /**
   * How another thread opens the very bytes this reader reads (`openSharedReader` in shared.ts), or null when
   * no other connection could (read in place beside a live writer, where it might see another commit).
   */
  share(): StoreShare | null;
  /** False when what was read may mix two states (a writer changed the store under a read in place): read again. */
  unchanged(): boolean;
  /**
   * The backend's own failure as a StoreError naming the store (a damaged page shows only when a query
   * reaches it), or null when `e` is not one.
   */
  storeError(e: unknown): StoreError | null;
  /** Items the reader skipped or read leniently so far, where the reference is silent (each once, in order). */
  notices(): readonly StoreNotice[];
  /**
   * Adds to notices() what reading `runs()` would add, without listing the runs (a search answered by
   * the index reports what its replay would); a reader without it has `runs()` read instead.
   */
  noteRuns?(): void;
  close(): void;
}

/** What another thread needs to open a reader on the same bytes: plain data, it crosses threads. */
export interface StoreShare {
  /** Which backend's `openShared` reads it. */
  readonly backend: string;
  readonly label: string;
  readonly identity: string;
  /** Backend-specific: where the very same bytes are (SQLite: a `file:` URI). */
  readonly location: string;
}

/** How to open a store. */
export interface OpenReaderOptions {
  /**
   * Read a private, stable copy rather than the store in place: asked for after a read in place saw
   * `unchanged()` turn false. Backends that always read one consistent state ignore it.
   */
  readonly stable?: boolean;
  /** The environment libpq's variables (PGPASSWORD, PGPASSFILE, ...) are read from; default: the process's. */
  readonly env?: NodeJS.ProcessEnv;
}
