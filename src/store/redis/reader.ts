/**
 * A RedisStepStore key space (spec backends.md §3), read with read commands only and never `SREM`.
 *
 * The key space's index is read once, on the driver thread (view.ts), in two parts: the listing (run
 * sets, then every run record and seq counter), asked for as the reader opens and taken at the first
 * call that needs it; and the indexes (every run's snapshot index, then how many indexed payloads
 * exist), read only when the snapshots are wanted or the stamp cannot be proved without them (stamp()).
 * That is the reader's view. Payloads are read later, per run, in seq order (`MGET` in pages). Redis offers no snapshot
 * across keys: a payload gone since the view (pruned, expired) is skipped with a `vanished-snapshot`
 * notice, one written since is not seen. A run's keys share a hash slot, so each command touches one.
 *
 * Media: RedisStepStore keeps payloads inline by default; the reader is not told of any media store,
 * so `media()` has none.
 */
import { StoreError } from '../errors.js';
import { SeamDefaults } from '../reader-defaults.js';
import { Notices, unreadable, type StoreNotice } from '../notices.js';
import { headStep, MessagesHint } from '../payload.js';
import { redisSnapshot, runFromJson, type SnapshotState } from '../records.js';
import { orderRuns, type RunFields } from '../run-order.js';
import type { RunSnapshotStats, SnapshotMark, SnapshotStateCounts, StoreReader, StoreRun, StoreSnapshot } from '../reader.js';
import { redisTarget } from '../server-url.js';
import { READ_AHEAD_DEPTH, ReadAhead } from '../read-ahead.js';
import { SyncBridge } from '../sync-bridge.js';
import { DRIVERS } from '../drivers.js';
import type { PipelineRequest, RedisConnection } from './driver.js';
import type { RedisReply } from './reply.js';
import {
  existing,
  existsCommands,
  listedRuns,
  parseMember,
  probeKeys,
  type ProbeRequest,
  payloadKey,
  runKey,
  type IndexesReply,
  type ListingReply,
  type ViewRequest,
} from './view.js';
import { redisContent } from './content.js';
import type { RunCut, StoreContent } from '../content.js';

/** Payloads per MGET: adapted so that one page holds about this many characters. */
const PAGE_CHARS = 16 << 20;
const FIRST_PAGE_KEYS = 32;
const MAX_PAGE_KEYS = 256;
/** Enough of a payload to hold `step_index` (second member in both layouts). */
const HEAD_BYTES = 511;

/** An index entry; its payload's key is made when it is read (payloadKey). */
interface Entry {
  readonly seq: number;
  readonly state: SnapshotState;
}

interface RunView {
  readonly run: StoreRun;
  /** Index entries in seq order. */
  readonly entries: Entry[];
}

/** The run list, from the listing part of the view (view.ts). */
interface Listing {
  readonly runs: StoreRun[];
  /** Index of each run in `runs`. */
  readonly position: Map<string, number>;
  /** Each run's seq counter as read (null: none), when the run's record is under its own id. */
  readonly counters: Map<string, RedisReply>;
  /** A record under another run's key (its run's index is read, but its counter is not). */
  readonly strays: boolean;
  readonly digest: string;
  /** Parsing it told nothing (no record gone, repeated, or read leniently): see stamp(). */
  readonly quiet: boolean;
}

/** Every run's entries, from the indexes part of the view. */
interface Indexed {
  readonly byId: Map<string, RunView>;
  readonly digest: string;
  /**
   * What proves the indexes unchanged while the listing is (see stamp()): per run, in the order of the
   * listing's members (view.ts listedRuns), its first and last seq (`f:l`, '' when it has none), joined by `,`;
   * null when the view was not settled.
   */
  readonly probe: string | null;
}

/**
 * The stamp's layout: `r3.<listing digest>.<indexes digest>[.<probe>[.q]]` (digests in base64: no `.`);
 * `q`: parsing that listing told nothing. (r2's probe followed corpus order, which only the parsed
 * listing gives.)
 */
const STAMP = 'r3';
const QUIET = 'q';
/** The layout before r3 (its probe in corpus order): a stamp an index recorded so still vouches, checked as it was. */
const STAMP_R2 = 'r2';

