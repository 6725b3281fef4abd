import type BetterSqlite3 from 'better-sqlite3';
import { RunReplayer, type SkippedSnapshot, type StoredPosition } from '../history/replay.js';
import { ConversationSeeds } from '../history/seeds.js';
import type { ParallelOptions } from '../parallel/threads.js';
import { MediaCache } from '../history/media.js';
import { StoreError } from '../store/errors.js';
import type { SnapshotMark, StoreReader, StoreRun } from '../store/reader.js';
import { CORPUS_RUN_COLUMNS, type IndexRunIdentity } from './schema.js';
import { prefetchBuilds } from './build-threads.js';
import { decodePostings, encodeGroups, encodeLengths, SegmentBuilder } from './postings.js';
import { buildRun, messageRow, storedSearchText, type MessageRow, type RunBuild } from './run-build.js';

export interface SyncReport {
  readonly upToDate: boolean;
  readonly runsReplayed: number;
  readonly runsResumed: number;
  readonly runsRemoved: number;
  readonly snapshotsRead: number;
  readonly compacted: boolean;
}

export type SyncProgress = (done: number, total: number) => void;

interface IndexedRun extends IndexRunIdentity {
  ord: number;
  snap_count: number;
  snap_max_seq: number;
  complete_count: number;
  complete_max_seq: number;
}

/** Segments beyond this are merged into one, so a query reads few rows per term. */
const MAX_SEGMENTS = 8;
/** Up to this many runs to re-attribute, claims are checked with indexed lookups instead of loading every key. */
const LOOKUP_ATTRIBUTION_LIMIT = 32;

