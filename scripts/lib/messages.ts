/**
 * Builders for pydantic-ai `ModelMessage` JSON exactly as `ModelMessagesTypeAdapter.dump_json` emits it
 * (every field, defaults included, in pydantic field order; see reference-behaviour.md §1.5), plus
 * `simulateRun`, which replays a scripted agent run the way `StepPersistence` saves it (§2.1 stamping
 * order, compaction §3.1, interrupted snapshots, threaded `message_history`).
 *
 * Key order was checked against the Python-written stores in shared/parity (request, response,
 * user-prompt, text, tool-call, tool-return, text-content, binary); the other part kinds follow §1.5.
 *
 * Times: a `TimeInput` is an ISO string (any offset; parsed), a `Date` (millisecond precision) or a
 * number of **microseconds** since the Unix epoch (`utc('2025-03-01T09:00:04.5Z')` returns one).
 */

import { createHash } from 'node:crypto';
import { PyFloat, RawNumber } from './py-json.js';

export type JsonObject = { [key: string]: unknown };
/** Microseconds since the Unix epoch (UTC). */
export type Micros = number;
export type TimeInput = string | Date | Micros;

// ---------------------------------------------------------------------------------------------
// Time formatting

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6})\d*)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** Parse an ISO-8601 timestamp (no offset = UTC) into epoch microseconds, keeping microseconds. */
export function utc(iso: string): Micros {
  const m = ISO_RE.exec(iso.trim());
  if (!m) throw new RangeError(`not an ISO-8601 timestamp: ${JSON.stringify(iso)}`);
  const [, y, mo, d, h, mi, s, frac, off] = m;
  let ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? '0'));
  if (off && off !== 'Z') {
    const sign = off[0] === '-' ? -1 : 1;
    const digits = off.slice(1).replace(':', '');
    ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
  }
  return ms * 1000 + Number((frac ?? '').padEnd(6, '0') || '0');
}

export function toMicros(t: TimeInput): Micros {
  if (typeof t === 'number') {
    if (!Number.isSafeInteger(t)) throw new RangeError(`microsecond timestamps must be safe integers, got ${t}`);
    return t;
  }
  if (t instanceof Date) return t.getTime() * 1000;
  return utc(t);
}

function isoParts(t: TimeInput): { base: string; micros: number } {
  const us = toMicros(t);
  const ms = Math.floor(us / 1000);
  const micros = us - Math.floor(us / 1_000_000) * 1_000_000;
  const base = new Date(ms).toISOString().slice(0, 19);
  return { base, micros };
}

/** Python `datetime.isoformat()` of an aware UTC datetime: `2026-01-02T03:04:05.678901+00:00`. */
export function pyIsoformat(t: TimeInput): string {
  const { base, micros } = isoParts(t);
  return `${base}${micros ? '.' + String(micros).padStart(6, '0') : ''}+00:00`;
}

/** Pydantic's JSON form of a UTC datetime: `2026-01-02T03:04:05.678901Z` (fraction omitted when 0). */
export function pydanticTime(t: TimeInput): string {
  const { base, micros } = isoParts(t);
  return `${base}${micros ? '.' + String(micros).padStart(6, '0') : ''}Z`;
}

function optTime(t: TimeInput | null | undefined): string | null {
  return t === null || t === undefined ? null : pydanticTime(t);
}

/** A deterministic clock in microseconds. */
export class Clock {
  private us: Micros;
  constructor(start: TimeInput) {
    this.us = toMicros(start);
  }
  get now(): Micros {
    return this.us;
  }
  /** Advance by `seconds` (fractions allowed, rounded to microseconds) and return the new time. */
  advance(seconds: number): Micros {
    this.us += Math.round(seconds * 1_000_000);
    return this.us;
  }
  set(t: TimeInput): Micros {
    this.us = toMicros(t);
    return this.us;
  }
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/** Deep copy of a JSON tree that keeps `PyFloat` / `RawNumber` wrappers (structuredClone would not). */
export function cloneJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => cloneJson(v)) as T;
  if (value instanceof PyFloat || value instanceof RawNumber) return value;
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [k, cloneJson(v)])) as T;
  if (value !== null && typeof value === 'object') {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) out[k] = cloneJson(v);
    return out as T;
  }
  return value;
}

/** Pydantic's bytes serialization: URL-safe base64 **with** `=` padding. */
export function urlsafeB64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

/** pydantic-ai's multimodal `identifier`: first 6 hex chars of sha1 over the data (or the URL). */
export function contentIdentifier(data: Uint8Array | string): string {
  return createHash('sha1').update(data).digest('hex').slice(0, 6);
}

