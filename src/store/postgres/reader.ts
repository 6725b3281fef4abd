/**
 * A PostgresStepStore database (spec backends.md §4), read through one `REPEATABLE READ READ ONLY`
 * transaction held from the first query to `close()`: every call of a command sees the same committed
 * state, whatever a live writer commits meanwhile, and media committed before a visible snapshot is
 * visible too. Tables are `{table}_runs`, `{table}_snapshots`, `{table}_media` (optional), resolved
 * through the connection's `search_path` like upstream's unqualified names. Nothing but `SELECT`.
 */
import { hash } from 'node:crypto';
import { StoreError } from '../errors.js';
import { SeamDefaults } from '../reader-defaults.js';
import { Notices, type StoreNotice } from '../notices.js';
import { orderRuns, type RunFields } from '../run-order.js';
import type { RunSnapshotStats, SnapshotMark, SnapshotStateCounts, StoreReader, StoreRun, StoreSnapshot } from '../reader.js';
import { postgresTarget, type PostgresTarget } from '../server-url.js';
import { postgresDriverConfig } from './config.js';
import { READ_AHEAD_DEPTH, ReadAhead } from '../read-ahead.js';
import { SyncBridge } from '../sync-bridge.js';
import { DRIVERS } from '../drivers.js';
import type { SelectRequest } from './driver.js';
import { postgresContent, type Tables } from './content.js';
import type { RunCut, StoreContent } from '../content.js';

/** Snapshot rows per round trip: adapted so that one page holds about this many bytes of messages. */
const PAGE_BYTES = 16 << 20;
const FIRST_PAGE_ROWS = 64;
const MAX_PAGE_ROWS = 1000;

type Row = unknown[];

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
/** int8 and count(*) arrive as text (they may exceed 2^53 in principle). */
const num = (v: unknown): number => Number(v);

/** A started_at that, parsed at all (instant.ts), has an offset: date, time, then `Z` or `±hh:mm` (POSIX regex). */
const WITH_OFFSET = '^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2})$';

export class PostgresStoreReader extends SeamDefaults implements StoreReader {
  readonly label: string;
  readonly identity: string;
  readonly login: string;
  private readonly bridge: SyncBridge;
  /** Quoted SQL identifiers of the tables read (the media table is null when absent). */
  private readonly t: Tables;
  private readonly notes = new Notices();
  private runList: StoreRun[] | null = null;
  private position: Map<string, number> | null = null;
  private readonly ahead: ReadAhead;
  private readonly mediaCache = new Map<string, Buffer | null>();
  private stamped: string | null = null;
  /** The stamp with this transaction's signal, when `stamp` vouched for a recorded one by its rows (freshStamp). */
  private fresh: string | undefined;
  /** What proves that nothing committed since a recorded stamp (see `stamp`), taken by the transaction's first query. */
  private signal = '';

  constructor(target: string, env: NodeJS.ProcessEnv = process.env) {
    super();
    const t = postgresTarget(target, env);
    this.label = t.label;
    this.identity = t.identity;
    this.login = t.login;
    this.bridge = new SyncBridge(DRIVERS.postgres, postgresDriverConfig(t, env), t.label);
    this.ahead = new ReadAhead(this.bridge);
    try {
      this.t = this.resolveTables(t);
    } catch (e) {
      this.bridge.close();
      throw e;
    }
  }

