/**
 * A writer for pydantic-ai-harness `SqliteStepStore` files, producing what the Python store writes
 * (reference-behaviour.md §1): the same DDL (copied from the Python-written stores in shared/parity),
 * `json.dumps` text for `snapshots.messages`, Python `isoformat()` times, media externalization (§1.6)
 * into a `media` table, and WAL journal mode. For fixtures, demos and benchmarks only: convsearch
 * itself never writes to a store.
 *
 * Shapes:
 * - `newest` (default): `state`, `runs.registration_id`, `events/snapshots.idempotency_key`,
 *   `snapshot_idempotency_keys` with its two triggers, `idx_events_idempotency`.
 * - `pre-idempotency`: the shape of the stores in shared/parity (has `state`, no idempotency columns).
 * - `pre-state`: the oldest shape, without `snapshots.state`.
 * `upgradedFrom` creates an older shape first and then runs the Python migrations (ALTER TABLE ...
 * ADD COLUMN), which appends the added columns at the end of the table definition.
 */

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { pyJsonDumpsAscii } from './py-json.js';
import { pydanticTime, pyIsoformat, type JsonObject, type SimResult, type TimeInput } from './messages.js';

export type SchemaShape = 'newest' | 'pre-idempotency' | 'pre-state';

const SHAPE_ORDER: SchemaShape[] = ['pre-state', 'pre-idempotency', 'newest'];

export interface StepStoreWriterOptions {
  /** Table layout to produce (default `newest`). */
  shape?: SchemaShape;
  /** Create this older shape first, then migrate to `shape` with the Python store's ALTER statements. */
  upgradedFrom?: SchemaShape;
  /**
   * Media store: `lazy` (default; the `media` table appears with the first externalized blob, as in
   * the parity stores, where small.db has none), `eager` (created up front) or `none`
   * (`media_store=None`: nothing is externalized).
   */
  media?: 'lazy' | 'eager' | 'none';
  /** Media table name (must match `[A-Za-z_][A-Za-z0-9_]*`; default `media`). */
  mediaTable?: string;
  /** Externalization threshold in bytes (default 65536). */
  thresholdBytes?: number;
  /** Delete an existing file (and its -wal/-shm) first. Without it, an existing file is an error. */
  overwrite?: boolean;
  /**
   * `PRAGMA synchronous` of the writing connection (default `OFF`). The bytes written are the same; only
   * whether each commit waits for the disk differs. The Python store keeps SQLite's `FULL`, a disk flush
   * per commit: ten times the build time of a test store, which need not outlive a power cut.
   */
  synchronous?: 'OFF' | 'NORMAL' | 'FULL';
}

export interface RunInput {
  runId: string;
  conversationId?: string | null;
  parentRunId?: string | null;
  agentName?: string | null;
  /** `json.dumps(dict)` of a str->str map (default `{}`). */
  metadata?: Record<string, string>;
  startedAt: TimeInput;
  /** Newest shape only (ignored otherwise). */
  registrationId?: string | null;
}

export interface EventInput {
  runId: string;
  kind: string;
  stepIndex: number;
  timestamp: TimeInput;
  /** Defaults come from the registered run. */
  conversationId?: string | null;
  parentRunId?: string | null;
  agentName?: string | null;
  toolCallId?: string | null;
  toolName?: string | null;
  error?: string | null;
  metadata?: Record<string, unknown>;
  /** Newest shape only. */
  idempotencyKey?: string | null;
}

export interface ToolEffectInput {
  runId: string;
  toolCallId: string;
  toolName: string;
  status: 'started' | 'completed' | 'failed';
  startedAt: TimeInput;
  endedAt?: TimeInput | null;
  idempotencyKey?: string | null;
  effectSummary?: string | null;
}

