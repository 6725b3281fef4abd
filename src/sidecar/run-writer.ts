import type { DriverRun, ReplayDriver } from '../history/driver.js';
import type { SkippedSnapshot, StoredPosition } from '../history/replay.js';
import { EMPTY_DIGEST, type RunContent } from '../store/content.js';
import type { SegmentBuilder } from './postings.js';
import { fieldsJson, onePieceJson, searchPieces, type StoredField } from './fields.js';
import { buildRun, messageRow, type MessageRow, type RunBuild } from './run-build.js';
import { ROWS_A_STATEMENT, type IndexTables, type MessageRecord, type RunRow } from './tables.js';
import { encodeLengths } from './postings.js';

const EMPTY_BLOB = Buffer.alloc(0);

/** A message row waiting to be inserted, with its fields' JSON text (one piece). */
type PendingMessage = readonly [m: Omit<MessageRecord, 'fields' | 'pieces'>, fields: string];

/** Strict keys (base64 SHA-1) as the 20-byte blob `runs.keys` holds. */
function keysBlob(keys: readonly string[]): Buffer {
  return Buffer.concat(keys.map((k) => Buffer.from(k, 'base64')));
}

/** Whether a message replayed again makes the very row the index holds for it (its `dl` follows from its fields). */
function sameRow(m: MessageRecord, r: MessageRow): boolean {
  return (
    m.loose_key === r[0] &&
    m.strict_key === r[1] &&
    m.kind === r[2] &&
    m.timestamp === r[3] &&
    m.first_seq === r[4] &&
    m.first_step === r[5] &&
    m.unknown_parts === r[6] &&
    m.roles === r[7] &&
    m.fields === JSON.stringify(r[8])
  );
}

/** The row of a run the index has not seen yet. */
export function newRunRow(runKey: number, runId: string): RunRow {
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
    seg_from: 0,
    skipped: '[]',
    unknown: '[]',
    complete_snaps: -1,
    interrupted_snaps: 0,
    last_step: null,
    // shared, never written into (finish() replaces them): a Buffer of its own costs ~400 bytes a run
    lengths: EMPTY_BLOB,
    keys: EMPTY_BLOB,
  };
}

/**
 * Writes runs' records into the index: a run resumed from its stored record, or one rebuilt from nothing
 * (replayed here through the driver, or by a build worker), its messages and its postings in a segment.
 */
export class RunWriter {
  constructor(
    private readonly t: IndexTables,
    private readonly driver: ReplayDriver,
  ) {}

  /**
   * Folds the snapshots added since the index saw the run into its stored record. The messages the
   * record had are kept up to the first whose row differs from the one stored (the replay counts every
   * message a later snapshot repeats as replaced: its later copy is the one kept, and it may carry what
   * core stamped after the first save). When none differs, the postings of those it had stay where they
   * are (its segments run from `seg_from` on): only the new messages are tokenized, into `segment`.
   * Otherwise the run's postings are written again whole, into `segment` alone. `keysBefore`: the length
   * of the record it had when only messages were appended to it (its keys then begin with the ones it
   * had: attribution.ts appendedOnly), else null.
   */
  resume(run: DriverRun, row: RunRow, builder: SegmentBuilder, segment: number): { snapshotsRead: number; keysBefore: number | null } {
    const stored = [...this.t.messages(row.run_key, 0, row.len)];
    const positions = stored.map(
      (p): StoredPosition => ({ keys: { loose: p.loose_key, strict: p.strict_key }, firstSeq: p.first_seq, firstStep: p.first_step }),
    );
    const { replayer, maxSeq } = this.driver.replay(run, { positions, afterSeq: row.complete_max_seq });
    const replayed = replayer.freshMessages().map((m) => messageRow(m));
    let same = 0;
    for (let at = replayer.firstChanged; at < stored.length && same < replayed.length && sameRow(stored[at]!, replayed[same]!); at++)
      same++;
    const from = replayer.firstChanged + same;
    const fresh = replayed.slice(same);
    this.t.deleteMessages(row.run_key, from);
    builder.beginRun(row.run_key);
    const kept = stored.slice(0, from);
    const appended = from === stored.length;
    if (!appended) for (const m of kept) builder.addDocument(m.pos, searchPieces(JSON.parse(m.fields) as StoredField[]));
    const lengths = kept.map((m) => m.dl).concat(fresh.map((r, i) => this.insertMessage(row.run_key, from + i, r, builder)));
    const skipped = (JSON.parse(row.skipped) as SkippedSnapshot[]).concat(replayer.skipped);
    const unknown = kept.map((m) => m.unknown_parts).concat(fresh.map((r) => r[6]));
    const keys = kept.map((m) => m.strict_key).concat(fresh.map((r) => r[1]));
    this.finish(
      row,
      row.complete_count + replayer.snapshotsRead,
      maxSeq,
      skipped,
      lengths,
      unknown,
      keys,
      segment,
      appended ? row.seg_from : segment,
    );
    return { snapshotsRead: replayer.snapshotsRead, keysBefore: appended ? stored.length : null };
  }

