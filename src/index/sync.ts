import { RunReplayer, type SkippedSnapshot, type StoredPosition } from '../history/replay.js';
import { ConversationSeeds } from '../history/seeds.js';
import { indexText, type ClipRule, type RenderedField } from '../render/fields.js';
import type { ParallelOptions } from '../history/threads.js';
import { MediaLookup } from '../store/media.js';
import { StoreError } from '../store/errors.js';
import type { Store } from '../store/open.js';
import { listRuns, type RunRecord } from '../store/runs.js';
import { SnapshotReader } from '../store/snapshots.js';
import { EMPTY_DIGEST, scanStore, type RunContent, type StoreContent } from './content.js';
import { IndexDamagedError } from './errors.js';
import { CORPUS_RUN_COLUMNS } from './schema.js';
import { prefetchBuilds } from './build-threads.js';
import { decodePostings, encodeGroups, encodeLengths, SegmentBuilder } from './postings.js';
import { buildRun, messageRow, type MessageRow, type RunBuild } from './run-build.js';
import { bucketOf, TERM_BUCKETS, type IndexTables, type MessageRecord, type RunRow } from './tables.js';
import { readVarints } from './varint.js';

/** Stored form of rendered fields: `[label, text, clip]` triples. */
export type StoredFields = Array<[string, string, ClipRule]>;

export function fieldsFromJson(json: string): RenderedField[] {
  return (JSON.parse(json) as StoredFields).map(([label, text, clip]) => ({ label, text, clip }));
}

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
  readonly compacted: boolean;
}

export type SyncProgress = (done: number, total: number) => void;

/** Segments beyond this are merged into one, so a query reads few rows per term. */
const MAX_SEGMENTS = 8;
/** A segment is written out once its postings reach this size: a build's memory does not grow with the store. */
const SEGMENT_BYTES = 8 * 1024 * 1024;

/** Meta values the index cannot do without (anything else missing means damage). */
export interface IndexMeta {
  readonly runCount: number;
  readonly nextSegment: number;
  readonly nextRunKey: number;
  /** All postings of runs written before it were merged into this segment (0: never compacted). */
  readonly compacted: number;
  /** Segments that may hold live postings. */
  readonly liveSegments: number;
  readonly content: string;
  readonly mediaCount: number;
  readonly mediaDigest: string;
  readonly storeStamp: string;
}

export function readIndexMeta(meta: ReadonlyMap<string, string>): IndexMeta {
  const text = (k: string): string => {
    const v = meta.get(k);
    if (v === undefined) throw new IndexDamagedError(`the index meta lacks ${k}`);
    return v;
  };
  const int = (k: string): number => {
    const n = Number(text(k));
    if (!Number.isSafeInteger(n) || n < 0) throw new IndexDamagedError(`the index meta ${k} is not a count`);
    return n;
  };
  return {
    runCount: int('run_count'),
    nextSegment: int('next_segment'),
    nextRunKey: int('next_run_key'),
    compacted: int('compacted'),
    liveSegments: int('live_segments'),
    content: text('content'),
    mediaCount: int('media_count'),
    mediaDigest: text('media_digest'),
    storeStamp: text('store_stamp'),
  };
}

/** The meta of an index that has seen nothing yet. */
export const EMPTY_META: ReadonlyArray<[string, string]> = [
  ['run_count', '0'],
  ['next_segment', '1'],
  ['next_run_key', '1'],
  ['compacted', '0'],
  ['live_segments', '0'],
  ['content', ''],
  ['media_count', '0'],
  ['media_digest', EMPTY_DIGEST],
  ['store_stamp', ''],
];

/** The segment holding a run's live postings: its own, unless a later compaction merged it. */
export const liveSegment = (seg: number, compacted: number): number => (seg > compacted ? seg : compacted);

const EMPTY_BLOB = Buffer.alloc(0);

/** Strict keys (base64 SHA-1) as the 20-byte blob `runs.keys` holds. */
function keysBlob(keys: readonly string[]): Buffer {
  return Buffer.concat(keys.map((k) => Buffer.from(k, 'base64')));
}

interface Work {
  readonly run: RunRecord;
  readonly row: RunRow;
  readonly resumed: boolean;
}

/** Brings the index up to date with the store, touching only what changed. */
export class IndexSync {
  private readonly reader: SnapshotReader;
  private readonly media: MediaLookup;
  private seeds = new ConversationSeeds();