export interface SnapshotInput {
  runId: string;
  stepIndex: number;
  state?: 'complete' | 'interrupted';
  timestamp: TimeInput;
  /** The pydantic-ai message list (builders in messages.ts); externalized, then `json.dumps`'d. */
  messages: JsonObject[];
  /** Defaults come from the registered run. */
  conversationId?: string | null;
  parentRunId?: string | null;
  agentName?: string | null;
  /** Newest shape only. A key already recorded for the run makes the insert a no-op (trigger). */
  idempotencyKey?: string | null;
  /** Event rows written in the same transaction, before the snapshot (the simulator writes realistic ones). */
  events?: EventInput[];
}

/** One row of pydantic-ai-harness's conversation catalog (`SqliteConversationStore`; docs/backends.md). */
export interface ConversationInput {
  id: string;
  /** `ConversationSummary` fields over its defaults (`title`, `tags`, `outcome`, …), written as pydantic's JSON. */
  summary?: Record<string, unknown>;
  /** The `metadata` column exactly as given (any SQLite value) instead of a summary: a corrupt row. */
  rawMetadata?: unknown;
  updatedAt?: TimeInput;
  /** The catalog's own copy of the history, `json.dumps`'d (default: none). */
  messages?: JsonObject[];
}

/** Upstream's `conversations` table, created on its first write. */
export const CONVERSATIONS_DDL =
  'CREATE TABLE IF NOT EXISTS conversations (id TEXT PRIMARY KEY, revision INTEGER NOT NULL, metadata TEXT NOT NULL, ' +
  'messages TEXT NOT NULL, search_text TEXT NOT NULL, updated_at TEXT NOT NULL)';

/** A `ConversationSummary` as pydantic dumps it: every field, in declaration order, defaults filled in. */
export function conversationSummaryJson(id: string, updatedAt: TimeInput, fields: Record<string, unknown> = {}): string {
  const summary: Record<string, unknown> = {
    schema_version: 1,
    id,
    workspace: '/work/project',
    updated_at: pydanticTime(updatedAt),
    revision: 1,
    title: 'New session',
    subtitle: '',
    tags: [],
    title_source: 'fallback',
    naming_version: 0,
    named_revision: 0,
    model: null,
    outcome: 'ready',
    run_id: null,
    owner_pid: null,
    message_count: 0,
    total_tokens: 0,
    naming_tokens: 0,
  };
  // pydantic's dump_json: compact, non-ASCII kept as is (unlike json.dumps)
  return JSON.stringify({ ...summary, ...fields });
}

// ---------------------------------------------------------------------------------------------
// DDL (verbatim from the Python-written stores; newest additions per §1.2)

const RUNS_COLS = `    run_id TEXT PRIMARY KEY,
    conversation_id TEXT,
    parent_run_id TEXT,
    agent_name TEXT,
    metadata TEXT NOT NULL,
    started_at TEXT NOT NULL`;

const EVENTS_COLS = `    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    step_index INTEGER NOT NULL,
    timestamp TEXT NOT NULL,
    conversation_id TEXT,
    parent_run_id TEXT,
    agent_name TEXT,
    tool_call_id TEXT,
    tool_name TEXT,
    error TEXT,
    metadata TEXT NOT NULL`;

function snapshotCols(withState: boolean): string {
  return `    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    step_index INTEGER NOT NULL,
    conversation_id TEXT,
    parent_run_id TEXT,
    agent_name TEXT,
    timestamp TEXT NOT NULL,${withState ? "\n    state TEXT NOT NULL DEFAULT 'complete'," : ''}
    messages TEXT NOT NULL`;
}

const TOOL_EFFECTS_DDL = `CREATE TABLE IF NOT EXISTS tool_effects (
    run_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    idempotency_key TEXT,
    effect_summary TEXT,
    PRIMARY KEY (run_id, tool_call_id)
)`;