/** Brings the index up to date with the store, touching only what changed. */
export class IndexSync {
  private readonly media: MediaCache;
  private readonly metaValue: BetterSqlite3.Statement;
  private statements: ReturnType<IndexSync['prepareStatements']> | null = null;
  private seeds = new ConversationSeeds();

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly store: StoreReader,
    /** Threads that may replay runs rebuilt from nothing while this one writes. */
    private readonly parallel: ParallelOptions = {},
  ) {
    this.media = new MediaCache(store);
    this.metaValue = db.prepare('SELECT value FROM meta WHERE key = ?').pluck();
  }

  /** Statements for updating, prepared only when there is something to update. */
  private get q(): ReturnType<IndexSync['prepareStatements']> {
    return (this.statements ??= this.prepareStatements());
  }

  private prepareStatements() {
    const db = this.db;
    return {
      putMeta: db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
      // not the document lengths: a sync reads every run's row
      runs: db.prepare(
        'SELECT run_key, run_id, store_rowid, conversation_id, parent_run_id, agent_name, started_at, seg, skipped, ord, snap_count, snap_max_seq, complete_count, complete_max_seq FROM runs',
      ),
      deleteRun: db.prepare('DELETE FROM runs WHERE run_key = ?'),
      deleteMessages: db.prepare('DELETE FROM messages WHERE run_key = ? AND pos >= ?'),
      insertRun: db.prepare(
        `INSERT INTO runs (run_id, store_rowid, conversation_id, parent_run_id, agent_name, started_at, ord, snap_count, snap_max_seq,
           complete_count, complete_max_seq, len, start_all, start_conv, dl_full, dl_all, dl_conv, seg, skipped, unknown, lengths)
         VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '[]', '[]', x'')`,
      ),
      updateRunMeta: db.prepare(
        'UPDATE runs SET store_rowid = ?, conversation_id = ?, parent_run_id = ?, agent_name = ?, started_at = ?, ord = ?, snap_count = ?, snap_max_seq = ? WHERE run_key = ?',
      ),
      updateRunRecord: db.prepare(
        'UPDATE runs SET complete_count = ?, complete_max_seq = ?, len = ?, seg = ?, skipped = ?, unknown = ?, lengths = ? WHERE run_key = ?',
      ),
      updateAttribution: db.prepare(
        'UPDATE runs SET start_all = ?, start_conv = ?, dl_full = ?, dl_all = ?, dl_conv = ? WHERE run_key = ?',
      ),
      storedPositions: db.prepare('SELECT loose_key, strict_key, first_seq, first_step FROM messages WHERE run_key = ? ORDER BY pos'),
      storedTexts: db.prepare('SELECT pos, dl, fields FROM messages WHERE run_key = ? AND pos < ? ORDER BY pos'),
      insertMessage: db.prepare(
        `INSERT INTO messages (run_key, pos, loose_key, strict_key, kind, timestamp, first_seq, first_step, dl, unknown_parts, roles, fields)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      attributionRows: db.prepare('SELECT strict_key, dl FROM messages WHERE run_key = ? ORDER BY pos'),
      runsByOrd: db.prepare('SELECT run_key, conversation_id, ord FROM runs WHERE ord >= ? ORDER BY ord'),
      claimedBefore: db.prepare(
        'SELECT m.strict_key AS key, r.conversation_id AS conv FROM messages m JOIN runs r ON r.run_key = m.run_key WHERE r.ord < ?',
      ),
      claimedAll: db.prepare(
        'SELECT 1 FROM messages m JOIN runs r ON r.run_key = m.run_key WHERE m.strict_key = ? AND r.ord < ? LIMIT 1',
      ).pluck(),
      claimedConv: db.prepare(
        'SELECT 1 FROM messages m JOIN runs r ON r.run_key = m.run_key WHERE m.strict_key = ? AND r.ord < ? AND r.conversation_id = ? LIMIT 1',
      ).pluck(),
      insertPosting: db.prepare('INSERT INTO postings (term, seg, data) VALUES (?, ?, ?)'),
      segments: db.prepare('SELECT COUNT(DISTINCT seg) FROM runs').pluck(),
      unknownOfRun: db.prepare('SELECT unknown_parts FROM messages WHERE run_key = ? AND unknown_parts IS NOT NULL ORDER BY pos').pluck(),
    };
  }

  private meta(key: string): string | undefined {
    return this.metaValue.get(key) as string | undefined;
  }

  /** Fast check whether the index already reflects the store. */
  isCurrent(fingerprint: string): boolean {
    return this.meta('fingerprint') === fingerprint;
  }

  sync(onProgress?: SyncProgress): SyncReport {
    const none: SyncReport = { upToDate: true, runsReplayed: 0, runsResumed: 0, runsRemoved: 0, snapshotsRead: 0, compacted: false };
    // a file read without locks whose stamp is the one recorded with the fingerprint holds the same bytes
    const stamp = this.store.stamp();
    if (stamp !== null && this.meta('store_stamp') === stamp) return none;
    const fingerprint = this.store.fingerprint();
    const current = this.isCurrent(fingerprint);
    if (current && stamp === null) return none;
    this.db.exec('BEGIN IMMEDIATE'); // one writer at a time; readers keep reading the last commit
    try {
      // another process may have brought it up to date while we waited for the lock
      if (current || this.isCurrent(fingerprint)) {
        if (stamp !== null) this.q.putMeta.run('store_stamp', stamp);
        this.db.exec('COMMIT');
        return none;
      }
      const report = this.apply(this.store.runs(), onProgress);
      this.q.putMeta.run('fingerprint', fingerprint);
      // read in place beside a live writer (or from a copy), the file's stamp says nothing of the data
      this.q.putMeta.run('store_stamp', stamp ?? '');
      // a writer checkpointed into a store read in place: what was read may mix two states, keep none of it
      if (!this.store.unchanged()) throw new StoreError(`${this.store.label}: the store changed while it was indexed`);
      this.db.exec('COMMIT');
      return report;
    } catch (e) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw e;
    }
  }

  private apply(runs: readonly StoreRun[], onProgress?: SyncProgress): Omit<SyncReport, 'upToDate'> & { upToDate: false } {
    const marks = this.store.watermarks();
    const indexed = new Map((this.q.runs.all() as IndexedRun[]).map((r) => [r.run_id, r]));
    const present = new Set(runs.map((r) => r.runId));
    let minAffected = Infinity;
    let runsRemoved = 0;
    for (const [id, r] of indexed) {
      if (present.has(id)) continue;
      this.q.deleteMessages.run(r.run_key, 0);
      this.q.deleteRun.run(r.run_key);
      indexed.delete(id);
      minAffected = Math.min(minAffected, r.ord);
      runsRemoved++;
    }

    const segment = Number(this.meta('next_segment') ?? '1');
    const builder = new SegmentBuilder();
    let runsReplayed = 0;
    let runsResumed = 0;
    let snapshotsRead = 0;
    let wroteSegment = false;
    const work: Array<{ run: StoreRun; ex: IndexedRun; resumed: boolean }> = [];
    runs.forEach((run, ord) => {
      const mark: SnapshotMark = marks.get(run.runId) ?? { count: 0, maxSeq: 0 };
      let ex = indexed.get(run.runId);
      const metaSame =
        ex !== undefined &&
        ex.ord === ord &&
        ex.store_rowid === run.rowid &&
        ex.conversation_id === run.conversationId &&
        ex.parent_run_id === run.parentRunId &&
        ex.agent_name === run.agentName &&
        ex.started_at === run.startedAt;
      const snapsSame = ex !== undefined && ex.snap_count === mark.count && ex.snap_max_seq === mark.maxSeq;
      if (metaSame && snapsSame) return;
      minAffected = Math.min(minAffected, ord);
      if (!ex) {
        const key = Number(this.q.insertRun.run(run.runId, run.rowid, run.conversationId, run.parentRunId, run.agentName, run.startedAt, ord).lastInsertRowid);
        ex = { run_key: key, run_id: run.runId, complete_count: 0, complete_max_seq: 0, skipped: '[]' } as IndexedRun;
      }
      this.q.updateRunMeta.run(run.rowid, run.conversationId, run.parentRunId, run.agentName, run.startedAt, ord, mark.count, mark.maxSeq, ex.run_key);
      if (snapsSame) return;
      // only snapshots were added since the index saw the run: resume its replay; else rebuild it
      const upTo = ex.complete_count > 0 ? this.store.completeUpToSeq(run.runId, ex.complete_max_seq) : null;
      work.push({ run, ex, resumed: upTo !== null && upTo.count === ex.complete_count && upTo.maxSeq === ex.complete_max_seq });
    });

    const weight = (r: StoreRun): number => marks.get(r.runId)?.count ?? 0;
    this.seeds = new ConversationSeeds(work.map((w) => w.run.conversationId));
    const prefetched = prefetchBuilds(this.store, work.filter((w) => !w.resumed).map((w) => w.run), weight, this.parallel);
    try {
      work.forEach(({ run, ex, resumed }, i) => {
        onProgress?.(i, work.length);
        snapshotsRead += resumed ? this.resumeRun(run, ex, builder, segment) : this.rebuildRun(run, ex, builder, segment, prefetched?.take(run.runId) ?? null);
        wroteSegment = true;
        if (resumed) runsResumed++;
        else runsReplayed++;
      });
    } finally {
      prefetched?.close();
    }
    onProgress?.(work.length, work.length);

    if (wroteSegment) {
      for (const [term, data] of builder.postings()) this.q.insertPosting.run(term, segment, data);
      this.q.putMeta.run('next_segment', String(segment + 1));
    }
    if (minAffected !== Infinity) this.attribute(minAffected);
    const compacted = wroteSegment && (this.q.segments.get() as number) > MAX_SEGMENTS;
    if (compacted) this.compact(segment + 1);
    this.writeCorpusCache();
    return { upToDate: false, runsReplayed, runsResumed, runsRemoved, snapshotsRead, compacted };
  }

  /** Folds the snapshots added since the index saw the run into its stored record; returns the snapshots read. */
  private resumeRun(run: StoreRun, ex: IndexedRun, builder: SegmentBuilder, segment: number): number {
    const stored = (this.q.storedPositions.all(ex.run_key) as Array<{ loose_key: string; strict_key: string; first_seq: number; first_step: number | null }>).map(
      (p): StoredPosition => ({ keys: { loose: p.loose_key, strict: p.strict_key }, firstSeq: p.first_seq, firstStep: p.first_step }),
    );
    const replayer = new RunReplayer(run.runId, this.media, stored, this.seeds.seedFor(run.conversationId));
    let completeCount = ex.complete_count;
    let maxSeq = ex.complete_max_seq;
    for (const row of this.store.completeSnapshotsAfter(run.runId, ex.complete_max_seq)) {
      replayer.add(row);
      completeCount++;
      maxSeq = row.seq;
    }
    this.seeds.done(run.conversationId, replayer.lastSnapshot);
    const from = replayer.firstChanged;
    this.q.deleteMessages.run(ex.run_key, from);
    builder.beginRun(ex.run_key);
    const lengths: number[] = [];
    for (const t of this.q.storedTexts.iterate(ex.run_key, from) as IterableIterator<{ pos: number; dl: number; fields: string }>) {
      builder.addDocument(t.pos, storedSearchText(t.fields));
      lengths.push(t.dl);
    }
    replayer.freshMessages(from).forEach((m, i) => lengths.push(this.insertRow(ex.run_key, from + i, messageRow(m), builder)));
    const skipped = (JSON.parse(ex.skipped) as SkippedSnapshot[]).concat(replayer.skipped);
    this.finishRun(ex, completeCount, maxSeq, replayer.length, skipped, lengths, segment);
    return replayer.snapshotsRead;
  }

  /** Writes a run rebuilt from nothing (snapshots pruned or rewritten, or a new run); returns the snapshots read. */
  private rebuildRun(run: StoreRun, ex: IndexedRun, builder: SegmentBuilder, segment: number, prefetched: RunBuild | null): number {
    let build = prefetched;
    if (!build) {
      const replayed = buildRun(run.runId, this.store, this.media, this.seeds.seedFor(run.conversationId));
      this.seeds.done(run.conversationId, replayed.last);
      build = replayed.build;
    } else this.seeds.done(run.conversationId, null);
    this.q.deleteMessages.run(ex.run_key, 0);
    builder.beginRun(ex.run_key);
    const lengths = build.rows.map((row, pos) => this.insertRow(ex.run_key, pos, row, builder));
    this.finishRun(ex, build.completeCount, build.maxSeq, build.rows.length, build.skipped, lengths, segment);
    return build.snapshotsRead;
  }

  /** The run's record counts, watermark and warnings, once its messages are stored. */
  private finishRun(ex: IndexedRun, completeCount: number, maxSeq: number, length: number, skipped: SkippedSnapshot[], lengths: number[], segment: number): void {
    // unknown part kinds over the whole record, in record order (as a fresh replay counts them)
    const unknown = new Map<string, number>();
    for (const json of this.q.unknownOfRun.iterate(ex.run_key) as IterableIterator<string>) {
      for (const pk of JSON.parse(json) as string[]) unknown.set(pk, (unknown.get(pk) ?? 0) + 1);
    }
    this.q.updateRunRecord.run(completeCount, maxSeq, length, segment, JSON.stringify(skipped), JSON.stringify([...unknown]), encodeLengths(lengths), ex.run_key);
  }

  /** Stores one replayed message and adds it to the segment; returns its document length. */
  private insertRow(runKey: number, pos: number, row: MessageRow, builder: SegmentBuilder): number {
    const [loose, strict, kind, timestamp, firstSeq, firstStep, unknown, roles, fields, text] = row;
    const length = builder.addDocument(pos, text);
    this.q.insertMessage.run(runKey, pos, loose, strict, kind, timestamp, firstSeq, firstStep, length, unknown, roles, fields);
    return length;
  }

  /**
   * Recomputes cross-run attribution (spec §3.4) for every run from corpus position `fromOrd` on:
   * a run's section starts after the leading prefix of its record that earlier runs already hold,
   * store-wide and within its conversation.
   */
  private attribute(fromOrd: number): void {
    const affected = this.q.runsByOrd.all(fromOrd) as Array<{ run_key: number; conversation_id: string | null; ord: number }>;
    const useLookups = affected.length <= LOOKUP_ATTRIBUTION_LIMIT;
    const all = new Set<string>();
    const byConv = new Map<string, Set<string>>();
    if (!useLookups) {
      for (const r of this.q.claimedBefore.iterate(fromOrd) as IterableIterator<{ key: string; conv: string | null }>) {
        all.add(r.key);
        if (r.conv !== null) (byConv.get(r.conv) ?? byConv.set(r.conv, new Set()).get(r.conv)!).add(r.key);
      }
    }
    for (const run of affected) {
      const rows = this.q.attributionRows.all(run.run_key) as Array<{ strict_key: string; dl: number }>;
      const conv = run.conversation_id;
      const convSet = conv === null ? null : (byConv.get(conv) ?? byConv.set(conv, new Set()).get(conv)!);
      const claimedAll = useLookups ? (k: string) => this.q.claimedAll.get(k, run.ord) !== undefined : (k: string) => all.has(k);
      const claimedConv = useLookups
        ? (k: string) => conv !== null && this.q.claimedConv.get(k, run.ord, conv) !== undefined
        : (k: string) => convSet !== null && convSet.has(k);
      let startAll = 0;
      while (startAll < rows.length && claimedAll(rows[startAll]!.strict_key)) startAll++;
      let startConv = 0;
      while (startConv < rows.length && claimedConv(rows[startConv]!.strict_key)) startConv++;
      let dlFull = 0;
      let dlAll = 0;
      let dlConv = 0;
      rows.forEach((r, pos) => {
        dlFull += r.dl;
        if (pos >= startAll) dlAll += r.dl;
        if (pos >= startConv) dlConv += r.dl;
        if (!useLookups) {
          all.add(r.strict_key);
          convSet?.add(r.strict_key);
        }
      });
      this.q.updateAttribution.run(startAll, startConv, dlFull, dlAll, dlConv, run.run_key);
    }
  }

  /**
   * What every search needs of every run, in corpus order, as one JSON row plus one blob of document
   * lengths: reading it costs a single row instead of one per run.
   */
  private writeCorpusCache(): void {
    const rows = this.db
      .prepare(
        `SELECT ${CORPUS_RUN_COLUMNS.join(', ')}, skipped != '[]' OR unknown != '[]' AS warn, lengths FROM runs ORDER BY ord`,
      )
      .raw()
      .all() as unknown[][];
    const blobs: Buffer[] = [];
    let offset = 0;
    const runs = rows.map((r) => {
      const lengths = r.pop() as Buffer;
      blobs.push(lengths);
      r.push(offset, lengths.length);
      offset += lengths.length;
      return r;
    });
    this.db.prepare('INSERT OR REPLACE INTO corpus_cache (id, runs, lengths) VALUES (1, ?, ?)').run(JSON.stringify(runs), Buffer.concat(blobs));
  }

  /** Merges every segment's live postings into one; entries of replaced or removed runs are dropped. */
  private compact(segment: number): void {
    const live = new Map((this.db.prepare('SELECT run_key, seg FROM runs').all() as Array<{ run_key: number; seg: number }>).map((r) => [r.run_key, r.seg]));
    const merged = new Map<string, Map<number, number[]>>();
    for (const row of this.db.prepare('SELECT term, seg, data FROM postings').iterate() as IterableIterator<{ term: string; seg: number; data: Buffer }>) {
      let groups = merged.get(row.term);
      decodePostings(
        row.data,
        (runKey, pos, tf) => {
          if (!groups) merged.set(row.term, (groups = new Map()));
          const g = groups.get(runKey);
          if (g) g.push(pos, tf);
          else groups.set(runKey, [pos, tf]);
        },
        (runKey) => live.get(runKey) === row.seg,
      );
    }
    this.db.exec('DELETE FROM postings');
    for (const [term, groups] of merged) this.q.insertPosting.run(term, segment, encodeGroups(groups));
    this.db.prepare('UPDATE runs SET seg = ?').run(segment);
    this.q.putMeta.run('next_segment', String(segment + 1));
  }
}