const isText = (r: RedisReply): r is string => typeof r === 'string';

/** A recorded stamp that may vouch without the indexes: its layout, listing digest and probe, and `.q`. */
interface RecordedStamp {
  readonly r2: boolean;
  readonly listing: string;
  readonly probe: string;
  readonly quiet: boolean;
}

/** `recorded` read as an r3 stamp with a probe (`.q` or not) or an r2 one; null for any other (no probe: it cannot vouch). */
function recordedStamp(recorded: string | null | undefined): RecordedStamp | null {
  const parts = recorded?.split('.') ?? [];
  const quiet = parts.length === 5 && parts[4] === QUIET;
  const r3 = parts[0] === STAMP && (parts.length === 4 || quiet);
  const r2 = parts[0] === STAMP_R2 && parts.length === 4;
  return r3 || r2 ? { r2, listing: parts[1]!, probe: parts[3]!, quiet } : null;
}

export class RedisStoreReader extends SeamDefaults implements StoreReader {
  readonly label: string;
  readonly identity: string;
  private readonly prefix: string;
  private readonly bridge: SyncBridge;
  private readonly notes = new Notices();
  private raw: ListingReply | null = null;
  private listed: Listing | null = null;
  private indexedView: Indexed | null = null;
  /** noteRuns() was called: notices() tells what listing the runs tells (see there). */
  private runsNoted = false;
  /** The listing is one a stamp vouched for as quiet: parsing it would tell nothing (see stamp()). */
  private quietVouched = false;
  /** The probe of a recorded stamp, asked of the driver thread ahead (stampAhead), and its reply's ticket. */
  private probeAhead: { readonly probe: string; readonly ticket: number } | null = null;
  /** The listing, asked for as the reader opens: read on the driver thread while this one goes on. */
  private readonly listingTicket: number;
  /** Probes of recorded stamps, answered (see stamp()). */
  private readonly probed = new Map<string, boolean>();
  private readonly ahead: ReadAhead;
  private readonly hint = new MessagesHint();
  private steps: Map<string, number | null> | null = null;
  private counts: Map<string, SnapshotStateCounts> | null = null;

  constructor(target: string) {
    super();
    const t = redisTarget(target);
    this.label = t.label;
    this.identity = t.identity;
    this.prefix = t.prefix;
    const connection: RedisConnection = {
      host: t.host,
      port: t.port,
      db: t.db,
      username: t.username,
      password: t.password,
      tls: t.tls,
      timeoutSeconds: t.timeoutSeconds,
    };
    this.bridge = new SyncBridge(DRIVERS.redis, connection, t.label);
    const request: ViewRequest = { op: 'view', part: 'listing', prefix: this.prefix };
    this.listingTicket = this.bridge.post(request);
    this.ahead = new ReadAhead(this.bridge);
  }

  private pipeline(commands: string[][]): RedisReply[] {
    if (commands.length === 0) return [];
    // the listing was asked for first: its reply is taken before any other (a later call would drop it)
    this.rawListing();
    const request: PipelineRequest = { op: 'pipeline', commands };
    return this.bridge.call<RedisReply[]>(request);
  }

  private keyOf(runId: string, e: Entry): string {
    return payloadKey(this.prefix, runId, e.seq);
  }

  /** The listing's reply as it came (members, records and counters as text, their digest): nothing parsed. */
  private rawListing(): ListingReply {
    return (this.raw ??= this.bridge.take<ListingReply>(this.listingTicket));
  }

  private listing(): Listing {
    return (this.listed ??= this.readListing());
  }

  private view(): Indexed {
    return (this.indexedView ??= this.readIndexes());
  }

