import type { ProgressFn } from '../history/source.js';
import { ReplayDriver } from '../history/driver.js';
import type { ParallelOptions } from '../parallel/threads.js';
import { randomInt } from 'node:crypto';
import {
  type ContentBasis,
  EMPTY_DIGEST,
  type KeptFilePass,
  knownMedia,
  knownRunsTable,
  recordedContent,
  type RunContent,
  type StoreContent,
  withDigest,
  withRuns,
} from '../store/content.js';
import { StoreError } from '../store/errors.js';
import { IndexDamagedError, IndexUnavailableError } from './errors.js';
import type { RunSnapshotStats, StoreReader, StoreRun } from '../store/reader.js';
import { attribute } from './attribution.js';
import { type PrefetchedBuilds, prefetchBuilds } from './build-threads.js';
import { writeCorpusCache } from './corpus-cache.js';
import { type IndexMeta, type Layout, readIndexMeta } from './meta.js';
import { SegmentBuilder } from './postings.js';
import { newRunRow, RunWriter } from './run-writer.js';
import { merge, writeSegment } from './segments.js';
import type { IndexTables, KnownRuns, PageMapRow, RunMarks, RunRow } from './tables.js';
import { describeUnseen, UnseenChangeError, unexplainedChanges } from './verify.js';
import { changedMarks, heldMarks, knownRunsOf, tailMarks } from './known-runs.js';
import { type RunListDigests, runListDigests } from '../store/run-list.js';

export interface SyncReport {
  readonly upToDate: boolean;
  /** The store's content was read and compared (its files changed since the index last looked). */
  readonly contentChecked: boolean;
  /** The content digest the index now answers for (meta `content`). */
  readonly content: string;
  readonly runsReplayed: number;
  readonly runsResumed: number;
  readonly runsRemoved: number;
  readonly snapshotsRead: number;
  /** Snapshot rows read and digested by the content check (0 when the stamp vouched for everything). */
  readonly rowsDigested: number;
  /**
   * Pages of the store file the content check's page map read and hashed (StoreContent.pagesHashed): 0
   * when no map was taken, or next to a live writer when the pass kept from the last check stood for them.
   */
  readonly pagesHashed: number;
  /** Runs whose marks (what the sync compares of each run it holds) were read from the index: all of them, or (known-runs.ts) those that changed. */
  readonly marksRead: number;
  /** Runs whose keys cross-run attribution read (attribution.ts): those of the conversations of a few appended runs, or every run's. */
  readonly keysRead: number;
  /** Run rows a merge of segments read: every run's for a merge into the base, those written since it for a tier merge (0: no merge). */
  readonly mergeRunsRead: number;
  /**
   * Rows of the store's runs table read for its run list: every one, or (StoreContent.runsTail) those from
   * where its pages stop vouching for the rows the index read; 0 when its pages vouch for all of them.
   */
  readonly runRowsRead: number;
  /** The base segment was rewritten with everything after it; `merged`: only the segments after it were merged. */
  readonly compacted: boolean;
  readonly merged: boolean;
}

/**
 * Segments beyond this are merged, so a query reads few rows per term: those written since the base
 * into one (cost follows them), and the base with them once they reach a share of its size.
 */
const MAX_SEGMENTS = 8;
/** The tier is merged into the base once its bytes reach base / TIER_RATIO: rewrites of the base stay geometric. */
const TIER_RATIO = 4;
/** A segment is written out once its postings reach this size: a build's memory does not grow with the store. */
const SEGMENT_BYTES = 8 * 1024 * 1024;
/**
 * An update that rewrites this many runs is written in bulk, as a build is (onBulkWrite): its heap grows
 * like a build's (8,000 runs: 270 MB peak RSS under V8's own heap growth). Fewer hold little more than a search.
 */
const BULK_RUNS = 2000;

/**
 * A build on this thread alone of at most this many runs takes their content digests from their replay
 * (digestedByReplay): each row is read once, not twice. One 200 MB message was read, hashed and let go
 * before its replay read it again: 2.4 s of an 11 s build, and when the collector freed the first read
 * late, the build's peak RSS was 850 MB instead of 695.
 */
const REPLAY_DIGESTS_RUNS = 64;
/** Changed runs beyond this have their snapshot counts read in one pass over the store, not run by run. */
const STATS_ONE_BY_ONE = 64;

type SnapshotStats = Pick<RunRow, 'complete_snaps' | 'interrupted_snaps' | 'last_step'>;

/** What a run without rows counts (a run absent from a content read whole: StoreContent.rowStats). */
const NO_ROWS: RunSnapshotStats = { complete: 0, interrupted: 0, lastStep: null };