const IDEMPOTENCY_DDL = [
  `CREATE TABLE IF NOT EXISTS snapshot_idempotency_keys (
    run_id TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    PRIMARY KEY (run_id, idempotency_key)
)`,
  `CREATE UNIQUE INDEX IF NOT EXISTS idx_events_idempotency ON events(run_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
  `CREATE TRIGGER IF NOT EXISTS snapshots_idempotency_ignore
BEFORE INSERT ON snapshots
WHEN NEW.idempotency_key IS NOT NULL AND EXISTS (
    SELECT 1 FROM snapshot_idempotency_keys
    WHERE run_id = NEW.run_id AND idempotency_key = NEW.idempotency_key
)
BEGIN
    SELECT RAISE(IGNORE);
END`,
  `CREATE TRIGGER IF NOT EXISTS snapshots_idempotency_record
AFTER INSERT ON snapshots
WHEN NEW.idempotency_key IS NOT NULL
BEGIN
    INSERT OR IGNORE INTO snapshot_idempotency_keys (run_id, idempotency_key)
    VALUES (NEW.run_id, NEW.idempotency_key);
END`,
];

/** The CREATE statements for a freshly created store of the given shape, in creation order. */
export function schemaStatements(shape: SchemaShape): string[] {
  const newest = shape === 'newest';
  const withState = shape !== 'pre-state';
  return [
    `CREATE TABLE IF NOT EXISTS runs (\n${RUNS_COLS}${newest ? ',\n    registration_id TEXT' : ''}\n)`,
    'CREATE INDEX IF NOT EXISTS idx_runs_conv ON runs(conversation_id)',
    'CREATE INDEX IF NOT EXISTS idx_runs_parent ON runs(parent_run_id)',
    'CREATE INDEX IF NOT EXISTS idx_runs_started ON runs(started_at)',
    `CREATE TABLE IF NOT EXISTS events (\n${EVENTS_COLS}${newest ? ',\n    idempotency_key TEXT' : ''}\n)`,
    'CREATE INDEX IF NOT EXISTS idx_events_run ON events(run_id, seq)',
    `CREATE TABLE IF NOT EXISTS snapshots (\n${snapshotCols(withState)}${newest ? ',\n    idempotency_key TEXT' : ''}\n)`,
    'CREATE INDEX IF NOT EXISTS idx_snapshots_run ON snapshots(run_id, seq)',
    TOOL_EFFECTS_DDL,
    ...(newest ? IDEMPOTENCY_DDL : []),
  ];
}

/** The Python store's migration statements that take `from` to `to`. */
export function migrationStatements(from: SchemaShape, to: SchemaShape): string[] {
  const out: string[] = [];
  const fi = SHAPE_ORDER.indexOf(from);
  const ti = SHAPE_ORDER.indexOf(to);
  if (fi > ti) throw new RangeError(`cannot migrate from ${from} down to ${to}`);
  if (fi < 1 && ti >= 1) out.push("ALTER TABLE snapshots ADD COLUMN state TEXT NOT NULL DEFAULT 'complete'");
  if (fi < 2 && ti >= 2) {
    out.push(
      'ALTER TABLE events ADD COLUMN idempotency_key TEXT',
      'ALTER TABLE snapshots ADD COLUMN idempotency_key TEXT',
      'ALTER TABLE runs ADD COLUMN registration_id TEXT',
      ...IDEMPOTENCY_DDL,
    );
  }
  return out;
}

export function mediaTableDdl(table = 'media'): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (sha256 TEXT PRIMARY KEY, media_type TEXT, bytes BLOB NOT NULL, size_bytes INTEGER NOT NULL, metadata TEXT)`;
}

// ---------------------------------------------------------------------------------------------
// Media externalization (§1.6)

export const MEDIA_FLAG = '__harness_external_media__';
export const TEXT_FLAG = '__harness_external_text__';
export const URI_KEY = '__harness_external_uri__';
export const ESCAPED_KEYS = '__harness_external_escaped_keys__';
export const MARKER_FORMAT = '__harness_external_marker_format__';
export const RESERVED_KEYS: readonly string[] = [MEDIA_FLAG, TEXT_FLAG, URI_KEY, ESCAPED_KEYS, MARKER_FORMAT];
export const MEDIA_URI_PREFIX = 'media+sha256://';
export const DEFAULT_THRESHOLD_BYTES = 64 * 1024;