  private readListing(): Listing {
    const raw = this.rawListing();
    const told = this.notes.notices().length;
    for (const m of raw.members) {
      // upstream's decode raises out of list_runs here
      if (!isText(m)) throw new StoreError(`${this.label}: a run set member is not valid UTF-8`);
    }
    const records = new Map<string, RunFields>();
    const counters = new Map<string, RedisReply>();
    let strays = false;
    (raw.members as string[]).forEach((id, i) => {
      const text = raw.records[i]!;
      if (text === null) {
        // expired under a TTL while the set (which has none) kept the id; upstream SREMs it
        this.notes.add('vanished-run', id, null, 'run set member whose run record has gone: skipped');
        return;
      }
      const fields = runFromJson(isText(text) ? text : null, `${this.label}: ${runKey(this.prefix, id)}`);
      if (records.has(fields.runId)) {
        this.notes.add('duplicate-run', fields.runId, null, `${runKey(this.prefix, id)} repeats run id ${fields.runId}: ignored`);
        return;
      }
      // snapshots live under the record's run id (upstream reads them so); usually the member itself
      records.set(fields.runId, fields);
      if (fields.runId === id) counters.set(id, raw.counters[i]!);
      else strays = true;
    });
    const runs = orderRuns([...records.values()], this.label, this.notes);
    return {
      runs,
      position: new Map(runs.map((run, i) => [run.runId, i])),
      counters,
      strays,
      digest: raw.digest,
      quiet: this.notes.notices().length === told,
    };
  }

  private readIndexes(): Indexed {
    const listing = this.listing();
    const runIds = listing.runs.map((r) => r.runId);
    const request: ViewRequest = { op: 'view', part: 'indexes', prefix: this.prefix, runIds };
    const raw = this.bridge.call<IndexesReply>(request);
    const byId = new Map<string, RunView>();
    let settled = !listing.strays;
    let total = 0;
    listing.runs.forEach((run, i) => {
      const index = raw.indexes[i]!;
      const entries = this.entries(run.runId, index);
      byId.set(run.runId, { run, entries });
      total += entries.length;
      const last = entries[entries.length - 1];
      // every member read, and the run's last save (its INCR) is the last member: no save half done
      const counter = listing.counters.get(run.runId);
      settled &&= entries.length === index.length && (last === undefined ? counter === null : counter === String(last.seq));
    });
    // and every indexed payload there: none pruned or expired under a member still listed
    settled &&= raw.present === total;
    const probe = (): string =>
      listedRuns(this.rawListing())
        .map((id) => {
          const entries = byId.get(id)!.entries;
          return entries.length === 0 ? '' : `${entries[0]!.seq}:${entries[entries.length - 1]!.seq}`;
        })
        .join(',');
    return { byId, digest: raw.digest, probe: settled ? probe() : null };
  }

  /**
   * Whether the indexes are as when `probe` was taken, the listing (records, seq counters) being the
   * same: every run's first and last indexed payload still exist (one EXISTS of two keys a run).
   */
  private probe(probe: string, quiet: boolean, r2 = false): boolean {
    const cached = `${r2 ? STAMP_R2 : STAMP}.${probe}`;
    let known = this.probed.get(cached);
    if (known !== undefined) return known;
    const ahead = this.probeAhead;
    if (!r2 && ahead !== null && ahead.probe === probe && this.bridge.pending(ahead.ticket)) {
      // asked right after the listing (stampAhead): answered by now, or soon
      if (!quiet) this.listing();
      known = this.bridge.take<boolean>(ahead.ticket);
      this.probed.set(cached, known);
      return known;
    }
    // the listing's digest is the recorded one (see stamp()): its members are text, its runs those the
    // probe was taken of, in member order (r2: in corpus order, which the parsed listing gives)
    const runs = r2 ? this.listing().runs.map((r) => r.runId) : listedRuns(this.rawListing());
    const keys = probeKeys(this.prefix, runs, probe);
    known = keys !== null;
    if (keys !== null && keys.length > 0) {
      const ticket = this.bridge.post({ op: 'pipeline', commands: existsCommands(keys) } satisfies PipelineRequest);
      // while the server answers: the runs, which nearly every command asks for next (or their notices)
      if (!quiet) this.listing();
      known = existing(this.bridge.take<RedisReply[]>(ticket)) === keys.length;
    }
    this.probed.set(cached, known);
    return known;
  }

  /** Per run, its indexed payloads that exist, per state: asked for by the listings only (one pipeline). */
  private existing(): Map<string, SnapshotStateCounts> {
    return (this.counts ??= this.existingOf([...this.view().byId.values()]));
  }