/**
 * What `runs` lists of each changed run (its snapshots by state, its last step) when its replay does not
 * digest it (a build's that does counts them with the digest: RunWriter.rebuild sets them): counted from
 * the rows the content read digested (RunContent.stats), else read from the store: run by run for a
 * few, in one pass for many (made only when a run needs it). Not counted for a run id read with U+FFFD:
 * two ids whose bytes differ only where they are not UTF-8 are two groups to countsByRun, one key to a digest.
 */
function snapshotStats(store: StoreReader, runCount: number, content: StoreContent): (runId: string) => SnapshotStats {
  let all: { counts: ReturnType<StoreReader['countsByRun']>; steps: ReturnType<StoreReader['lastSteps']> } | null = null;
  return (id) => {
    const digested = content.runs.get(id);
    const d = id.includes('\uFFFD') ? undefined : (digested?.stats ?? (digested === undefined && content.rowStats ? NO_ROWS : undefined));
    if (d !== undefined) return { complete_snaps: d.complete, interrupted_snaps: d.interrupted, last_step: d.lastStep };
    if (runCount > STATS_ONE_BY_ONE) {
      all ??= { counts: store.countsByRun(), steps: store.lastSteps() };
      const c = all.counts.get(id);
      return { complete_snaps: c?.complete ?? 0, interrupted_snaps: c?.interrupted ?? 0, last_step: all.steps.get(id) ?? null };
    }
    const s = store.runSnapshotStats(id);
    return { complete_snaps: s.complete, interrupted_snaps: s.interrupted, last_step: s.lastStep };
  };
}

/**
 * The runs an update places: every run of the store's list, in corpus order; or, while the store's runs
 * table is the one the index recorded (known-runs.ts heldMarks), or that list with runs after it (its
 * tail: known-runs.ts tailMarks), how many there are and the runs whose content changed, each at its
 * recorded place with its recorded record, then the tail's runs, in corpus order.
 */
type Placing =
  | { readonly all: readonly StoreRun[] }
  | { readonly count: number; readonly changed: ReadonlyArray<readonly [ord: number, run: StoreRun]>; readonly runsCame: boolean };

/** A run's record as the index holds it (its marks): the store's own while its runs table is the one recorded. */
const recordedRun = (m: RunMarks): StoreRun => ({
  runId: m.run_id,
  conversationId: m.conversation_id,
  parentRunId: m.parent_run_id,
  agentName: m.agent_name,
  startedAt: m.started_at,
  rowid: m.store_rowid,
});

interface Work {
  readonly run: StoreRun;
  readonly ord: number;
  /** The run's marks in the index; null for a run new to it. Its row is read or made when it is written (a build holds no row per run). */
  readonly marks: RunMarks | null;
  readonly runKey: number;
  readonly content: RunContent;
  readonly resumed: boolean;
}

/** `row` with the run's record from the store and its corpus position. */
function placed(row: RunRow, run: StoreRun, ord: number): RunRow {
  return Object.assign(row, {
    store_rowid: run.rowid,
    conversation_id: run.conversationId,
    parent_run_id: run.parentRunId,
    agent_name: run.agentName,
    started_at: run.startedAt,
    ord,
  });
}

/** Brings the index up to date with the store, touching only what changed. */
export class IndexSync {
  private readonly driver: ReplayDriver;
  private readonly writer: RunWriter;
  /** A build from nothing: its runs' replay, started before the content is read (see prefetchAll). */
  private early: PrefetchedBuilds | null = null;
  /** A build whose replay digests each run (digestedByReplay). */
  private elsewhere = false;

  constructor(
    private readonly t: IndexTables,
    private readonly store: StoreReader,
    /** Threads that may replay runs rebuilt from nothing while this one writes. */
    private readonly parallel: ParallelOptions = {},
    /**
     * Told before a build from nothing, or an update that rewrites BULK_RUNS runs or more, starts (and
     * before their worker threads start): the process's owner may tune its heap for it.
     */
    private readonly onBulkWrite?: () => void,
  ) {
    this.driver = new ReplayDriver(store);
    this.writer = new RunWriter(t, this.driver);
  }

  /**
   * The store's files unchanged since the index recorded their stamp: nothing is read. Otherwise every
   * row is digested (store/content.ts) and compared with what the index was built from: a run whose rows
   * were only appended to is resumed, any other changed run is rebuilt, and an index whose digests
   * all match is current (its new stamp is recorded).
   */
  sync(onProgress?: ProgressFn, verify = false): SyncReport {
    try {
      return this.syncOnce(verify, onProgress);
    } finally {
      this.early?.close();
      this.early = null;
      this.elsewhere = false;
    }
  }