// ---------------------------------------------------------------------------------------------
// Summary artifacts (§3.1)

export const SUMMARY_PREFIX = 'Summary of previous conversation:\n\n';
export const SUMMARY_METADATA_KEY = 'pydantic-ai-harness.compaction.summary.v1';
export function summaryMetadata(): JsonObject {
  return { [SUMMARY_METADATA_KEY]: true };
}

// ---------------------------------------------------------------------------------------------
// UserContent items

/** `TextContent`: `{content, metadata, kind: "text-content"}`. */
export function textContent(content: string, metadata: unknown = null): JsonObject {
  return { content, metadata, kind: 'text-content' };
}

export interface BinaryContentOptions {
  vendorMetadata?: JsonObject | null;
  /** Defaults to `contentIdentifier(data)`. */
  identifier?: string;
}

/** `BinaryContent`: `{data (URL-safe b64), media_type, vendor_metadata, kind: "binary", identifier}`. */
export function binaryContent(data: Uint8Array, mediaType: string, opts: BinaryContentOptions = {}): JsonObject {
  return {
    data: urlsafeB64(data),
    media_type: mediaType,
    vendor_metadata: opts.vendorMetadata ?? null,
    kind: 'binary',
    identifier: opts.identifier ?? contentIdentifier(data),
  };
}

export type UserContent = string | JsonObject;

// ---------------------------------------------------------------------------------------------
// Request parts

export function systemPart(content: string, opts: { timestamp: TimeInput; dynamicRef?: string | null }): JsonObject {
  return { content, timestamp: pydanticTime(opts.timestamp), dynamic_ref: opts.dynamicRef ?? null, part_kind: 'system-prompt' };
}

export function userPromptPart(content: string | UserContent[], opts: { timestamp: TimeInput }): JsonObject {
  return { content, timestamp: pydanticTime(opts.timestamp), part_kind: 'user-prompt' };
}

export type ToolOutcome = 'success' | 'failed' | 'denied' | 'interrupted';

export interface ToolReturnOptions {
  timestamp: TimeInput;
  toolKind?: string | null;
  metadata?: unknown;
  outcome?: ToolOutcome;
}

export function toolReturnPart(toolName: string, content: unknown, toolCallId: string, opts: ToolReturnOptions): JsonObject {
  return {
    tool_name: toolName,
    content,
    tool_call_id: toolCallId,
    tool_kind: opts.toolKind ?? null,
    metadata: opts.metadata ?? null,
    timestamp: pydanticTime(opts.timestamp),
    outcome: opts.outcome ?? 'success',
    part_kind: 'tool-return',
  };
}

export interface ErrorDetail {
  type: string;
  loc: Array<string | number>;
  msg: string;
  input: unknown;
  ctx?: JsonObject;
  url?: string;
}

/** A pydantic `ErrorDetails` dict in field order (`type, loc, msg, input[, ctx][, url]`). */
export function errorDetail(e: ErrorDetail): JsonObject {
  const out: JsonObject = { type: e.type, loc: [...e.loc], msg: e.msg, input: e.input };
  if (e.ctx !== undefined) out.ctx = e.ctx;
  if (e.url !== undefined) out.url = e.url;
  return out;
}

export function retryPromptPart(
  content: string | ErrorDetail[],
  opts: { toolName: string | null; toolCallId: string; timestamp: TimeInput },
): JsonObject {
  return {
    content: typeof content === 'string' ? content : content.map(errorDetail),
    tool_name: opts.toolName,
    tool_call_id: opts.toolCallId,
    timestamp: pydanticTime(opts.timestamp),
    part_kind: 'retry-prompt',
  };
}

/** `InstructionDeltaPart` (PR #8188): `content` null means the block is withdrawn. */
export function instructionDeltaPart(id: string, content: string | null): JsonObject {
  return { id, content, part_kind: 'instruction-delta' };
}

// ---------------------------------------------------------------------------------------------
// Response parts

export interface ProviderFields {
  id?: string | null;
  providerName?: string | null;
  providerDetails?: JsonObject | null;
}

export function textPart(content: string, opts: ProviderFields = {}): JsonObject {
  return {
    content,
    id: opts.id ?? null,
    provider_name: opts.providerName ?? null,
    provider_details: opts.providerDetails ?? null,
    part_kind: 'text',
  };
}

/** `args` is a JSON object or a JSON-encoded string (both occur in real stores), or null. */
export function toolCallPart(
  toolName: string,
  args: JsonObject | string | null,
  toolCallId: string,
  opts: ProviderFields & { toolKind?: string | null } = {},
): JsonObject {
  return {
    tool_name: toolName,
    args,
    tool_call_id: toolCallId,
    tool_kind: opts.toolKind ?? null,
    id: opts.id ?? null,
    provider_name: opts.providerName ?? null,
    provider_details: opts.providerDetails ?? null,
    part_kind: 'tool-call',
  };
}