  /** Per run of `views`, its indexed snapshots by state whose payload still exists (one EXISTS per run and state). */
  private existingOf(views: readonly RunView[]): Map<string, SnapshotStateCounts> {
    const jobs: Array<{ runId: string; state: SnapshotState; keys: string[] }> = [];
    for (const v of views) {
      for (const state of ['complete', 'interrupted'] as const) {
        const keys = v.entries.filter((x) => x.state === state).map((x) => this.keyOf(v.run.runId, x));
        if (keys.length > 0) jobs.push({ runId: v.run.runId, state, keys });
      }
    }
    const found = new Map<string, number>();
    this.pipeline(jobs.map((j) => ['EXISTS', ...j.keys])).forEach((n, k) => {
      found.set(`${jobs[k]!.state}:${jobs[k]!.runId}`, n as number);
    });
    const out = new Map<string, SnapshotStateCounts>();
    for (const v of views) {
      const runId = v.run.runId;
      out.set(runId, { complete: found.get(`complete:${runId}`) ?? 0, interrupted: found.get(`interrupted:${runId}`) ?? 0 });
    }
    return out;
  }

  /** Upstream `_parse_member`: `<seq>:<state>` split at the last colon, seq a Python int; others skipped. */
  private entries(runId: string, index: RedisReply[]): Entry[] {
    const out: Entry[] = [];
    const seen = new Set<number>();
    for (const m of index) {
      const member = isText(m) ? parseMember(m) : null;
      if (member === null) {
        this.notes.add(
          'foreign-snapshot-entry',
          runId,
          null,
          `snapshot index member ${isText(m) ? JSON.stringify(m) : '(not UTF-8)'} is not <seq>:<state>: ignored`,
        );
        continue;
      }
      const { seq, state } = member;
      if (seen.has(seq)) {
        this.notes.add('foreign-snapshot-entry', runId, seq, `snapshot index member ${JSON.stringify(m)} repeats snapshot ${seq}: ignored`);
        continue;
      }
      seen.add(seq);
      out.push({ seq, state });
    }
    // ZRANGE orders by score (the writer's score is the seq); a hand-written score cannot reorder a run
    return out.sort((a, b) => a.seq - b.seq);
  }

  private entriesOf(runId: string): Entry[] {
    return this.view().byId.get(runId)?.entries ?? [];
  }

  private mget(runId: string, page: Entry[]): PipelineRequest {
    return { op: 'pipeline', commands: [['MGET', ...page.map((e) => this.keyOf(runId, e))]] };
  }

  /**
   * The payloads of `entries`, in order, fetched in pages; a payload gone is skipped with a notice.
   * Reading a run's complete snapshots sends the next run's first page ahead.
   */
  private *payloads(runId: string, entries: Entry[], readAhead = false): Generator<StoreSnapshot> {
    let size = FIRST_PAGE_KEYS;
    for (let i = 0; i < entries.length; ) {
      const page = entries.slice(i, i + size);
      const request = this.mget(runId, page);
      const [values] = this.ahead.fetch<RedisReply[]>(JSON.stringify(request.commands), request) as [RedisReply[]];
      if (readAhead && i === 0) this.sendNextRun(runId);
      i += page.length;
      let chars = 0;
      for (let k = 0; k < page.length; k++) {
        const e = page[k]!;
        const v = values[k]!;
        if (v === null) {
          this.notes.add('vanished-snapshot', runId, e.seq, 'snapshot payload gone since the index was read: skipped');
          continue;
        }
        if (!isText(v)) {
          yield unreadable(e.seq, 'snapshot payload is not valid UTF-8');
          continue;
        }
        chars += v.length;
        yield redisSnapshot(e.seq, v, this.hint);
      }
      size = Math.max(1, Math.min(MAX_PAGE_KEYS, Math.floor(PAGE_CHARS / Math.max(1, chars / page.length))));
    }
  }