  private syncOnce(verify: boolean, onProgress?: ProgressFn): SyncReport {
    let rowsDigested = 0;
    let pagesHashed = 0;
    let marksRead = 0;
    const none = (contentChecked: boolean, content: string): SyncReport => ({
      upToDate: true,
      contentChecked,
      content,
      runsReplayed: 0,
      runsResumed: 0,
      runsRemoved: 0,
      snapshotsRead: 0,
      rowsDigested,
      pagesHashed,
      marksRead,
      keysRead: 0,
      mergeRunsRead: 0,
      runRowsRead: 0,
      compacted: false,
      merged: false,
    });
    // one read transaction: meta and rows of one commit, whatever another process writes meanwhile
    this.t.begin();
    let meta: IndexMeta;
    let stamp: string | null;
    // every run's marks, or (known) what the content the index answers for was made of: then the
    // marks of the runs that changed only are read, under the write lock (known-runs.ts)
    let rows: RunMarks[] | null = null;
    let known: KnownRuns | null = null;
    let pageMap: PageMapRow | null;
    // a stamp that proves the recorded one's state more cheaply (StoreReader.freshStamp)
    let fresh: string | undefined;
    try {
      meta = readIndexMeta(this.t.readMeta());
      // taken before any content is read; the recorded one lets a server prove cheaply that nothing changed
      stamp = this.store.stamp(meta.storeStamp);
      if (stamp !== null && meta.storeStamp === stamp && !verify) {
        fresh = this.store.freshStamp?.();
        return none(false, meta.content);
      }
      if (this.store.contentAhead) this.store.contentAhead(this.keptFileStamp());
      known = verify || meta.runCount === 0 ? null : this.t.knownRuns();
      if (known?.content !== meta.content) known = null;
      if (known === null) marksRead = (rows = this.t.allMarks(meta.runCount)).length;
      pageMap = this.t.pageMap();
    } finally {
      this.t.commit();
      if (fresh !== undefined) this.keepFresh(meta!, fresh);
    }
    if (rows?.length === 0) this.startBuild(verify);
    // the page map's key stays with the index; `--verify` never takes the map's word for anything
    const seed = pageMap?.seed ?? randomInt(2 ** 31);
    let content = this.scan(rows ?? known!, meta, verify ? null : pageMap, seed, this.elsewhere);
    rowsDigested = content.rowsDigested ?? 0;
    pagesHashed = content.pagesHashed ?? 0;
    const stampSame = stamp !== null && meta.storeStamp === stamp;
    // (runs left to the replay: the digest stands for nothing yet)
    if (!content.runsElsewhere && content.digest === meta.content && (stamp === null || stampSame)) return none(true, meta.content);
    if (stampSame) this.checkUnseen(rows!, meta, content, stamp!); // --verify: every run's marks were read
    this.t.beginImmediate(); // one writer at a time; readers keep reading the last commit
    try {
      // what is written follows from the state read under the lock, never the one read before it: another
      // process may have committed since, even one that leaves the same content (a process whose view of
      // the store is older takes the index back to that state, and the next forward again), so a content
      // digest seen twice does not mean the segments, run keys and compaction mark are the ones read before
      const now = readIndexMeta(this.t.readMeta());
      // nothing written since the first look: the pages rows are the ones read then (not read again to be compared)
      const unchangedSinceRead = now.generation === meta.generation;
      if (!unchangedSinceRead) {
        marksRead += (rows = this.t.allMarks(now.runCount)).length;
        known = null;
      }
      // the store was compared with the rows of that content: the same digest, the same cuts (and its
      // runs are left to the replay only in a build from nothing)
      if (now.content !== meta.content || (content.runsElsewhere && rows!.length > 0)) {
        content = this.scan(rows!, now, verify ? null : this.t.pageMap(), seed);
        rowsDigested += content.rowsDigested ?? 0;
        pagesHashed += content.pagesHashed ?? 0;
      }
      meta = now;
      let report = none(true, content.digest);
      let runs: StoreRun[] | null = null;
      const listed = (): StoreRun[] => (runs ??= this.store.runs());
      // the runs table as the index recorded it (its pages vouch): the run list is the one `known` describes, never read
      const held = content.runsTableHeld === true && known !== null && rows === null ? known : null;
      // the list past the runs the index placed, read from where the runs table's pages stop vouching, its
      // first runs the very list the index placed (their digest is the one kept): the whole list is never read
      const tail =
        held === null &&
        known !== null &&
        rows === null &&
        content.runsTail?.settled === known.runCount &&
        content.runsTail.digests.prefix === known.runList
          ? content.runsTail
          : null;
      let digests: RunListDigests | null = tail?.digests ?? null;
      // taken by the store with the list when it could (its rows in corpus order), else hashed here
      const listDigests = (): RunListDigests => {
        const n = known?.runCount ?? 0;
        return (digests ??= this.store.runListDigests?.(n) ?? runListDigests(listed(), n));
      };
      const runCount = (): number => (tail !== null ? tail.settled + tail.runs.length : listed().length);
      const runRowsRead = (): number => (tail !== null ? tail.rowsRead : (runs?.length ?? 0));
      const putMap = (): void => {
        if (!content.pages) return;
        this.t.putPageMap(
          content.digest,
          seed,
          content.pages,
          content.tree ?? null,
          knownMedia(content),
          knownRunsTable(content),
          unchangedSinceRead,
        );
        this.t.putWalks(content.digest, content.walks ?? null, unchangedSinceRead);
        if (content.filePass !== undefined) this.t.putFilePass(content.filePass, unchangedSinceRead);
        // kept with the map: a store whose map cannot be taken (a private copy, a commit between the reads of a
        // live writer's wal-index header) keeps reading every run's marks
        if (known?.content !== content.digest)
          this.t.putKnownRuns(
            held !== null ? knownRunsOf(content, held.runCount, held.runList) : knownRunsOf(content, runCount(), listDigests().all),
            unchangedSinceRead,
          );
      };
      let mapPut = false;
      if (content.digest !== meta.content || content.runsElsewhere) {
        const heldRows = held !== null ? heldMarks(this.t, held, meta, content) : null;
        const tailRows = tail !== null ? tailMarks(this.t, known!, meta, tail.runs, content) : null;
        const marks =
          rows !== null || heldRows !== null || tailRows !== null
            ? null
            : changedMarks(this.t, known!, meta, listed(), listDigests().prefix, content);
        if (rows === null) marksRead += (rows = heldRows ?? tailRows ?? marks?.rows ?? this.t.allMarks(meta.runCount)).length;
        // content read whole before the runs are written: its map goes in first, and its digests and
        // decoded b-tree are let go (a build at 50k runs held ~14 MB of them to its end)
        if (!content.runsElsewhere) {
          putMap();
          mapPut = true;
          content = { ...content, pages: null, tree: null };
        }
        // the runs the index holds that changed, at their recorded places (their records are the store's),
        // then the runs of the tail after them
        const recorded = (marks: RunMarks[]): Array<[number, StoreRun]> =>
          marks.map((m): [number, StoreRun] => [m.ord, recordedRun(m)]).sort((a, b) => a[0] - b[0]);
        const placing: Placing =
          heldRows !== null
            ? { count: held!.runCount, changed: recorded(heldRows), runsCame: false }
            : tailRows !== null
              ? {
                  count: runCount(),
                  changed: [...recorded(tailRows), ...tail!.runs.map((r, i): [number, StoreRun] => [tail!.settled + i, r])],
                  runsCame: tail!.runs.length > 0,
                }
              : { all: listed() };
        const settled = heldRows !== null ? held!.runCount : tailRows !== null ? tail!.settled : (marks?.settled ?? 0);
        const { applied, ...done } = this.apply(placing, content, rows, settled, meta, onProgress);
        // a build that digested its runs as it replayed them: their rows
        if (content.runsElsewhere) rowsDigested += applied.rowsDigested ?? 0;
        content = applied;
        report = { ...done, rowsDigested, pagesHashed, marksRead, runRowsRead: runRowsRead() };
      }
      if (!mapPut) putMap();
      this.t.putMeta('generation', String(meta.generation + 1));
      // read in place while a writer was active, the stamp says nothing of the data: '' never matches
      this.t.putMeta('store_stamp', stamp ?? '');
      // a writer checkpointed into a store read in place: what was read may mix two states, keep none of it
      if (!this.store.unchanged()) throw new StoreError(`${this.store.label}: the store changed while it was indexed`);
      this.t.commit();
      return report;
    } catch (e) {
      if (this.t.inTransaction) this.t.rollback();
      throw e;
    }
  }