  /**
   * The tables as upstream's unquoted names resolve (through `search_path`): the prefix folded to lower
   * case, whichever upstream rule wrote them. A table spelled with exactly the given case (`"Steps_runs"`,
   * made by some other tool) is never what PostgresStepStore reads: it is named in a notice, or in the
   * refusal when the folded table is missing. The transaction's snapshot is taken here, by its first query.
   */
  private resolveTables(t: PostgresTarget): Tables {
    const runs = `${t.table}_runs`;
    const snapshots = `${t.table}_snapshots`;
    const media = t.media ?? `${t.table}_media`;
    const asGiven = new Map<string, string>([
      [runs, `${t.tableAsGiven}_runs`],
      [snapshots, `${t.tableAsGiven}_snapshots`],
      [media, t.mediaAsGiven ?? `${t.tableAsGiven}_media`],
    ]);
    // validated names (letters, digits, _): safe to quote; a quoted name is looked up with its exact case
    const lookups = [...asGiven].flatMap(([folded, given]) => (given === folded ? [folded] : [folded, `"${given}"`]));
    // the transaction's first query takes its snapshot; it also reads what `stamp` compares first
    const rows = this.select(
      `SELECT x, to_regclass(x)::oid::text, txid_current_snapshot()::text, pg_postmaster_start_time()::text,
         CASE WHEN row_security_active(to_regclass(x)) THEN current_user::text END
         FROM unnest($1::text[]) AS u(x) WHERE to_regclass(x) IS NOT NULL ORDER BY x COLLATE "C"`,
      [lookups],
    );
    const found = new Set(rows.map(([x]) => x as string));
    this.signal = hash('sha256', JSON.stringify(rows), 'hex');
    const twins = [...asGiven].filter(([folded, given]) => given !== folded && found.has(`"${given}"`));
    const missing = [runs, snapshots, ...(t.media === null ? [] : [media])].filter((name) => !found.has(name));
    if (missing.length > 0) {
      const what = missing.join(' and ');
      const hint = twins.length
        ? `; ${twins.map(([, given]) => `"${given}"`).join(', ')} exist with exactly that case, which PostgresStepStore never reads (it names its tables unquoted, so Postgres folds them to lower case)`
        : t.media !== null && missing.includes(media)
          ? ' (the ?media= table)'
          : ' (not a PostgresStepStore database, or another ?table= prefix)';
      throw new StoreError(`${this.label}: no ${what} table${hint}`);
    }
    for (const [folded, given] of twins) {
      this.notes.add('case-twin-table', null, null, `"${given}" is not read: PostgresStepStore's unquoted names resolve to ${folded}`);
    }
    const quoted = (name: string): string => `"${name}"`;
    return { runs: quoted(runs), snapshots: quoted(snapshots), media: found.has(media) ? quoted(media) : null };
  }

  private select(sql: string, values?: readonly unknown[]): Row[] {
    const request: SelectRequest = { op: 'select', text: sql, values };
    return this.bridge.call<Row[]>(request);
  }

  runs(): StoreRun[] {
    if (this.runList) return this.runList;
    // one JSON text, not a row per run: one value to decode and hand across threads, where 1,860 rows of six
    // values cost the driver thread as much as its start (callgrind); JSON keeps each text exactly and says
    // a column's type as the rows did (a string is a string, NULL is null); of metadata only its JSON type
    // comes back ('string' for text): no listing shows it, and a harness's metadata may be large
    const [[listing]] = this.select(
      `SELECT json_agg(json_build_array(run_id, conversation_id, parent_run_id, agent_name, json_typeof(to_json(metadata)), started_at))::text FROM ${this.t.runs}`,
    ) as [[string | null]];
    const rows = (listing === null ? [] : JSON.parse(listing)) as Row[];
    const fields: RunFields[] = rows.map(([runId, conversationId, parentRunId, agentName, metadataType, startedAt]) => {
      // the columns are TEXT (NOT NULL where upstream says so); a changed schema is a bad record
      if (typeof runId !== 'string' || typeof startedAt !== 'string' || metadataType !== 'string') {
        throw new StoreError(`${this.label}: ${this.t.runs} row has wrong types (run_id ${JSON.stringify(String(runId))})`);
      }
      return { runId, conversationId: text(conversationId), parentRunId: text(parentRunId), agentName: text(agentName), startedAt };
    });
    this.runList = orderRuns(fields, this.label, this.notes);
    this.position = new Map(this.runList.map((run, i) => [run.runId, i]));
    return this.runList;
  }

  /**
   * What runs() would tell (run-order.ts: a notice for each naive started_at when others have an offset),
   * without the listing when one count shows it would tell nothing: every started_at is a date-time with
   * an explicit offset (or Z), the form the harness writes. Otherwise the runs are listed. (A started_at
   * of that form that fails to parse fails runs(): on a store the index vouches for, it parsed when read.)
   */
  noteRuns(): void {
    if (this.runList !== null) return;
    const [[others]] = this.select(`SELECT count(*) FILTER (WHERE started_at IS NULL OR started_at !~ $1) FROM ${this.t.runs}`, [
      WITH_OFFSET,
    ]) as [[string | number]];
    if (Number(others) > 0) this.runs();
  }

  /** From the listing: every command that counts the runs lists them too, so one query (and one scan) serves both. */
  runCount(): number {
    return this.runs().length;
  }