export function thinkingPart(content: string, opts: ProviderFields & { signature?: string | null } = {}): JsonObject {
  return {
    content,
    id: opts.id ?? null,
    signature: opts.signature ?? null,
    provider_name: opts.providerName ?? null,
    provider_details: opts.providerDetails ?? null,
    part_kind: 'thinking',
  };
}

// ---------------------------------------------------------------------------------------------
// Messages

export interface UsageInput {
  inputTokens?: number;
  cacheWriteTokens?: number;
  cacheReadTokens?: number;
  outputTokens?: number;
  inputAudioTokens?: number;
  cacheAudioReadTokens?: number;
  outputAudioTokens?: number;
  details?: JsonObject;
  cost?: unknown;
}

export function usage(u: UsageInput = {}): JsonObject {
  return {
    input_tokens: u.inputTokens ?? 0,
    cache_write_tokens: u.cacheWriteTokens ?? 0,
    cache_read_tokens: u.cacheReadTokens ?? 0,
    output_tokens: u.outputTokens ?? 0,
    input_audio_tokens: u.inputAudioTokens ?? 0,
    cache_audio_read_tokens: u.cacheAudioReadTokens ?? 0,
    output_audio_tokens: u.outputAudioTokens ?? 0,
    details: u.details ?? {},
    cost: u.cost ?? null,
  };
}

export type MessageState = 'complete' | 'interrupted';

export interface RequestOptions {
  /** Message timestamp; null (the default) until pydantic-ai stamps it. */
  timestamp?: TimeInput | null;
  instructions?: string | null;
  runId?: string | null;
  conversationId?: string | null;
  metadata?: JsonObject | null;
  state?: MessageState;
}

/** `ModelRequest`: `parts, timestamp, instructions, kind, run_id, conversation_id, metadata, state`. */
export function request(parts: JsonObject[], opts: RequestOptions = {}): JsonObject {
  return {
    parts,
    timestamp: optTime(opts.timestamp),
    instructions: opts.instructions ?? null,
    kind: 'request',
    run_id: opts.runId ?? null,
    conversation_id: opts.conversationId ?? null,
    metadata: opts.metadata ?? null,
    state: opts.state ?? 'complete',
  };
}

/**
 * A request holding one user prompt (a string or a UserContent list) or the given parts.
 * `partTimestamp` stamps the created user-prompt part (defaults to `timestamp`; required if both are null).
 */
export function userRequest(
  content: string | UserContent[] | { parts: JsonObject[] },
  opts: RequestOptions & { partTimestamp?: TimeInput } = {},
): JsonObject {
  if (typeof content === 'object' && !Array.isArray(content)) return request(content.parts, opts);
  const partTs = opts.partTimestamp ?? opts.timestamp;
  if (partTs === null || partTs === undefined) throw new TypeError('userRequest needs partTimestamp or timestamp');
  return request([userPromptPart(content, { timestamp: partTs })], opts);
}

export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_call' | 'error' | null;
export type ResponseState = 'complete' | 'incomplete' | 'suspended' | 'interrupted';

export interface ResponseOptions {
  timestamp: TimeInput;
  usage?: JsonObject | UsageInput;
  modelName?: string | null;
  providerName?: string | null;
  providerUrl?: string | null;
  providerDetails?: JsonObject | null;
  providerResponseId?: string | null;
  finishReason?: FinishReason;
  runId?: string | null;
  conversationId?: string | null;
  metadata?: JsonObject | null;
  state?: ResponseState;
}

function isUsageObject(u: JsonObject | UsageInput): u is JsonObject {
  return 'input_tokens' in u;
}

/** `ModelResponse` in pydantic field order. */
export function response(parts: JsonObject[], opts: ResponseOptions): JsonObject {
  const u = opts.usage === undefined ? usage() : isUsageObject(opts.usage) ? opts.usage : usage(opts.usage);
  return {
    parts,
    usage: u,
    model_name: opts.modelName ?? null,
    timestamp: pydanticTime(opts.timestamp),
    kind: 'response',
    provider_name: opts.providerName ?? null,
    provider_url: opts.providerUrl ?? null,
    provider_details: opts.providerDetails ?? null,
    provider_response_id: opts.providerResponseId ?? null,
    finish_reason: opts.finishReason ?? null,
    run_id: opts.runId ?? null,
    conversation_id: opts.conversationId ?? null,
    metadata: opts.metadata ?? null,
    state: opts.state ?? 'complete',
  };
}