  /**
   * Records `fresh` in place of the stamp `meta` holds, when the index is still that state and no other
   * writer holds it (nothing is waited for: the next check would only pay the store's dearer proof again).
   * An index that cannot be written here (read-only, full, a shared index outside `index sync`) keeps its stamp.
   */
  private keepFresh(meta: IndexMeta, fresh: string): void {
    try {
      if (!this.t.tryBeginImmediate()) return;
    } catch (e) {
      if (e instanceof IndexUnavailableError) return;
      throw e;
    }
    try {
      const now = readIndexMeta(this.t.readMeta());
      if (now.generation === meta.generation && now.storeStamp === meta.storeStamp) this.t.putMeta('store_stamp', fresh);
      this.t.commit();
    } catch (e) {
      if (this.t.inTransaction) this.t.rollback();
      if (!(e instanceof IndexUnavailableError)) throw e;
    }
  }

  /**
   * A build from nothing: the replay of its runs is offered to worker threads now. (A method of its own:
   * the run list read for it is let go here, not held by the caller's frame to the end of the build,
   * beside the list read again under the write lock; at 50k runs, each is some 9 MB of heap.)
   */
  private startBuild(verify: boolean): void {
    this.onBulkWrite?.();
    const runs = this.store.runs();
    const digest = !verify && this.digestedByReplay(runs);
    this.early = this.prefetchAll(runs, digest);
    // with worker threads; on this thread alone only for a few runs: a build of many light runs peaked
    // ~55 MB higher at 50k runs (its rows digested run by run rather than in one pass), for no time saved
    this.elsewhere = this.early?.digest === true || (this.early === null && digest && runs.length <= REPLAY_DIGESTS_RUNS);
  }