  constructor(
    private readonly t: IndexTables,
    private readonly store: Store,
    /** Threads that may replay runs rebuilt from nothing while this one writes. */
    private readonly parallel: ParallelOptions = {},
  ) {
    this.reader = new SnapshotReader(store);
    this.media = new MediaLookup(store);
  }

  /**
   * The store's files unchanged since the index recorded their stamp: nothing is read. Otherwise every
   * row is digested (content.ts) and compared with what the index was built from: a run whose rows
   * were only appended to is resumed, any other changed run is rebuilt, and an index whose digests
   * all match is current (its new stamp is recorded).
   */
  sync(onProgress?: SyncProgress): SyncReport {
    const none = (contentChecked: boolean, content: string): SyncReport => ({ upToDate: true, contentChecked, content, runsReplayed: 0, runsResumed: 0, runsRemoved: 0, snapshotsRead: 0, compacted: false });
    const stamp = this.store.fileStamp;
    // one read transaction: meta and rows of one commit, whatever another process writes meanwhile
    this.t.begin();
    let meta: IndexMeta;
    let rows: RunRow[];
    try {
      meta = readIndexMeta(this.t.readMeta());
      if (stamp !== null && meta.storeStamp === stamp) return none(false, meta.content);
      rows = this.t.allRuns(meta.runCount);
    } finally {
      this.t.commit();
    }
    let content = this.scan(rows, meta);
    if (content.total === meta.content && stamp === null) return none(true, meta.content);
    this.t.beginImmediate(); // one writer at a time; readers keep reading the last commit
    try {
      const now = readIndexMeta(this.t.readMeta());
      if (now.content !== meta.content || now.runCount !== meta.runCount) {
        // another process updated the index while we read the store: compare with what it wrote
        meta = now;
        rows = this.t.allRuns(meta.runCount);
        content = this.scan(rows, meta);
      }
      let report = none(true, content.total);
      if (content.total !== meta.content) report = this.apply(listRuns(this.store), content, rows, meta, onProgress);
      // read in place while a writer was active, the stamp says nothing of the data: '' never matches
      this.t.putMeta('store_stamp', stamp ?? '');
      // a writer checkpointed into a store read in place: what was read may mix two states, keep none of it
      if (!this.store.unchanged()) throw new StoreError(`${this.store.path}: the store changed while it was indexed`);
      this.t.commit();
      return report;
    } catch (e) {
      if (this.t.inTransaction) this.t.rollback();
      throw e;
    }
  }

  private scan(rows: readonly RunRow[], meta: IndexMeta): StoreContent {
    return scanStore(this.store, new Map(rows.map((r) => [r.run_id, r.snap_max_seq])), meta.mediaCount);
  }