/** `str.encode('utf-8', 'surrogatepass')`: like UTF-8, but a lone surrogate becomes its 3-byte form. */
export function utf8SurrogatePass(s: string): Buffer {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 0x3f), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  return Buffer.from(out);
}

/** `bytes.decode('utf-8', 'surrogatepass')` (inverse of `utf8SurrogatePass`). */
export function decodeUtf8SurrogatePass(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; ) {
    const x = b[i]!;
    let c: number;
    if (x < 0x80) {
      c = x;
      i += 1;
    } else if (x < 0xe0) {
      c = ((x & 0x1f) << 6) | (b[i + 1]! & 0x3f);
      i += 2;
    } else if (x < 0xf0) {
      c = ((x & 0x0f) << 12) | ((b[i + 1]! & 0x3f) << 6) | (b[i + 2]! & 0x3f);
      i += 3;
    } else {
      c = ((x & 0x07) << 18) | ((b[i + 1]! & 0x3f) << 12) | ((b[i + 2]! & 0x3f) << 6) | (b[i + 3]! & 0x3f);
      i += 4;
    }
    s += String.fromCodePoint(c);
  }
  return s;
}

function isPlainObject(v: unknown): v is JsonObject {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

export type PutMedia = (bytes: Buffer, mediaType: string | null) => string;

/**
 * `externalize_media(messages_json, threshold_bytes)`: returns a new tree in which binary candidates
 * (`kind == "binary"` with string `data`) and text candidates (string `content` plus a string
 * `part_kind` or `kind == "text-content"`) of at least `thresholdBytes` bytes are replaced by markers.
 * `put` stores the bytes and returns their lowercase sha256 hex.
 */
export function externalizeMedia(tree: unknown, put: PutMedia, thresholdBytes = DEFAULT_THRESHOLD_BYTES): unknown {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!isPlainObject(node)) return node;
    if (node.kind === 'binary' && typeof node.data === 'string') {
      const bytes = Buffer.from(node.data, 'base64url');
      if (bytes.length >= thresholdBytes) {
        return marker(node, 'data', put(bytes, typeof node.media_type === 'string' ? node.media_type : null), false);
      }
    } else if (typeof node.content === 'string' && (typeof node.part_kind === 'string' || node.kind === 'text-content')) {
      const bytes = utf8SurrogatePass(node.content);
      if (bytes.length >= thresholdBytes) return marker(node, 'content', put(bytes, 'text/plain'), true);
    }
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(node)) out[k] = walk(v);
    return out;
  };
  const marker = (node: JsonObject, dropKey: string, sha: string, text: boolean): JsonObject => {
    const uri = MEDIA_URI_PREFIX + sha;
    const out: JsonObject = {};
    const escaped: JsonObject = {};
    let hasEscaped = false;
    for (const [k, v] of Object.entries(node)) {
      if (k === dropKey) continue;
      if (RESERVED_KEYS.includes(k)) {
        escaped[k] = v;
        hasEscaped = true;
        continue;
      }
      out[k] = walk(v);
    }
    out[MEDIA_FLAG] = true;
    if (text) out[TEXT_FLAG] = true;
    out[URI_KEY] = uri;
    if (!('uri' in node)) out.uri = uri;
    if (hasEscaped) {
      out[ESCAPED_KEYS] = escaped;
      out[MARKER_FORMAT] = 'escaped-keys-v1';
    }
    return out;
  };
  return walk(tree);
}

/**
 * The reverse (`restore_media`), for round-trip tests: text markers get `content` back (UTF-8,
 * surrogatepass), binary markers get `data` as **standard** base64, marker keys are dropped and
 * escaped keys restored. `get` returns the stored bytes or undefined (then this throws, like Python).
 */