  /**
   * `--verify` with a stamp that says nothing changed, and content that did: appends are folded in as
   * usual; a change to rows the index read is an error (UnseenChangeError), and the recorded stamp is
   * dropped so that the next search compares the content again whatever the stamp says.
   */
  private checkUnseen(rows: readonly RunMarks[], meta: IndexMeta, content: StoreContent, stamp: string): void {
    const changed = unexplainedChanges(rows, meta, content, this.store.runs());
    if (changed.length === 0) return;
    this.t.beginImmediate();
    try {
      if (readIndexMeta(this.t.readMeta()).storeStamp === stamp) this.t.putMeta('store_stamp', '');
      this.t.commit();
    } catch (e) {
      if (this.t.inTransaction) this.t.rollback();
      throw e;
    }
    throw new UnseenChangeError(describeUnseen(this.store.label, changed));
  }

  /**
   * An empty index rebuilds every run whatever the content: their replay (worker threads) starts now and
   * runs beside the read of the store's content on this thread (the second core idled through it).
   */
  private prefetchAll(runs: readonly StoreRun[], digest: boolean): PrefetchedBuilds | null {
    // weighed by rows of any state, as the index alone counts them (countsByRun reads every row's state:
    // 0.2 s on the 613 MB bench store before the threads could start)
    let marks: ReturnType<StoreReader['watermarks']> | null = null;
    const weight = (r: StoreRun): number => (marks ??= this.store.watermarks()).get(r.runId)?.count ?? 0;
    return prefetchBuilds(this.store, runs, weight, this.parallel, digest);
  }

  /**
   * Whether a build from nothing may take each run's content digest from the rows its replay reads
   * (StoreReader.snapshotRows: one read of every row, not two) rather than from the store's content
   * read: the run list can key them as that read does (no run id read with U+FFFD, none twice). That
   * the runs' rows are all the rows (no orphan) is checked after (replayedContent).
   */
  private digestedByReplay(runs: readonly StoreRun[]): boolean {
    if (!this.store.snapshotRows || !this.store.snapshotTotals || runs.length === 0) return false;
    const ids = new Set<string>();
    for (const r of runs) if (r.runId.includes('\uFFFD') || ids.size === ids.add(r.runId).size) return false;
    return true;
  }

  /**
   * `content` with the runs' digests its build made as it replayed them, when they are what the
   * store's content read would have made: the store's watermarks (read from its run index, not its
   * rows) have exactly these runs, each with its count and last seq, and they add up to the table
   * (store/content.ts `completeDigested` hashes the same cells in the same order). Otherwise (orphan
   * rows, a layout this did not foresee) null.
   */
  private replayedContent(content: StoreContent, digested: ReadonlyMap<string, RunContent>): StoreContent | null {
    const marks = this.store.watermarks();
    let rows = 0;
    for (const [id, c] of digested) {
      const m = marks.get(id);
      if (m === undefined || m.count !== c.count || m.maxSeq !== c.maxSeq) return null;
      rows += c.count;
    }
    if (digested.size !== marks.size || rows !== this.store.snapshotTotals!().count) return null;
    return withRuns(content, digested, rows);
  }

  /**
   * What a build that digested its runs as it replayed them falls back on when those digests are not
   * the store's content read's (replayedContent): that read, made now, and the runs' rows given its
   * digests (all of them: they were written with the replay's).
   */
  private contentRead(elsewhere: StoreContent, runs: readonly StoreRun[]): StoreContent {
    const read = this.store.content(new Map(), 0);
    const content = {
      ...read,
      media: elsewhere.media,
      mediaPages: elsewhere.mediaPages ?? null,
      pages: elsewhere.pages ?? null,
      tree: elsewhere.tree ?? null,
    };
    for (const { runId } of runs) {
      const c = read.runs.get(runId);
      this.t.putRun(
        Object.assign(this.t.run(this.t.marksOf(runId)!.run_key), {
          snap_count: c?.count ?? 0,
          snap_max_seq: c?.maxSeq ?? 0,
          content: c?.digest ?? EMPTY_DIGEST,
        }),
      );
    }
    // the read's own bucket digests are its runs'
    return withDigest(content, content.runBuckets);
  }