  /** The runs after `runId` in corpus order are likely read next: their first pages go ahead. */
  private sendNextRun(runId: string): void {
    const { runs, position } = this.listing();
    const view = this.view();
    const i = position.get(runId);
    if (i === undefined) return;
    for (const next of runs.slice(i + 1, i + 1 + READ_AHEAD_DEPTH)) {
      const page = view.byId
        .get(next.runId)!
        .entries.filter((e) => e.state === 'complete')
        .slice(0, FIRST_PAGE_KEYS);
      if (page.length === 0) continue;
      const request = this.mget(next.runId, page);
      this.ahead.send(JSON.stringify(request.commands), request);
    }
  }

  runs(): StoreRun[] {
    return this.listing().runs;
  }

  runCount(): number {
    return this.listing().runs.length;
  }

  completeSnapshots(runId: string): Iterable<StoreSnapshot> {
    return this.payloads(
      runId,
      this.entriesOf(runId).filter((e) => e.state === 'complete'),
      true,
    );
  }

  completeSnapshotsAfter(runId: string, afterSeq: number): Iterable<StoreSnapshot> {
    return this.payloads(
      runId,
      this.entriesOf(runId).filter((e) => e.state === 'complete' && e.seq > afterSeq),
    );
  }

  /** Counts only payloads that still exist: what `completeSnapshots` would yield up to `seq`. */
  completeUpToSeq(runId: string, seq: number): SnapshotMark {
    const wanted = this.entriesOf(runId).filter((e) => e.state === 'complete' && e.seq <= seq);
    const exists = this.pipeline(wanted.map((e) => ['EXISTS', this.keyOf(runId, e)]));
    let count = 0;
    let maxSeq = 0;
    wanted.forEach((e, k) => {
      if (exists[k] !== 1) return;
      count++;
      maxSeq = e.seq;
    });
    return { count, maxSeq };
  }

  interruptedSnapshots(runId: string): Iterable<StoreSnapshot> {
    return this.payloads(
      runId,
      this.entriesOf(runId).filter((e) => e.state === 'interrupted'),
    );
  }

  *latestSnapshots(): Iterable<StoreSnapshot> {
    for (const run of this.listing().runs) {
      const entries = this.entriesOf(run.runId);
      const last = entries[entries.length - 1];
      if (last !== undefined) yield* this.payloads(run.runId, [last]);
    }
  }

  watermarks(): Map<string, SnapshotMark> {
    const out = new Map<string, SnapshotMark>();
    const counts = this.existing();
    for (const [runId, v] of this.view().byId) {
      const c = counts.get(runId)!;
      if (v.entries.length > 0) out.set(runId, { count: c.complete + c.interrupted, maxSeq: v.entries[v.entries.length - 1]!.seq });
    }
    return out;
  }

  countsByRun(): Map<string, SnapshotStateCounts> {
    const out = new Map<string, SnapshotStateCounts>();
    const counts = this.existing();
    for (const [runId, v] of this.view().byId) {
      if (v.entries.length > 0) out.set(runId, counts.get(runId)!);
    }
    return out;
  }

  lastSteps(): Map<string, number | null> {
    return (this.steps ??= this.stepsOf([...this.view().byId.values()]));
  }

  /** One run's countsByRun and lastSteps entries, reading only its keys (what a sync of few runs records). */
  runSnapshotStats(runId: string): RunSnapshotStats {
    const v = this.view().byId.get(runId);
    if (v === undefined) return { complete: 0, interrupted: 0, lastStep: null };
    const c = (this.counts ?? this.existingOf([v])).get(runId)!;
    return { ...c, lastStep: (this.steps ?? this.stepsOf([v])).get(runId) ?? null };
  }