export function restoreMedia(tree: unknown, get: (sha256: string) => Uint8Array | undefined): unknown {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!isPlainObject(node)) return node;
    if (node[MEDIA_FLAG] !== true) {
      const out: JsonObject = {};
      for (const [k, v] of Object.entries(node)) out[k] = walk(v);
      return out;
    }
    const uri = typeof node[URI_KEY] === 'string' ? (node[URI_KEY] as string) : (node.uri as string);
    if (typeof uri !== 'string' || !uri.startsWith(MEDIA_URI_PREFIX)) throw new Error(`not a media URI: ${String(uri)}`);
    const sha = uri.slice(MEDIA_URI_PREFIX.length);
    if (!/^[0-9a-f]{64}$/.test(sha)) throw new Error(`invalid sha256 digest in ${uri}`);
    const bytes = get(sha);
    if (!bytes) throw new Error(`media ${sha} not found`);
    const fmt = node[MARKER_FORMAT];
    const stash = node[ESCAPED_KEYS];
    let honoured: JsonObject | null = null;
    if (typeof fmt === 'string' && fmt.startsWith('escaped-keys-v')) {
      if (fmt !== 'escaped-keys-v1') throw new Error(`externalized media marker has an unsupported escaped-keys format: ${fmt}`);
      if (isPlainObject(stash) && Object.keys(stash).length > 0 && Object.keys(stash).every((k) => RESERVED_KEYS.includes(k))) {
        honoured = stash;
      }
    }
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === MEDIA_FLAG || k === TEXT_FLAG || k === URI_KEY) continue;
      if (k === 'uri' && (node[URI_KEY] === undefined || v === node[URI_KEY])) continue;
      if (honoured && (k === ESCAPED_KEYS || k === MARKER_FORMAT)) continue;
      out[k] = walk(v);
    }
    if (node[TEXT_FLAG] === true) out.content = decodeUtf8SurrogatePass(bytes);
    else out.data = Buffer.from(bytes).toString('base64');
    if (honoured) Object.assign(out, honoured);
    return out;
  };
  return walk(tree);
}

// ---------------------------------------------------------------------------------------------
// The writer

interface RunDefaults {
  conversationId: string | null;
  parentRunId: string | null;
  agentName: string | null;
}

export class StepStoreWriter {
  readonly path: string;
  readonly db: Database.Database;
  readonly shape: SchemaShape;
  readonly thresholdBytes: number;
  private readonly mediaMode: 'lazy' | 'eager' | 'none';
  private readonly mediaTable: string;
  private mediaReady = false;
  private readonly runs = new Map<string, RunDefaults>();
  private closed = false;

  constructor(path: string, options: StepStoreWriterOptions = {}) {
    this.path = path;
    this.shape = options.shape ?? 'newest';
    this.thresholdBytes = options.thresholdBytes ?? DEFAULT_THRESHOLD_BYTES;
    this.mediaMode = options.media ?? 'lazy';
    this.mediaTable = options.mediaTable ?? 'media';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(this.mediaTable)) throw new Error(`invalid media table name: ${this.mediaTable}`);
    if (existsSync(path)) {
      if (!options.overwrite) throw new Error(`refusing to write into existing file ${path}`);
      for (const p of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) rmSync(p, { force: true });
    }
    mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    // sqlite3.connect(path, isolation_level=None) + PRAGMA journal_mode=WAL, as the Python store does.
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${options.synchronous ?? 'OFF'}`);
    const start = options.upgradedFrom ?? this.shape;
    for (const sql of schemaStatements(start)) this.db.exec(sql);
    if (options.upgradedFrom) for (const sql of migrationStatements(options.upgradedFrom, this.shape)) this.db.exec(sql);
    if (this.mediaMode === 'eager') this.ensureMediaTable();
  }

  private get newest(): boolean {
    return this.shape === 'newest';
  }

  private ensureMediaTable(): void {
    if (this.mediaReady) return;
    this.db.exec(mediaTableDdl(this.mediaTable));
    this.mediaReady = true;
  }

  /** `INSERT INTO runs` (a reused run_id raises, like the Python store's IntegrityError). */
  registerRun(input: RunInput): void {
    const defaults: RunDefaults = {
      conversationId: input.conversationId ?? null,
      parentRunId: input.parentRunId ?? null,
      agentName: input.agentName ?? null,
    };
    const cols = ['run_id', 'conversation_id', 'parent_run_id', 'agent_name', 'metadata', 'started_at'];
    const vals: unknown[] = [
      input.runId,
      defaults.conversationId,
      defaults.parentRunId,
      defaults.agentName,
      pyJsonDumpsAscii(input.metadata ?? {}),
      pyIsoformat(input.startedAt),
    ];
    if (this.newest) {
      cols.push('registration_id');
      vals.push(input.registrationId ?? null);
    }
    this.db.prepare(`INSERT INTO runs (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(...vals);
    this.runs.set(input.runId, defaults);
  }