export function textResponse(text: string, opts: ResponseOptions): JsonObject {
  return response([textPart(text)], opts);
}

/**
 * Compaction summary artifact shapes (§3.1):
 * - `legacy-system`: a SystemPromptPart `SUMMARY_PREFIX + body` (dynamic_ref null), request metadata null;
 * - `marked-user`: a UserPromptPart whose content is `[TextContent(SUMMARY_PREFIX + body, metadata=marker)]`
 *   (the shape in shared/parity/small.db; request metadata null unless `requestMetadata` is set — the
 *   newest `make_summary_message` also sets the marker there and prepends copied `systemParts`);
 * - `flattened-user`: a UserPromptPart with the string `SUMMARY_PREFIX + body` and request metadata = marker.
 */
export type SummaryShape = 'legacy-system' | 'marked-user' | 'flattened-user';

export interface SummaryOptions extends Omit<RequestOptions, 'metadata'> {
  shape?: SummaryShape;
  /** Timestamp of the summary part (required). */
  partTimestamp: TimeInput;
  /** Copied SystemPromptParts placed before the summary part (newest compaction). */
  systemParts?: JsonObject[];
  /** Request metadata; defaults: marker for `flattened-user`, null otherwise. */
  requestMetadata?: JsonObject | null;
}

export function summaryRequest(body: string, opts: SummaryOptions): JsonObject {
  const shape = opts.shape ?? 'marked-user';
  const text = SUMMARY_PREFIX + body;
  let part: JsonObject;
  if (shape === 'legacy-system') part = systemPart(text, { timestamp: opts.partTimestamp });
  else if (shape === 'marked-user') part = userPromptPart([textContent(text, summaryMetadata())], { timestamp: opts.partTimestamp });
  else part = userPromptPart(text, { timestamp: opts.partTimestamp });
  const metadata = opts.requestMetadata !== undefined ? opts.requestMetadata : shape === 'flattened-user' ? summaryMetadata() : null;
  return request([...(opts.systemParts ?? []), part], { ...opts, metadata });
}

// ---------------------------------------------------------------------------------------------
// What compaction leaves beside the summary: receipts, re-injected pins, kept user messages. None is a
// summary artifact, so replay keeps them, and a snapshot that starts with them no longer overlaps the
// record: its kept tail is indexed again (the repeats `--collapse` folds).

export const RECEIPT_METADATA = 'pydantic-ai-harness.compaction.receipt.v1';
export const PIN_METADATA = 'pydantic-ai-harness.compaction.pin.v1';
export const KEPT_USER_MESSAGE_METADATA = 'pydantic-ai-harness.compaction.kept-user-message.v1';

/** `format_receipt` of pydantic-ai-harness `compaction/_receipts.py`, summarizing flavour. */
export function receiptText(o: { droppedMessages: number; droppedTokens: number; by: string; handle?: string | null }): string {
  const core = `was summarized by ${o.by}. The summary above is secondhand; re-verify critical facts against primary sources.`;
  const transcript = o.handle ? ` Persisted run handle: ${o.handle}.` : '';
  return `[History before this point (${o.droppedMessages} messages, ~${o.droppedTokens} tokens) ${core}${transcript}]`;
}

/** A receipt message: one `UserPromptPart` holding `TextContent(text, metadata=RECEIPT_METADATA)`. */
export function receiptRequest(text: string, opts: { partTimestamp: TimeInput }): JsonObject {
  return request([userPromptPart([textContent(text, RECEIPT_METADATA)], { timestamp: opts.partTimestamp })]);
}

/** `pin(content)` placed in a request; compaction re-injects the very same part when it drops it. */
export function pinRequest(text: string, opts: { partTimestamp: TimeInput } & RequestOptions): JsonObject {
  return request([userPromptPart([textContent(text, PIN_METADATA)], { timestamp: opts.partTimestamp })], opts);
}

/** A `keep_user_messages` retention copy of a user request: its parts, request metadata set to the marker. */
export function keptUserCopy(original: JsonObject): JsonObject {
  return request(cloneJson(original.parts as JsonObject[]), { metadata: { [KEPT_USER_MESSAGE_METADATA]: true } });
}

// ---------------------------------------------------------------------------------------------
// Run simulation (what StepPersistence saves)

/** Rows the simulator produces; `StepStoreWriter.writeSimulatedRun` writes them. */
export interface SimRunRecord {
  runId: string;
  conversationId: string | null;
  parentRunId: string | null;
  agentName: string | null;
  metadata: Record<string, string>;
  startedAt: Micros;
}