  /** The store's content; `pageMap` (when taken with the content the index holds) lets a backend read only what changed. */
  private scan(
    rows: readonly RunMarks[] | KnownRuns,
    meta: IndexMeta,
    pageMap: PageMapRow | null,
    seed: number,
    rowsElsewhere = false,
  ): StoreContent {
    const current = pageMap !== null && pageMap.content === meta.content && meta.content !== '';
    const runs = Array.isArray(rows)
      ? new Map(rows.map((r) => [r.run_id, recordedContent(r.snap_count, r.snap_max_seq, r.content)]))
      : (rows as KnownRuns).runs;
    const basis: ContentBasis = {
      seed,
      pages: current ? pageMap.pages : null,
      tree: current ? pageMap.tree : null,
      runs,
      // kept with the entries in row 5 (known-runs.ts): of those very entries
      runBuckets: Array.isArray(rows) ? null : ((rows as KnownRuns).buckets ?? null),
      media: current ? pageMap.media : null,
      runsTable: current ? pageMap.runsTable : null,
      walks: current ? pageMap.walks : null,
      rowsElsewhere,
      // the runs the index placed (known-runs.ts): their list digest is taken as the runs are read, where it can be
      listed: Array.isArray(rows) ? 0 : (rows as KnownRuns).runCount,
      // `--verify` passes no map: nor the file's pass kept with it, the file is read again
      ...(pageMap !== null ? { filePass: () => this.keptFilePass() } : {}),
    };
    // each recorded entry is the run's cut (its maxSeq)
    return this.store.content(runs, meta.mediaCount, basis);
  }

  /** The stamp of the file pass the index keeps; null when none is, or its row is damaged (the pass is then taken again). */
  private keptFileStamp(): string | null {
    try {
      return this.t.filePassStamp();
    } catch (e) {
      if (e instanceof IndexDamagedError) return null;
      throw e;
    }
  }

  /**
   * The file pass the index keeps (row 4), read in a transaction of its own unless one is open. A row
   * that fails its checks is none: the pass is taken again, and the row written anew with the map.
   */
  private keptFilePass(): KeptFilePass | null {
    const read = (): KeptFilePass | null => {
      try {
        return this.t.filePass();
      } catch (e) {
        if (e instanceof IndexDamagedError) return null;
        throw e;
      }
    };
    if (this.t.inTransaction) return read();
    this.t.begin();
    try {
      return read();
    } finally {
      this.t.commit();
    }
  }