  private runDefaults(runId: string): RunDefaults {
    return this.runs.get(runId) ?? { conversationId: null, parentRunId: null, agentName: null };
  }

  appendEvent(input: EventInput): number {
    const d = this.runDefaults(input.runId);
    const cols = [
      'run_id',
      'kind',
      'step_index',
      'timestamp',
      'conversation_id',
      'parent_run_id',
      'agent_name',
      'tool_call_id',
      'tool_name',
      'error',
      'metadata',
    ];
    const vals: unknown[] = [
      input.runId,
      input.kind,
      input.stepIndex,
      pyIsoformat(input.timestamp),
      input.conversationId !== undefined ? input.conversationId : d.conversationId,
      input.parentRunId !== undefined ? input.parentRunId : d.parentRunId,
      input.agentName !== undefined ? input.agentName : d.agentName,
      input.toolCallId ?? null,
      input.toolName ?? null,
      input.error ?? null,
      pyJsonDumpsAscii(input.metadata ?? {}),
    ];
    if (this.newest) {
      cols.push('idempotency_key');
      vals.push(input.idempotencyKey ?? null);
    }
    const info = this.db.prepare(`INSERT INTO events (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(...vals);
    return Number(info.lastInsertRowid);
  }

  /** Upsert into `tool_effects` (keyed by run_id, tool_call_id). */
  recordToolEffect(input: ToolEffectInput): void {
    this.db
      .prepare(
        `INSERT INTO tool_effects (run_id, tool_call_id, tool_name, status, started_at, ended_at, idempotency_key, effect_summary)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(run_id, tool_call_id) DO UPDATE SET tool_name = excluded.tool_name, status = excluded.status,
           started_at = excluded.started_at, ended_at = excluded.ended_at, idempotency_key = excluded.idempotency_key,
           effect_summary = excluded.effect_summary`,
      )
      .run(
        input.runId,
        input.toolCallId,
        input.toolName,
        input.status,
        pyIsoformat(input.startedAt),
        input.endedAt === null || input.endedAt === undefined ? null : pyIsoformat(input.endedAt),
        input.idempotencyKey ?? null,
        input.effectSummary ?? null,
      );
  }

  /** `INSERT OR IGNORE` into the media table; returns the sha256 hex. */
  putMedia(bytes: Uint8Array, mediaType: string | null, metadata: Record<string, string> = {}): string {
    this.ensureMediaTable();
    const sha = createHash('sha256').update(bytes).digest('hex');
    this.db
      .prepare(`INSERT OR IGNORE INTO ${this.mediaTable} (sha256, media_type, bytes, size_bytes, metadata) VALUES (?, ?, ?, ?, ?)`)
      .run(sha, mediaType, Buffer.from(bytes), bytes.length, pyJsonDumpsAscii(metadata));
    return sha;
  }

  /** The exact `snapshots.messages` text for a message list (externalizing into this store's media table). */
  serializeMessages(messages: JsonObject[]): string {
    const tree = this.mediaMode === 'none' ? messages : externalizeMedia(messages, (b, t) => this.putMedia(b, t), this.thresholdBytes);
    return pyJsonDumpsAscii(tree);
  }

  /** Saves one snapshot; returns its `seq`, or null when an idempotency key made the insert a no-op. */
  saveSnapshot(input: SnapshotInput): number | null {
    return this.db.transaction((): number | null => {
      for (const ev of input.events ?? []) this.appendEvent(ev);
      const d = this.runDefaults(input.runId);
      const cols = ['run_id', 'step_index', 'conversation_id', 'parent_run_id', 'agent_name', 'timestamp'];
      const vals: unknown[] = [
        input.runId,
        input.stepIndex,
        input.conversationId !== undefined ? input.conversationId : d.conversationId,
        input.parentRunId !== undefined ? input.parentRunId : d.parentRunId,
        input.agentName !== undefined ? input.agentName : d.agentName,
        pyIsoformat(input.timestamp),
      ];
      if (this.shape !== 'pre-state') {
        cols.push('state');
        vals.push(input.state ?? 'complete');
      } else if ((input.state ?? 'complete') !== 'complete') {
        throw new Error('the pre-state shape cannot hold interrupted snapshots');
      }
      cols.push('messages');
      vals.push(this.serializeMessages(input.messages));
      if (this.newest) {
        cols.push('idempotency_key');
        vals.push(input.idempotencyKey ?? null);
      }
      const info = this.db.prepare(`INSERT INTO snapshots (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(...vals);
      return info.changes === 0 ? null : Number(info.lastInsertRowid);
    })();
  }