export interface SimEvent {
  runId: string;
  kind: string;
  stepIndex: number;
  timestamp: Micros;
  conversationId: string | null;
  parentRunId: string | null;
  agentName: string | null;
  toolCallId: string | null;
  toolName: string | null;
  error: string | null;
}

export interface SimToolEffect {
  runId: string;
  toolCallId: string;
  toolName: string;
  status: 'started' | 'completed' | 'failed';
  startedAt: Micros;
  endedAt: Micros | null;
  effectSummary: string | null;
}

export interface SimSnapshot {
  runId: string;
  stepIndex: number;
  state: MessageState;
  timestamp: Micros;
  conversationId: string | null;
  parentRunId: string | null;
  agentName: string | null;
  /** A deep copy of the history at save time. */
  messages: JsonObject[];
}

/** What a tool call of a step yields, in the order of the step's tool-call parts. */
export type SimToolResult =
  | { content: unknown; outcome?: ToolOutcome; metadata?: unknown }
  | { retry: string | ErrorDetail[] }
  | { error: string };

export interface SimTiming {
  /** startedAt -> `run_started` event. */
  runStarted: number;
  /** run_started -> user-prompt part timestamp. */
  prompt: number;
  /** prompt part -> first request timestamp. */
  firstRequest: number;
  /** snapshot -> stamping of the pending request. */
  stamp: number;
  /** request stamped -> `model_request_started`. */
  modelRequestStarted: number;
  /** model_request_started -> response timestamp (no compaction). */
  response: number;
  /** model_request_started -> summary part timestamp (compaction). */
  summary: number;
  /** summary part -> response timestamp (compaction). */
  responseAfterSummary: number;
  /** response -> `model_request_completed`. */
  modelRequestCompleted: number;
  /** previous event -> tool effect `started_at`. */
  effectStarted: number;
  /** effect started -> `tool_call_started`. */
  toolCallStarted: number;
  /** tool_call_started -> effect `ended_at`. */
  effectEnded: number;
  /** effect ended -> `tool_call_completed` / `tool_call_failed`. */
  toolCallEnded: number;
  /** tool_call_completed -> tool-return part timestamp. */
  toolReturn: number;
  /** previous -> retry-prompt part timestamp. */
  retryPrompt: number;
  /** last tool return -> boundary snapshot. */
  toolSnapshot: number;
  /** model_request_completed -> final snapshot (text-only response). */
  finalSnapshot: number;
  /** tool_call_failed -> interrupted snapshot. */
  interruptedSnapshot: number;
  /** final snapshot -> `run_completed`. */
  runEnded: number;
  /** interrupted snapshot -> `run_failed`. */
  runFailed: number;
}

/** The spacing measured in the Python-written parity stores (seconds). */
export const PARITY_TIMING: SimTiming = {
  runStarted: 1.75,
  prompt: 4.0,
  firstRequest: 1.0,
  stamp: 2.0,
  modelRequestStarted: 2.5,
  response: 2.5,
  summary: 1.75,
  responseAfterSummary: 1.0,
  modelRequestCompleted: 1.0,
  effectStarted: 2.5,
  toolCallStarted: 1.75,
  effectEnded: 4.75,
  toolCallEnded: 1.75,
  toolReturn: 1.75,
  retryPrompt: 1.75,
  toolSnapshot: 0.75,
  finalSnapshot: 3.0,
  interruptedSnapshot: 2.75,
  runEnded: 2.25,
  runFailed: 1.75,
};

export interface SimCompaction {
  /** Summary text (without SUMMARY_PREFIX). */
  summary: string;
  /** How many trailing messages of the history survive; the prefix before them is replaced. */
  keepLast: number;
  shape?: SummaryShape;
  systemParts?: JsonObject[];
  requestMetadata?: JsonObject | null;
  /** `receipts=True`: a receipt request after the summary (handle: the run id). */
  receipt?: boolean;
  /** Re-inject the pinned parts of the replaced prefix, in one request after the summary and receipt. */
  reinjectPins?: boolean;
  /** `keep_user_messages`: copies of the last n user requests of the replaced prefix, before the kept tail. */
  keepUserMessages?: number;
}

function isPinRequest(m: JsonObject): boolean {
  return (
    m.kind === 'request' &&
    (m.parts as JsonObject[]).some((p) => Array.isArray(p.content) && (p.content as JsonObject[]).some((c) => c.metadata === PIN_METADATA))
  );
}

/** A user turn: a request with a user prompt that no compaction made (no marker on the request or its content). */
function isUserRequest(m: JsonObject): boolean {
  const marked = (p: JsonObject): boolean =>
    Array.isArray(p.content) && (p.content as JsonObject[]).some((c) => typeof c === 'object' && c !== null && c.metadata !== null);
  const parts = m.parts as JsonObject[];
  return m.kind === 'request' && m.metadata === null && parts.some((p) => p.part_kind === 'user-prompt') && !parts.some(marked);
}