  /**
   * `rows`: the marks of every run the index holds, or (`settled` > 0, known-runs.ts) of those that
   * changed: the first `settled` runs of the list without marks are the index's, unchanged. `placing`:
   * the runs placed (Placing): a held list places the runs of `rows` alone and the runs after it, none went.
   */
  private apply(
    placing: Placing,
    content: StoreContent,
    rows: RunMarks[],
    settled: number,
    meta: IndexMeta,
    onProgress?: ProgressFn,
  ): Omit<SyncReport, 'marksRead' | 'runRowsRead'> & { applied: StoreContent } {
    const build = settled === 0 && rows.length === 0;
    // a build whose replay digests each run (digestedByReplay): their content, as digested
    const elsewhere = content.runsElsewhere === true;
    const digested = new Map<string, RunContent>();
    const indexed = new Map(rows.map((r) => [r.run_id, r]));
    // (only when the index held runs that changed: a run appended alone needs no set of every run; a
    // held list lost none)
    const present = indexed.size > 0 && 'all' in placing ? new Set(placing.all.map((r) => r.runId)) : null;
    let minAffected = Infinity;
    let runsRemoved = 0;
    for (const [id, r] of indexed) {
      if (present === null || present.has(id)) continue;
      this.t.deleteMessages(r.run_key, 0);
      this.t.deleteRun(r.run_key);
      indexed.delete(id);
      minAffected = Math.min(minAffected, r.ord);
      runsRemoved++;
    }
    // media rows only added: only snapshots skipped for a missing media row can read differently now;
    // media rows changed in any other way: every run is replayed again
    const mediaSame = content.media.digest === meta.mediaDigest && content.media.count === meta.mediaCount;
    const mediaAppended = !mediaSame && content.media.count > meta.mediaCount && content.media.prefix === meta.mediaDigest;
    const mediaSafe = (r: RunMarks): boolean => mediaSame || (mediaAppended && r.skipped === '[]');

    let nextRunKey = meta.nextRunKey;
    // each run written anew with its record's length before, while every one only had messages appended
    // and no other run moved, came or went (attribution.ts appendedOnly); null otherwise
    let appendedFrom: Map<number, number> | null = runsRemoved === 0 ? new Map() : null;
    const work: Array<Work | null> = [];
    // corpus positions whose run rows this update writes (their cache entries change)
    const written: number[] = [];
    const runCount = 'all' in placing ? placing.all.length : placing.count;
    const place = (run: StoreRun, ord: number): void => {
      const ex = indexed.get(run.runId);
      if (ex === undefined && ord < settled) return;
      const c: RunContent = content.runs.get(run.runId) ?? { count: 0, maxSeq: 0, digest: EMPTY_DIGEST, prefix: EMPTY_DIGEST };
      const metaSame =
        ex !== undefined &&
        ex.ord === ord &&
        ex.store_rowid === run.rowid &&
        ex.conversation_id === run.conversationId &&
        ex.parent_run_id === run.parentRunId &&
        ex.agent_name === run.agentName &&
        ex.started_at === run.startedAt;
      const contentSame =
        ex !== undefined && ex.content === c.digest && ex.snap_count === c.count && ex.snap_max_seq === c.maxSeq && mediaSafe(ex);
      const runKey = ex?.run_key ?? nextRunKey++;
      if (metaSame && contentSame) return;
      minAffected = Math.min(minAffected, ord);
      written.push(ord);
      if (contentSame || !metaSame) appendedFrom = null;
      if (contentSame) {
        // the blobs of a run that changed only
        this.t.putRun(placed(this.t.run(ex.run_key), run, ord));
        return;
      }
      // only rows appended since the index read the run (those it read are byte-identical): resume
      // its replay; any other change: rebuild it
      const resumed = ex !== undefined && ex.complete_count > 0 && ex.content === c.prefix && mediaSafe(ex);
      if (!resumed) appendedFrom = null;
      work.push({ run, ord, marks: ex ?? null, runKey, content: c, resumed });
    };
    if ('all' in placing) {
      // a settled run without marks needs nothing (place returns at once): with none read (a run
      // appended alone), the settled runs are not looked at (a lookup each: ~20 ms at 50,000 runs)
      const { all } = placing;
      for (let ord = indexed.size === 0 ? settled : 0; ord < all.length; ord++) place(all[ord]!, ord);
    } else for (const [ord, run] of placing.changed) place(run, ord);

    let segment = meta.nextSegment;
    let liveSegments = meta.liveSegments;
    let tierBytes = meta.tierBytes;
    // an update's segments are listed in directories of their own (a build's in the main directory)
    const tierSegments = [...meta.tierSegments];
    let builder = new SegmentBuilder();
    let runsReplayed = 0;
    let runsResumed = 0;
    let snapshotsRead = 0;
    const flush = (): void => {
      if (builder.size === 0) return;
      tierBytes += writeSegment(this.t, builder, segment, !build);
      if (!build) tierSegments.push(segment);
      builder = new SegmentBuilder();
      segment++;
      liveSegments++;
    };
    // the early replay holds every run's build: taken only while every run is rebuilt (another process
    // may have built the index between the first look and the write lock)
    if (build || work.length >= BULK_RUNS) this.onBulkWrite?.();
    const early = build ? this.early : null;
    if (early === null) this.early?.close();
    this.early = null;
    const stats = snapshotStats(this.store, work.length, content);
    // the runs this update writes anew (attribution reads their rows whole)
    const rewritten = new Set<number>();
    const weight = (r: StoreRun): number => content.runs.get(r.runId)?.count ?? 0;
    this.driver.plan(work.map((w) => w!.run.conversationId));
    // (a build whose replay digests its runs was offered to worker threads by prefetchAll, on the same weights)
    const prefetched =
      early ??
      (elsewhere
        ? null
        : prefetchBuilds(
            this.store,
            work.filter((w) => !w!.resumed).map((w) => w!.run),
            weight,
            this.parallel,
          ));
    try {
      for (let i = 0; i < work.length; i++) {
        const { run, ord, marks, runKey, content: c, resumed } = work[i]!;
        work[i] = null; // a written run's row is not held to the end of the build
        const replayed = resumed ? null : (prefetched?.take(run.runId) ?? null);
        // the blobs of a run that changed only, read as it is written; a run whose replay digests it (on
        // a worker or here) counts its rows' states and steps with the digest, and the rebuild sets them
        const row = Object.assign(placed(marks !== null ? this.t.run(marks.run_key) : newRunRow(runKey, run.runId), run, ord), {
          snap_count: c.count,
          snap_max_seq: c.maxSeq,
          content: c.digest,
          ...(elsewhere && !resumed ? {} : stats(run.runId)),
        });
        rewritten.add(runKey);
        onProgress?.(i, work.length);
        if (builder.size >= SEGMENT_BYTES) flush();
        if (resumed) {
          const done = this.writer.resume(run, row, builder, segment);
          snapshotsRead += done.snapshotsRead;
          if (done.keysBefore === null) appendedFrom = null;
          else appendedFrom?.set(runKey, done.keysBefore);
        } else {
          const done = this.writer.rebuild(run, row, builder, segment, replayed, elsewhere);
          snapshotsRead += done.snapshotsRead;
          // a run without rows has no entry in the content (as when read from the store)
          if (done.content !== undefined && done.content.count > 0) digested.set(run.runId, done.content);
        }
        if (resumed) runsResumed++;
        else runsReplayed++;
      }
    } finally {
      prefetched?.close();
    }
    onProgress?.(work.length, work.length);
    flush();
    if (elsewhere)
      content = this.replayedContent(content, digested) ?? this.contentRead(content, 'all' in placing ? placing.all : this.store.runs());

    // the rows are in the index now; what follows streams them back (a build holds no run's record longer than it takes to write it)
    indexed.clear();
    let keysRead = 0;
    if (minAffected !== Infinity) {
      const attributed = attribute(
        this.t,
        runCount,
        minAffected,
        rewritten,
        appendedFrom,
        // (a held list: no run came, none is attributed within its conversation alone)
        'all' in placing || placing.runsCame,
      );
      written.push(...attributed.changed);
      keysRead = attributed.keysRead;
    }
    // a run removed: the last chunk holds one entry fewer, whether or not any run moved
    if (runsRemoved > 0 && runCount > 0) written.push(runCount - 1);
    let layout: Layout = { compacted: meta.compacted, base: meta.base, merged: meta.merged, tierFrom: meta.tierFrom, tierSegments };
    let baseBytes = meta.baseBytes;
    let merged: 'none' | 'tier' | 'full' = 'none';
    let mergeRunsRead = 0;
    // a build where tier segments are still listed (their runs all gone since): folded, the build's rows are the base
    const fold = build && tierSegments.length > 0;
    if (liveSegments > MAX_SEGMENTS || fold) {
      merged = fold || tierBytes * TIER_RATIO >= baseBytes ? 'full' : 'tier';
      const into = segment++;
      const done = merge(this.t, runCount, layout, into, merged === 'full');
      mergeRunsRead = done.runsRead;
      if (merged === 'full') {
        layout = { compacted: into, base: into, merged: 0, tierFrom: this.t.nextPostingId(), tierSegments: [] };
        baseBytes = done.bytes;
        tierBytes = 0;
        liveSegments = 1;
      } else {
        layout = { ...layout, merged: into, tierSegments: [into] };
        tierBytes = done.bytes;
        liveSegments = 2;
      }
      // the merged runs' live segment moved: their chunks
      written.push(...done.moved);
    } else if (build && segment > meta.nextSegment) {
      // a build into a few segments: they are the base, each its runs' own (runs of older segments are gone, their rows dead)
      layout = { compacted: 0, base: segment - 1, merged: 0, tierFrom: this.t.nextPostingId(), tierSegments: [] };
      baseBytes = tierBytes;
      tierBytes = 0;
      liveSegments = 1;
    }
    writeCorpusCache(this.t, runCount, layout, written);
    for (const [k, v] of [
      ['run_count', String(runCount)],
      ['next_segment', String(segment)],
      ['next_run_key', String(nextRunKey)],
      ['compacted', String(layout.compacted)],
      ['base', String(layout.base)],
      ['merged', String(layout.merged)],
      ['tier_from', String(layout.tierFrom)],
      ['tier_segments', layout.tierSegments.join(' ')],
      ['base_bytes', String(baseBytes)],
      ['tier_bytes', String(tierBytes)],
      ['live_segments', String(liveSegments)],
      ['content', content.digest],
      ['media_count', String(content.media.count)],
      ['media_digest', content.media.digest],
    ] as const) {
      this.t.putMeta(k, v);
    }
    return {
      applied: content,
      upToDate: false,
      contentChecked: true,
      content: content.digest,
      runsReplayed,
      runsResumed,
      runsRemoved,
      snapshotsRead,
      rowsDigested: content.rowsDigested ?? 0,
      pagesHashed: content.pagesHashed ?? 0,
      keysRead,
      mergeRunsRead,
      compacted: merged === 'full',
      merged: merged === 'tier',
    };
  }
}