  /** Writes everything `simulateRun` produced: the run record, then events/effects/snapshots in time order. */
  writeSimulatedRun(sim: SimResult): void {
    this.writeSimulatedRuns([sim]);
  }

  /**
   * Writes several simulated runs interleaved in time, as concurrent runs (e.g. a delegated sub-agent
   * running inside its parent's tool call) would have been persisted: each run is registered at its
   * `started_at`, and events / tool effects / snapshots of all runs are inserted in timestamp order
   * (ties keep the input order).
   */
  writeSimulatedRuns(sims: SimResult[]): void {
    type Item = { t: number; order: number; apply: () => void };
    const items: Item[] = [];
    let order = 0;
    for (const sim of sims) {
      items.push({ t: sim.run.startedAt, order: order++, apply: () => this.registerRun({ ...sim.run }) });
      for (const r of sim.rows) {
        if (r.table === 'events') {
          const row = r.row;
          items.push({ t: row.timestamp, order: order++, apply: () => this.appendEvent({ ...row }) });
        } else if (r.table === 'tool_effects') {
          const row = r.row;
          items.push({ t: row.endedAt ?? row.startedAt, order: order++, apply: () => this.recordToolEffect({ ...row }) });
        } else {
          const row = r.row;
          if (this.shape === 'pre-state' && row.state !== 'complete') continue;
          items.push({ t: row.timestamp, order: order++, apply: () => void this.saveSnapshot({ ...row }) });
        }
      }
    }
    items.sort((a, b) => a.t - b.t || a.order - b.order);
    this.db.transaction(() => {
      for (const it of items) it.apply();
    })();
  }

  /** Inserts or replaces a conversation catalog row (the table is created on first use, as upstream does). */
  saveConversation(input: ConversationInput): void {
    this.db.exec(CONVERSATIONS_DDL);
    const updatedAt = input.updatedAt ?? Date.UTC(2026, 0, 12) * 1000;
    const metadata = 'rawMetadata' in input ? input.rawMetadata : conversationSummaryJson(input.id, updatedAt, input.summary);
    const revision = typeof input.summary?.revision === 'number' ? input.summary.revision : 1;
    this.db
      .prepare('INSERT OR REPLACE INTO conversations (id, revision, metadata, messages, search_text, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(input.id, revision, metadata, pyJsonDumpsAscii(input.messages ?? []), '', pyIsoformat(updatedAt));
  }

  /** Checkpoints and closes: the .db file is self-contained (no -wal/-shm left), header still says WAL. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.db.close();
    for (const p of [`${this.path}-wal`, `${this.path}-shm`]) {
      if (existsSync(p)) throw new Error(`${p} was left behind after close`);
    }
  }
}