/** What a summarizing compaction puts between the summary and the kept tail (receipt, pins, kept user turns). */
function compactionExtras(c: SimCompaction, dropped: JsonObject[], handle: string, partTimestamp: Micros): JsonObject[] {
  const out: JsonObject[] = [];
  if (c.receipt) {
    const droppedTokens = Math.max(1, Math.round(JSON.stringify(dropped).length / 4));
    out.push(
      receiptRequest(receiptText({ droppedMessages: dropped.length, droppedTokens, by: 'summarizing_compaction', handle }), {
        partTimestamp,
      }),
    );
  }
  if (c.reinjectPins) {
    const pins = dropped.filter(isPinRequest).flatMap((m) => (m.parts as JsonObject[]).filter((p) => Array.isArray(p.content)));
    if (pins.length) out.push(request(cloneJson(pins)));
  }
  if (c.keepUserMessages) out.push(...dropped.filter(isUserRequest).slice(-c.keepUserMessages).map(keptUserCopy));
  return out;
}

export interface SimStep {
  /** The model response parts (textPart, toolCallPart, thinkingPart, ...). */
  parts: JsonObject[];
  /** One result per tool-call part, in order. A step without tool calls ends the run. */
  results?: SimToolResult[];
  usage?: UsageInput | JsonObject;
  modelName?: string | null;
  finishReason?: FinishReason;
  providerName?: string | null;
  providerResponseId?: string | null;
  /** Appended to the pending request when it is stamped before this step's model request (newest core). */
  instructionDeltas?: Array<{ id: string; content: string | null }>;
  /** Instructions rendered onto requests from this step on (`instructions` changes mid-run). */
  instructions?: string | null;
  /** History compaction applied inside this step's model request, after stamping. */
  compaction?: SimCompaction;
  timing?: Partial<SimTiming>;
}

export interface SimRun {
  /** `runs.run_id` (RunRecord). */
  runId: string;
  /** `run_id` pydantic-ai stamps on messages (default: runId). They differ e.g. for agent_name runs. */
  messageRunId?: string;
  conversationId: string | null;
  /** `conversation_id` stamped on messages (default: conversationId). */
  messageConversationId?: string | null;
  parentRunId?: string | null;
  agentName?: string | null;
  metadata?: Record<string, string>;
  startedAt: TimeInput;
  /** Rendered instructions filled into each request the run sends. */
  instructions?: string | null;
  /** SystemPromptParts for the first request; pydantic-ai adds them only when the history is empty. */
  systemPrompt?: string | string[];
  /** Inherited `message_history` (e.g. the previous run's `messages`); deep-copied. */
  history?: JsonObject[];
  /**
   * The new user prompt. `null` continues from the history: when it ends with a request, pydantic-ai
   * pops that request and reuses its parts as this run's first request.
   */
  prompt: string | UserContent[] | null;
  steps: SimStep[];
  modelName?: string | null;
  timing?: Partial<SimTiming>;
}

export interface SimResult {
  run: SimRunRecord;
  /** Events, tool effects and snapshots in chronological order (as the writer inserts them). */
  rows: Array<
    { table: 'events'; row: SimEvent } | { table: 'tool_effects'; row: SimToolEffect } | { table: 'snapshots'; row: SimSnapshot }
  >;
  snapshots: SimSnapshot[];
  /** The run's final in-memory history (stamped), to pass as `history` to a threaded follow-up run. */
  messages: JsonObject[];
  /** The history of the last `complete` snapshot (what a caller could resume from after a failure). */
  lastCompleteMessages: JsonObject[];
  failed: boolean;
  /** Time of the last row (run_completed / run_failed event). */
  endedAt: Micros;
}

function countWords(v: unknown): number {
  if (typeof v === 'string') return v.split(/\s+/).filter(Boolean).length;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + countWords(x), 0);
  if (v !== null && typeof v === 'object' && !(v instanceof PyFloat) && !(v instanceof RawNumber)) {
    return Object.entries(v).reduce(
      (n: number, [k, x]) => n + (k === 'content' || k === 'args' ? countWords(x) : 0) + (k === 'parts' ? countWords(x) : 0),
      0,
    );
  }
  return 0;
}