  /**
   * Writes a run rebuilt from nothing (snapshots pruned or rewritten, or a new run); returns the
   * snapshots read, and with `digest` the run's content as its replay digested it (recorded in its row).
   */
  rebuild(
    run: DriverRun,
    row: RunRow,
    builder: SegmentBuilder,
    segment: number,
    prefetched: RunBuild | null,
    digest = false,
  ): { snapshotsRead: number; content?: RunContent } {
    let build = prefetched;
    if (build) this.driver.skip(run);
    else build = buildRun(this.driver, run, digest);
    const c = build.content;
    if (c) Object.assign(row, { snap_count: c.count, snap_max_seq: c.maxSeq, content: c.digest });
    // counted from the rows the digest read (a replay that digests counts them: store/content.ts RowStats)
    if (c?.stats)
      Object.assign(row, { complete_snaps: c.stats.complete, interrupted_snaps: c.stats.interrupted, last_step: c.stats.lastStep });
    // a run new to the index (a build's every run) has no messages to delete: two statements a run saved
    if (row.len > 0) this.t.deleteMessages(row.run_key, 0);
    builder.beginRun(row.run_key);
    const pending: PendingMessage[] = [];
    const lengths = build.rows.map((r, pos) => this.insertMessage(row.run_key, pos, r, builder, pending));
    this.t.putMessages(pending);
    this.finish(
      row,
      build.completeCount,
      build.maxSeq,
      build.skipped,
      lengths,
      build.rows.map((r) => r[6]),
      build.rows.map((r) => r[1]),
      segment,
      segment,
    );
    return { snapshotsRead: build.snapshotsRead, ...(c ? { content: c } : {}) };
  }

  /** The run's record counts, watermark and warnings, once its messages are stored. */
  private finish(
    row: RunRow,
    completeCount: number,
    maxSeq: number,
    skipped: SkippedSnapshot[],
    lengths: number[],
    unknownParts: ReadonlyArray<string | null>,
    keys: readonly string[],
    segment: number,
    segmentFrom: number,
  ): void {
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
      seg_from: segmentFrom,
      skipped: JSON.stringify(skipped),
      unknown: JSON.stringify([...unknown]),
      lengths: encodeLengths(lengths),
      keys: keysBlob(keys),
    });
    this.t.putRun(row);
    // written: the blobs are not needed again before attribution reads them back
    row.lengths = row.keys = EMPTY_BLOB;
  }

  /**
   * Stores one replayed message and adds it to the segment; returns its document length. With `pending`,
   * a message whose fields are one piece waits there to be inserted with others (in order: any other
   * message inserts those first), at most a statement's worth.
   */
  private insertMessage(runKey: number, pos: number, r: MessageRow, builder: SegmentBuilder, pending?: PendingMessage[]): number {
    const [loose, strict, kind, timestamp, firstSeq, firstStep, unknown, roles, fields, json] = r;
    const dl = builder.addDocument(pos, searchPieces(fields));
    const m: Omit<MessageRecord, 'fields' | 'pieces'> = {
      run_key: runKey,
      pos,
      loose_key: loose,
      strict_key: strict,
      kind,
      timestamp,
      first_seq: firstSeq,
      first_step: firstStep,
      dl,
      unknown_parts: unknown,
      roles,
    };
    const whole = typeof json === 'string' ? json : onePieceJson(fields);
    if (pending !== undefined && whole !== null) {
      if (pending.push([m, whole]) === ROWS_A_STATEMENT) this.t.putMessages(pending.splice(0));
      return dl;
    }
    if (pending !== undefined && pending.length > 0) this.t.putMessages(pending.splice(0));
    this.t.putMessage(m, whole !== null ? [whole] : fieldsJson(fields));
    return dl;
  }
}