  /** From the first bytes of each indexed payload of `views` (`GETRANGE`), the whole payload when they do not tell. */
  private stepsOf(views: readonly RunView[]): Map<string, number | null> {
    const all = views.flatMap((v) => v.entries.map((e) => ({ runId: v.run.runId, e })));
    const heads = this.pipeline(all.map(({ runId, e }) => ['GETRANGE', this.keyOf(runId, e), '0', String(HEAD_BYTES)]));
    const out = new Map<string, number | null>();
    const full: typeof all = [];
    all.forEach((x, k) => {
      const h = heads[k]!;
      if (!out.has(x.runId)) out.set(x.runId, null);
      if (h === '' || h === null) return; // gone
      const step = isText(h) ? headStep(h) : undefined;
      if (step === undefined) full.push(x);
      else if (step !== null) out.set(x.runId, Math.max(out.get(x.runId) ?? step, step));
    });
    const values = this.pipeline(full.map(({ runId, e }) => ['GET', this.keyOf(runId, e)]));
    full.forEach((x, k) => {
      const v = values[k]!;
      const s = isText(v) ? redisSnapshot(x.e.seq, v).stepIndex : null;
      if (typeof s === 'number') out.set(x.runId, Math.max(out.get(x.runId) ?? s, s));
    });
    return out;
  }

  media(): Buffer | null {
    return null;
  }

  /**
   * `r3.<listing>.<indexes>[.<probe>[.q]]`. The indexes cost a command a run (and an EXISTS of every payload),
   * so a recorded stamp whose listing digest is the current one (the same run sets, run records and
   * seq counters: every save INCRs its run's counter before it writes) and whose probe holds (every
   * run's first and last indexed payload still there: a prune deletes the first ones, a TTL expires them
   * first) is returned as it is, without reading the indexes. The probe is recorded only from a settled
   * view (see readIndexes), so a save caught half done is never vouched for. `.q` after the probe: parsing
   * that listing told nothing (see noteRuns).
   */
  stamp(recorded?: string | null): string {
    // proved from the listing's reply as it came: its records are parsed only when something asks for the runs
    const digest = this.rawListing().digest;
    const r = recordedStamp(recorded);
    if (this.indexedView === null && r !== null && r.listing === digest && this.probe(r.probe, r.quiet, r.r2)) {
      // the very bytes of a listing that told nothing when parsed: they tell nothing now (noteRuns)
      if (r.quiet) this.quietVouched = true;
      return recorded!;
    }
    const v = this.view();
    const listing = this.listing();
    return `${STAMP}.${listing.digest}.${v.digest}${v.probe === null ? '' : `.${v.probe}${listing.quiet ? `.${QUIET}` : ''}`}`;
  }

  /** From the payloads' raw text (content.ts): nothing parsed, so a changed store is compared quickly. */
  override content(cuts: ReadonlyMap<string, RunCut>): StoreContent {
    const { runs, digest } = this.listing();
    const v = this.view();
    const indexed = runs.map((run) => ({
      runId: run.runId,
      entries: v.byId.get(run.runId)!.entries.map((e) => ({ ...e, key: this.keyOf(run.runId, e) })),
    }));
    return redisContent(
      indexed,
      (keys) => this.pipeline([['MGET', ...keys]])[0] as RedisReply[],
      cuts,
      JSON.stringify(runs) + digest + v.digest,
    );
  }

  /** Always true: each run is read as one view (index, then payloads); Redis has nothing atomic across runs. */
  unchanged(): boolean {
    return true;
  }

  /**
   * The index recorded `recorded`: its probe is asked of the driver thread now, which answers it right after
   * the listing (the stamp is proved without a round trip of this thread's own), and an index is searched
   * meanwhile (StoreReader.stampAhead).
   */
  stampAhead(recorded: string | null): void {
    const r = recordedStamp(recorded);
    // an r2 probe follows corpus order, which only the parsed listing gives: checked here (probe())
    if (this.probeAhead !== null || r === null || r.r2) return;
    const request: ProbeRequest = { op: 'view', part: 'probe', prefix: this.prefix, digest: r.listing, probe: r.probe };
    this.probeAhead = { probe: r.probe, ticket: this.bridge.post(request) };
  }

  /**
   * What listing the runs tells (run-order.ts, and records gone or repeated), told by notices(): a search
   * answered by the index needs no runs, and the listing is parsed after its answer, not before; not at
   * all when the stamp vouched for it as quiet.
   */
  noteRuns(): void {
    this.runsNoted = true;
  }

  notices(): readonly StoreNotice[] {
    if (this.runsNoted && !this.quietVouched) this.listing();
    return this.notes.notices();
  }

  close(): void {
    this.bridge.close();
  }
}