/**
 * Replays a scripted run and returns the rows StepPersistence + SqliteStepStore would write.
 *
 * Stamping order (§2.1): the first request is stamped (timestamp, run_id, conversation_id,
 * instructions) before the first model call, so it appears stamped in the first snapshot. Every later
 * request (tool returns / retry prompts) is saved **unstamped** at the end of the boundary snapshot and
 * stamped only when the next model request is prepared, so the next snapshot carries different bytes
 * for it. Inherited messages are copied unchanged. A tool `error` result fails the run: an
 * `interrupted` snapshot (history including the failing response) is saved with the index of the last
 * completed step, then `run_failed`.
 */
export function simulateRun(sim: SimRun): SimResult {
  const baseTiming: SimTiming = { ...PARITY_TIMING, ...(sim.timing ?? {}) };
  const clock = new Clock(sim.startedAt);
  const run: SimRunRecord = {
    runId: sim.runId,
    conversationId: sim.conversationId,
    parentRunId: sim.parentRunId ?? null,
    agentName: sim.agentName ?? null,
    metadata: sim.metadata ?? {},
    startedAt: clock.now,
  };
  const msgRunId = sim.messageRunId ?? sim.runId;
  const msgConvId = sim.messageConversationId !== undefined ? sim.messageConversationId : sim.conversationId;
  let instructions = sim.instructions ?? null;
  const modelName = sim.modelName !== undefined ? sim.modelName : 'scripted-model';

  const rows: SimResult['rows'] = [];
  const snapshots: SimSnapshot[] = [];
  const event = (kind: string, stepIndex: number, extra: Partial<SimEvent> = {}): void => {
    rows.push({
      table: 'events',
      row: {
        runId: run.runId,
        kind,
        stepIndex,
        timestamp: clock.now,
        conversationId: run.conversationId,
        parentRunId: run.parentRunId,
        agentName: run.agentName,
        toolCallId: null,
        toolName: null,
        error: null,
        ...extra,
      },
    });
  };
  const snapshot = (stepIndex: number, state: MessageState): void => {
    const snap: SimSnapshot = {
      runId: run.runId,
      stepIndex,
      state,
      timestamp: clock.now,
      conversationId: run.conversationId,
      parentRunId: run.parentRunId,
      agentName: run.agentName,
      messages: cloneJson(history),
    };
    snapshots.push(snap);
    rows.push({ table: 'snapshots', row: snap });
    if (state === 'complete') lastComplete = snap.messages;
  };
  const stamp = (msg: JsonObject): void => {
    // fill_run_metadata fills only unset fields; instructions are rendered onto the prepared request.
    if (msg.timestamp === null) msg.timestamp = pydanticTime(clock.now);
    if (msg.run_id === null) msg.run_id = msgRunId;
    if (msg.conversation_id === null) msg.conversation_id = msgConvId;
    if (msg.instructions === null) msg.instructions = instructions;
  };

  let history: JsonObject[] = cloneJson(sim.history ?? []);
  let lastComplete: JsonObject[] = [];
  let failed = false;
  let completedSteps = 0;

  clock.advance(baseTiming.runStarted);
  event('run_started', 0);

  // First request of the run.
  clock.advance(baseTiming.prompt);
  let pending: JsonObject;
  if (sim.prompt === null) {
    const last = history[history.length - 1];
    if (last?.kind !== 'request') throw new Error('prompt null needs a history ending with a request');
    pending = history.pop()!;
  } else {
    const parts: JsonObject[] = [];
    if (history.length === 0 && sim.systemPrompt !== undefined) {
      for (const s of Array.isArray(sim.systemPrompt) ? sim.systemPrompt : [sim.systemPrompt]) {
        parts.push(systemPart(s, { timestamp: clock.now }));
      }
    }
    parts.push(userPromptPart(sim.prompt, { timestamp: clock.now }));
    pending = request(parts);
  }
  clock.advance(baseTiming.firstRequest);
  stamp(pending);
  history.push(pending);
  let pendingStamped = true;

  for (let i = 0; i < sim.steps.length; i++) {
    const step = sim.steps[i]!;
    const stepIndex = i + 1;
    const t: SimTiming = { ...baseTiming, ...(step.timing ?? {}) };
    if (step.instructions !== undefined) instructions = step.instructions;

    if (!pendingStamped) {
      clock.advance(t.stamp);
      const req = history[history.length - 1]!;
      stamp(req);
      if (step.instructionDeltas) {
        (req.parts as JsonObject[]).push(...step.instructionDeltas.map((d) => instructionDeltaPart(d.id, d.content)));
      }
    } else if (step.instructionDeltas) {
      (pending.parts as JsonObject[]).push(...step.instructionDeltas.map((d) => instructionDeltaPart(d.id, d.content)));
    }
    pendingStamped = false;

    clock.advance(t.modelRequestStarted);
    event('model_request_started', stepIndex);
    if (step.compaction) {
      const c = step.compaction;
      clock.advance(t.summary);
      if (c.keepLast < 0 || c.keepLast > history.length) throw new RangeError('compaction keepLast out of range');
      const summary = summaryRequest(c.summary, {
        shape: c.shape ?? 'marked-user',
        partTimestamp: clock.now,
        ...(c.systemParts ? { systemParts: c.systemParts } : {}),
        ...(c.requestMetadata !== undefined ? { requestMetadata: c.requestMetadata } : {}),
      });
      const keep = history.length - c.keepLast;
      history = [summary, ...compactionExtras(c, history.slice(0, keep), run.runId, clock.now), ...history.slice(keep)];
      clock.advance(t.responseAfterSummary);
    } else {
      clock.advance(t.response);
    }
    const resp = response(step.parts, {
      timestamp: clock.now,
      usage: step.usage ?? { inputTokens: 50 + countWords(history), outputTokens: Math.max(1, countWords(step.parts)) },
      modelName: step.modelName !== undefined ? step.modelName : modelName,
      finishReason: step.finishReason ?? null,
      providerName: step.providerName ?? null,
      providerResponseId: step.providerResponseId ?? null,
      runId: msgRunId,
      conversationId: msgConvId,
    });
    history.push(resp);
    clock.advance(t.modelRequestCompleted);
    event('model_request_completed', stepIndex);

    const calls = step.parts.filter((p) => p.part_kind === 'tool-call');
    const results = step.results ?? [];
    if (results.length !== calls.length) {
      throw new Error(`step ${stepIndex}: ${calls.length} tool call(s) but ${results.length} result(s)`);
    }
    if (calls.length === 0) {
      clock.advance(t.finalSnapshot);
      completedSteps = stepIndex;
      snapshot(stepIndex, 'complete');
      if (i !== sim.steps.length - 1) throw new Error(`step ${stepIndex} has no tool calls but is not the last step`);
      break;
    }

    const returnParts: JsonObject[] = [];
    for (let c = 0; c < calls.length; c++) {
      const call = calls[c]!;
      const result = results[c]!;
      const toolName = call.tool_name as string;
      const toolCallId = call.tool_call_id as string;
      if ('retry' in result) {
        clock.advance(t.retryPrompt);
        returnParts.push(retryPromptPart(result.retry, { toolName, toolCallId, timestamp: clock.now }));
        continue;
      }
      const effectStart = clock.advance(t.effectStarted);
      clock.advance(t.toolCallStarted);
      event('tool_call_started', stepIndex, { toolCallId, toolName });
      const effectEnd = clock.advance(t.effectEnded);
      if ('error' in result) {
        rows.push({
          table: 'tool_effects',
          row: {
            runId: run.runId,
            toolCallId,
            toolName,
            status: 'failed',
            startedAt: effectStart,
            endedAt: effectEnd,
            effectSummary: result.error,
          },
        });
        clock.advance(t.toolCallEnded);
        event('tool_call_failed', stepIndex, { toolCallId, toolName, error: result.error });
        clock.advance(t.interruptedSnapshot);
        snapshot(completedSteps, 'interrupted');
        clock.advance(t.runFailed);
        event('run_failed', 0, { error: result.error });
        failed = true;
        break;
      }
      rows.push({
        table: 'tool_effects',
        row: {
          runId: run.runId,
          toolCallId,
          toolName,
          status: 'completed',
          startedAt: effectStart,
          endedAt: effectEnd,
          effectSummary: null,
        },
      });
      clock.advance(t.toolCallEnded);
      event('tool_call_completed', stepIndex, { toolCallId, toolName });
      clock.advance(t.toolReturn);
      returnParts.push(
        toolReturnPart(toolName, result.content, toolCallId, {
          timestamp: clock.now,
          outcome: result.outcome ?? 'success',
          metadata: result.metadata ?? null,
        }),
      );
    }
    if (failed) break;
    history.push(request(returnParts));
    clock.advance(t.toolSnapshot);
    completedSteps = stepIndex;
    snapshot(stepIndex, 'complete');
    if (i === sim.steps.length - 1) {
      // The script ends on tool returns: pydantic-ai would call the model again. Treat as a run
      // that stops at this boundary (e.g. cancelled by the caller) without a run_completed event.
      return { run, rows, snapshots, messages: history, lastCompleteMessages: lastComplete, failed: false, endedAt: clock.now };
    }
  }

  if (!failed) {
    clock.advance(baseTiming.runEnded);
    event('run_completed', 0);
  }
  return { run, rows, snapshots, messages: history, lastCompleteMessages: lastComplete, failed, endedAt: clock.now };
}