  private apply(runs: readonly RunRecord[], content: StoreContent, rows: RunRow[], meta: IndexMeta, onProgress?: SyncProgress): SyncReport {
    const indexed = new Map(rows.map((r) => [r.run_id, r]));
    const present = new Set(runs.map((r) => r.runId));
    let minAffected = Infinity;
    let runsRemoved = 0;
    for (const [id, r] of indexed) {
      if (present.has(id)) continue;
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
    const mediaSafe = (r: RunRow): boolean => mediaSame || (mediaAppended && r.skipped === '[]');

    let nextRunKey = meta.nextRunKey;
    const work: Work[] = [];
    let runCount = 0;
    runs.forEach((run, ord) => {
      const c: RunContent = content.runs.get(run.runId) ?? { count: 0, maxSeq: 0, digest: EMPTY_DIGEST, prefix: EMPTY_DIGEST };
      const ex = indexed.get(run.runId);
      const metaSame =
        ex !== undefined &&
        ex.ord === ord &&
        ex.store_rowid === run.rowid &&
        ex.conversation_id === run.conversationId &&
        ex.parent_run_id === run.parentRunId &&
        ex.agent_name === run.agentName &&
        ex.started_at === run.startedAt;
      const contentSame = ex !== undefined && ex.content === c.digest && ex.snap_count === c.count && ex.snap_max_seq === c.maxSeq && mediaSafe(ex);
      const row: RunRow = ex ?? newRunRow(nextRunKey++, run.runId);
      runCount++;
      if (metaSame && contentSame) return;
      minAffected = Math.min(minAffected, ord);
      Object.assign(row, {
        store_rowid: run.rowid,
        conversation_id: run.conversationId,
        parent_run_id: run.parentRunId,
        agent_name: run.agentName,
        started_at: run.startedAt,
        ord,
      });
      if (contentSame) {
        this.t.putRun(row);
        return;
      }
      // only rows appended since the index read the run (those it read are byte-identical): resume
      // its replay; any other change: rebuild it
      const resumed = ex !== undefined && ex.complete_count > 0 && ex.content === c.prefix && mediaSafe(ex);
      Object.assign(row, { snap_count: c.count, snap_max_seq: c.maxSeq, content: c.digest });
      work.push({ run, row, resumed });
    });

    let segment = meta.nextSegment;
    let liveSegments = meta.liveSegments;
    let builder = new SegmentBuilder();
    let runsReplayed = 0;
    let runsResumed = 0;
    let snapshotsRead = 0;
    const flush = (): void => {
      if (builder.size === 0) return;
      this.writeSegment(builder, segment);
      builder = new SegmentBuilder();
      segment++;
      liveSegments++;
    };
    const weight = (r: RunRecord): number => content.runs.get(r.runId)?.count ?? 0;
    this.seeds = new ConversationSeeds(work.map((w) => w.run.conversationId));
    const prefetched = prefetchBuilds(this.store, work.filter((w) => !w.resumed).map((w) => w.run), weight, this.parallel);
    try {
      work.forEach(({ run, row, resumed }, i) => {
        onProgress?.(i, work.length);
        if (builder.size >= SEGMENT_BYTES) flush();
        snapshotsRead += resumed ? this.resumeRun(run, row, builder, segment) : this.rebuildRun(run, row, builder, segment, prefetched?.take(run.runId) ?? null);
        if (resumed) runsResumed++;
        else runsReplayed++;
      });
    } finally {
      prefetched?.close();
    }
    onProgress?.(work.length, work.length);
    flush();

    // the rows are in the index now; what follows streams them back (a build holds no run's record longer than it takes to write it)
    indexed.clear();
    if (minAffected !== Infinity) this.attribute(runCount, minAffected);
    let compacted = meta.compacted;
    const compact = liveSegments > MAX_SEGMENTS;
    if (compact) {
      compacted = segment;
      this.compact(runCount, meta.compacted, segment++);
      liveSegments = 1;
    }
    this.writeCorpusCache(runCount, compacted);
    for (const [k, v] of [
      ['run_count', String(runCount)],
      ['next_segment', String(segment)],
      ['next_run_key', String(nextRunKey)],
      ['compacted', String(compacted)],
      ['live_segments', String(liveSegments)],
      ['content', content.total],
      ['media_count', String(content.media.count)],
      ['media_digest', content.media.digest],
    ] as const) {
      this.t.putMeta(k, v);
    }
    return { upToDate: false, contentChecked: true, content: content.total, runsReplayed, runsResumed, runsRemoved, snapshotsRead, compacted: compact };
  }

  /** Folds the snapshots added since the index saw the run into its stored record; returns the snapshots read. */
  private resumeRun(run: RunRecord, row: RunRow, builder: SegmentBuilder, segment: number): number {
    const stored = [...this.t.messages(row.run_key, 0, row.len)];
    const positions = stored.map((p): StoredPosition => ({ keys: { loose: p.loose_key, strict: p.strict_key }, firstSeq: p.first_seq, firstStep: p.first_step }));
    const replayer = new RunReplayer(run.runId, this.media, positions, this.seeds.seedFor(run.conversationId));
    let completeCount = row.complete_count;
    let maxSeq = row.complete_max_seq;
    for (const snap of this.reader.completeSnapshotsAfter(run.runId, row.complete_max_seq)) {
      replayer.add(snap);
      completeCount++;
      maxSeq = snap.seq;
    }
    this.seeds.done(run.conversationId, replayer.lastSnapshot);
    const from = replayer.firstChanged;
    this.t.deleteMessages(row.run_key, from);
    builder.beginRun(row.run_key);
    const kept = stored.slice(0, from);
    for (const m of kept) builder.addDocument(m.pos, indexText(fieldsFromJson(m.fields)));
    const fresh = replayer.freshMessages(from).map(messageRow);
    const lengths = kept.map((m) => m.dl).concat(fresh.map((r, i) => this.insertMessage(row.run_key, from + i, r, builder)));
    const skipped = (JSON.parse(row.skipped) as SkippedSnapshot[]).concat(replayer.skipped);
    const unknown = kept.map((m) => m.unknown_parts).concat(fresh.map((r) => r[6]));
    const keys = kept.map((m) => m.strict_key).concat(fresh.map((r) => r[1]));
    this.finishRun(row, completeCount, maxSeq, skipped, lengths, unknown, keys, segment);
    return replayer.snapshotsRead;
  }

  /** Writes a run rebuilt from nothing (snapshots pruned or rewritten, or a new run); returns the snapshots read. */
  private rebuildRun(run: RunRecord, row: RunRow, builder: SegmentBuilder, segment: number, prefetched: RunBuild | null): number {
    let build = prefetched;
    if (!build) {
      const replayed = buildRun(run.runId, this.reader, this.media, this.seeds.seedFor(run.conversationId));
      this.seeds.done(run.conversationId, replayed.last);
      build = replayed.build;
    } else this.seeds.done(run.conversationId, null);
    this.t.deleteMessages(row.run_key, 0);
    builder.beginRun(row.run_key);
    const lengths = build.rows.map((r, pos) => this.insertMessage(row.run_key, pos, r, builder));
    this.finishRun(row, build.completeCount, build.maxSeq, build.skipped, lengths, build.rows.map((r) => r[6]), build.rows.map((r) => r[1]), segment);
    return build.snapshotsRead;
  }

  /** The run's record counts, watermark and warnings, once its messages are stored. */
  private finishRun(row: RunRow, completeCount: number, maxSeq: number, skipped: SkippedSnapshot[], lengths: number[], unknownParts: ReadonlyArray<string | null>, keys: readonly string[], segment: number): void {
    // unknown part kinds over the whole record, in record order (as a fresh replay counts them)
    const unknown = new Map<string, number>();
    for (const json of unknownParts) {
      if (json === null) continue;
      for (const pk of JSON.parse(json) as string[]) unknown.set(pk, (unknown.get(pk) ?? 0) + 1);
    }
    Object.assign(row, {
      complete_count: completeCount,
      complete_max_seq: maxSeq,
      len: lengths.length,
      seg: segment,
      skipped: JSON.stringify(skipped),
      unknown: JSON.stringify([...unknown]),
      lengths: encodeLengths(lengths),
      keys: keysBlob(keys),
    });
    this.t.putRun(row);
    // written: the blobs are not needed again before attribution reads them back
    row.lengths = row.keys = EMPTY_BLOB;
  }

  /** Stores one replayed message and adds it to the segment; returns its document length. */
  private insertMessage(runKey: number, pos: number, r: MessageRow, builder: SegmentBuilder): number {
    const [loose, strict, kind, timestamp, firstSeq, firstStep, unknown, roles, fields, text] = r;
    const dl = builder.addDocument(pos, text);
    const m: MessageRecord = { run_key: runKey, pos, loose_key: loose, strict_key: strict, kind, timestamp, first_seq: firstSeq, first_step: firstStep, dl, unknown_parts: unknown, roles, fields };
    this.t.putMessage(m);
    return dl;
  }

  /** Writes a finished segment's postings and lists each row in its term's directory bucket. */
  private writeSegment(builder: SegmentBuilder, segment: number): void {
    const added = new Map<number, Array<[string, number]>>();
    for (const [term, data] of builder.postings()) {
      const id = this.t.insertPosting(term, segment, data);
      const b = bucketOf(term);
      const list = added.get(b);
      if (list) list.push([term, id]);
      else added.set(b, [[term, id]]);
    }
    for (const [b, list] of added) {
      const entries = this.t.bucket(b);
      for (const [term, id] of list) {
        const ids = entries.get(term);
        if (ids) ids.push(id);
        else entries.set(term, [id]);
      }
      this.t.putBucket(b, entries);
    }
  }

  /**
   * Recomputes cross-run attribution (spec §3.4) for every run from corpus position `fromOrd` on:
   * a run's section starts after the leading prefix of its record that earlier runs already hold,
   * store-wide and within its conversation. Reads the runs' key blobs in corpus order, never the
   * messages; holds one 20-byte key per message, and rewrites the rows whose values changed.
   */
  private attribute(runCount: number, fromOrd: number): void {
    const all = new Set<string>();
    const byConv = new Map<string, Set<string>>();
    const changed: Array<[number, Pick<RunRow, 'start_all' | 'start_conv' | 'dl_full' | 'dl_all' | 'dl_conv'>]> = [];
    for (const run of this.t.runsInOrder(runCount)) {
      const keys: string[] = [];
      for (let i = 0; i < run.keys.length; i += 20) keys.push(run.keys.toString('latin1', i, i + 20));
      const conv = run.conversation_id;
      const convSet = conv === null ? null : (byConv.get(conv) ?? byConv.set(conv, new Set()).get(conv)!);
      if (run.ord >= fromOrd) {
        let startAll = 0;
        while (startAll < keys.length && all.has(keys[startAll]!)) startAll++;
        let startConv = 0;
        while (convSet !== null && startConv < keys.length && convSet.has(keys[startConv]!)) startConv++;
        let dlFull = 0;
        let dlAll = 0;
        let dlConv = 0;
        readVarints(run.lengths).forEach((dl, pos) => {
          dlFull += dl;
          if (pos >= startAll) dlAll += dl;
          if (pos >= startConv) dlConv += dl;
        });
        const next = { start_all: startAll, start_conv: startConv, dl_full: dlFull, dl_all: dlAll, dl_conv: dlConv };
        if ((Object.keys(next) as Array<keyof typeof next>).some((k) => run[k] !== next[k])) changed.push([run.run_key, next]);
      }
      for (const k of keys) {
        all.add(k);
        convSet?.add(k);
      }
    }
    for (const [runKey, next] of changed) this.t.putRun(Object.assign(this.t.run(runKey), next));
  }

  /**
   * What every search needs of every run, in corpus order, as one JSON row plus one blob of document
   * lengths: reading it costs a single row instead of one per run.
   */
  private writeCorpusCache(runCount: number, compacted: number): void {
    const blobs: Buffer[] = [];
    const runs: unknown[][] = [];
    let offset = 0;
    for (const r of this.t.runsInOrder(runCount)) {
      const entry: unknown[] = CORPUS_RUN_COLUMNS.map((c) => (c === 'seg' ? liveSegment(r.seg, compacted) : r[c]));
      entry.push(r.skipped !== '[]' || r.unknown !== '[]' ? 1 : 0, offset, r.lengths.length);
      runs.push(entry);
      blobs.push(r.lengths);
      offset += r.lengths.length;
    }
    this.t.putCache(JSON.stringify(runs), Buffer.concat(blobs));
  }

  /**
   * Merges every term's live postings into one row of segment `into`, term by term (memory follows the
   * largest term, not the index); entries of replaced or removed runs are dropped.
   */
  private compact(runCount: number, compacted: number, into: number): void {
    const live = new Map<number, number>();
    for (const r of this.t.runsInOrder(runCount)) live.set(r.run_key, liveSegment(r.seg, compacted));
    for (let b = 0; b < TERM_BUCKETS; b++) {
      const entries = this.t.bucket(b);
      if (entries.size === 0) continue;
      for (const [term, ids] of [...entries]) {
        const groups = new Map<number, number[]>();
        for (const id of ids) {
          const row = this.t.posting(id, term);
          decodePostings(
            row.data,
            (runKey, pos, tf) => {
              const g = groups.get(runKey);
              if (g) g.push(pos, tf);
              else groups.set(runKey, [pos, tf]);
            },
            (runKey) => live.get(runKey) === row.seg,
          );
          this.t.deletePosting(id);
        }
        if (groups.size > 0) entries.set(term, [this.t.insertPosting(term, into, encodeGroups(groups))]);
        else entries.delete(term);
      }
      this.t.putBucket(b, entries);
    }
  }
}

function newRunRow(runKey: number, runId: string): RunRow {
  return {
    run_key: runKey,
    run_id: runId,
    store_rowid: 0,
    conversation_id: null,
    parent_run_id: null,
    agent_name: null,
    started_at: '',
    ord: 0,
    snap_count: 0,
    snap_max_seq: 0,
    content: EMPTY_DIGEST,
    complete_count: 0,
    complete_max_seq: 0,
    len: 0,
    start_all: 0,
    start_conv: 0,
    dl_full: 0,
    dl_all: 0,
    dl_conv: 0,
    seg: 0,
    skipped: '[]',
    unknown: '[]',
    lengths: Buffer.alloc(0),
    keys: Buffer.alloc(0),
  };
}