  private pageRequest(runId: string, state: 'complete' | 'interrupted', afterSeq: number, limit: number): SelectRequest {
    return {
      op: 'select',
      text: `SELECT seq, step_index, timestamp, messages FROM ${this.t.snapshots} WHERE run_id = $1 AND state = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
      values: [runId, state, afterSeq, limit],
    };
  }

  /**
   * A run's snapshots of one state after `afterSeq`, in seq order, fetched in pages (keyset, same
   * snapshot). Reading a run's complete snapshots sends the next run's first page ahead.
   */
  private *pages(runId: string, state: 'complete' | 'interrupted', afterSeq: number): Generator<StoreSnapshot> {
    let limit = FIRST_PAGE_ROWS;
    let after = afterSeq;
    for (let first = true; ; first = false) {
      const request = this.pageRequest(runId, state, after, limit);
      const rows = this.ahead.fetch<Row[]>(JSON.stringify(request.values), request);
      if (first && state === 'complete' && afterSeq < 0) this.sendNextRun(runId);
      let bytes = 0;
      for (const [seq, stepIndex, timestamp, messages] of rows) {
        after = num(seq);
        bytes += typeof messages === 'string' ? messages.length : 0;
        yield { seq: after, stepIndex, timestamp, messages };
      }
      if (rows.length < limit) return;
      limit = Math.max(1, Math.min(MAX_PAGE_ROWS, Math.floor(PAGE_BYTES / Math.max(1, bytes / rows.length))));
    }
  }

  /** Once the runs are listed (a pass over many of them), the runs after `runId` are likely read next. */
  private sendNextRun(runId: string): void {
    const i = this.position?.get(runId);
    if (i === undefined) return;
    for (const next of this.runList!.slice(i + 1, i + 1 + READ_AHEAD_DEPTH)) {
      const request = this.pageRequest(next.runId, 'complete', -1, FIRST_PAGE_ROWS);
      this.ahead.send(JSON.stringify(request.values), request);
    }
  }

  completeSnapshots(runId: string): Iterable<StoreSnapshot> {
    return this.pages(runId, 'complete', -1);
  }

  completeSnapshotsAfter(runId: string, afterSeq: number): Iterable<StoreSnapshot> {
    return this.pages(runId, 'complete', afterSeq);
  }

  completeUpToSeq(runId: string, seq: number): SnapshotMark {
    const [row] = this.select(
      `SELECT count(*), COALESCE(max(seq), 0) FROM ${this.t.snapshots} WHERE run_id = $1 AND seq <= $2 AND state = 'complete'`,
      [runId, seq],
    );
    return { count: num(row![0]), maxSeq: num(row![1]) };
  }

  interruptedSnapshots(runId: string): Iterable<StoreSnapshot> {
    return this.pages(runId, 'interrupted', -1);
  }

  *latestSnapshots(): Iterable<StoreSnapshot> {
    // seq is store-wide (bigserial): each run's highest
    const rows = this.select(
      `SELECT seq, step_index, timestamp, messages FROM ${this.t.snapshots} WHERE seq IN (SELECT max(seq) FROM ${this.t.snapshots} GROUP BY run_id)`,
    );
    for (const [seq, stepIndex, timestamp, messages] of rows) yield { seq: num(seq), stepIndex, timestamp, messages };
  }

  watermarks(): Map<string, SnapshotMark> {
    const out = new Map<string, SnapshotMark>();
    for (const [runId, count, maxSeq] of this.select(`SELECT run_id, count(*), max(seq) FROM ${this.t.snapshots} GROUP BY run_id`)) {
      out.set(runId as string, { count: num(count), maxSeq: num(maxSeq) });
    }
    return out;
  }

  countsByRun(): Map<string, SnapshotStateCounts> {
    const out = new Map<string, SnapshotStateCounts>();
    const rows = this.select(
      `SELECT run_id, count(*) FILTER (WHERE state = 'complete'), count(*) FILTER (WHERE state = 'interrupted') FROM ${this.t.snapshots} GROUP BY run_id`,
    );
    for (const [runId, complete, interrupted] of rows) out.set(runId as string, { complete: num(complete), interrupted: num(interrupted) });
    return out;
  }

  lastSteps(): Map<string, number | null> {
    const out = new Map<string, number | null>();
    for (const [runId, step] of this.select(`SELECT run_id, max(step_index) FROM ${this.t.snapshots} GROUP BY run_id`)) {
      out.set(runId as string, typeof step === 'number' ? step : null);
    }
    return out;
  }

  /** countsByRun and lastSteps of one run, through the run's rows only (what a sync of few runs records). */
  runSnapshotStats(runId: string): RunSnapshotStats {
    const [[complete, interrupted, step]] = this.select(
      `SELECT count(*) FILTER (WHERE state = 'complete'), count(*) FILTER (WHERE state = 'interrupted'), max(step_index) FROM ${this.t.snapshots} WHERE run_id = $1`,
      [runId],
    ) as [Row];
    return { complete: num(complete), interrupted: num(interrupted), lastStep: typeof step === 'number' ? step : null };
  }

  /** `PostgresMediaStore('{table}_media')`: `sha256` (bare hex) → `bytes`. */
  media(sha256: string): Buffer | null {
    if (this.t.media === null) return null;
    let hit = this.mediaCache.get(sha256);
    if (hit === undefined) {
      const [row] = this.select(`SELECT bytes FROM ${this.t.media} WHERE sha256 = $1`, [sha256]);
      const b = row?.[0];
      hit = b instanceof Uint8Array ? Buffer.from(b.buffer, b.byteOffset, b.byteLength) : null;
      this.mediaCache.set(sha256, hit);
    }
    return hit;
  }

  /**
   * The stamp: `pg2:<signal>:<rows>`. The signal proves nothing committed since a recorded stamp: the
   * transaction's snapshot (`txid_current_snapshot`: the next transaction id and those in progress; every
   * insert, update, delete, truncate or DDL, anywhere on the server, commits a transaction and moves it,
   * and two equal snapshots see the same committed rows), the server's start (a restore, a failover or
   * another server at the address starts anew), the role where row security filters what it sees (so that
   * roles that see the same rows share one stamp) and the tables' oids (another
   * `search_path`, a table dropped and made again). `recorded` is returned as it is when its signal is
   * this one: nothing else is queried. Otherwise `rows`, as before the signal: see `rowStamp`.
   */
  stamp(recorded?: string | null): string {
    const head = `pg2:${this.signal}:`;
    if (recorded?.startsWith(head)) return recorded;
    const rows = this.rowStamp();
    // a commit elsewhere on the server (another database, an ANALYZE) moved the signal, not these rows:
    // the recorded stamp stands, and the one with this signal is offered to the index (freshStamp)
    if (recorded?.startsWith('pg2:') && recorded.slice(head.length) === rows) {
      this.fresh = head + rows;
      return recorded;
    }
    return head + rows;
  }

  freshStamp(): string | undefined {
    return this.fresh;
  }

  /**
   * One query, in the command's transaction (so it names exactly the state every later query reads).
   * Per table: the row count and a sum of a 64-bit hash of each row's key and `xmin` (the transaction
   * that wrote that row version): any insert, delete or update, of any column, changes it (an update
   * writes a new row version with a new `xmin`). Plus the last snapshot `seq` and a digest of the run
   * rows' listed fields. Scans the tables' main heaps, never their TOAST (the messages); a `VACUUM
   * FREEZE` may change it once, which costs a content check, never a wrong answer.
   */
  private rowStamp(): string {
    if (this.stamped !== null) return this.stamped;
    const rowSum = (table: string, key: string): string =>
      `(SELECT count(*) || ':' || COALESCE(sum(hashtextextended(${key}::text || ':' || xmin::text, 0)), 0) FROM ${table})`;
    const [row] = this.select(
      `SELECT ${rowSum(this.t.snapshots, 'seq')}, (SELECT COALESCE(max(seq), 0) FROM ${this.t.snapshots}),
         ${this.t.media === null ? "'-'" : rowSum(this.t.media, 'sha256')}, ${rowSum(this.t.runs, 'run_id')},
         (SELECT md5(COALESCE(string_agg(concat_ws(',', quote_nullable(run_id), quote_nullable(conversation_id), quote_nullable(parent_run_id),
            quote_nullable(agent_name), quote_nullable(started_at)), E'\\n' ORDER BY run_id COLLATE "C"), '')) FROM ${this.t.runs})`,
    );
    this.stamped = `pg1:${row!.map(String).join(':')}`;
    return this.stamped;
  }

  /** Computed by the server (content.ts): the messages are digested where they are, not sent. */
  override content(cuts: ReadonlyMap<string, RunCut>): StoreContent {
    return postgresContent((sql, values) => this.select(sql, values), this.t, cuts, JSON.stringify(this.runs()) + this.rowStamp());
  }

  /** Always true: the transaction shows one committed state to every call. */
  unchanged(): boolean {
    return true;
  }

  notices(): readonly StoreNotice[] {
    return this.notes.notices();
  }

  close(): void {
    this.bridge.close();
  }
}
