import { isArray, isObject, type JsonObject, type JsonValue } from '../py/json-value.js';
import { parseJson } from '../py/json-parse.js';
import type { Message } from '../history/messages.js';
import { SUMMARY_PREFIX } from '../history/summary.js';
import { toolContentStr } from './multimodal.js';
import type { Role } from './roles.js';
import { pyJsonDumps, pyRepr, pyStr, pyStrRepr } from '../py/repr.js';

/** pydantic-ai `ToolCallPart.args_as_dict()` (spec §4.3). */
export function argsAsDict(args: JsonValue | undefined): JsonValue {
  if (args === undefined || args === null || args === '') return new Map();
  if (isObject(args)) return args;
  if (typeof args === 'string') {
    try {
      const parsed = parseJson(args);
      if (isObject(parsed)) return parsed;
    } catch {
      // not JSON: falls through to the INVALID_JSON wrapper, as pydantic-ai does
    }
    return new Map<string, JsonValue>([['INVALID_JSON', args]]);
  }
  return new Map<string, JsonValue>([['INVALID_JSON', pyStr(args)]]);
}

/** User prompt list content: plain strings and TextContent texts, joined by one space. */
function userText(content: JsonValue | undefined): string {
  if (typeof content === 'string') return content;
  if (!isArray(content)) return '';
  const items: string[] = [];
  for (const item of content) {
    if (typeof item === 'string') items.push(item);
    else if (isObject(item) && item.get('kind') === 'text-content' && typeof item.get('content') === 'string') {
      items.push(item.get('content') as string);
    }
  }
  return items.join(' ');
}

/** Python `str()` of retry content: a string raw, an ErrorDetails list with each `loc` as a tuple. */
function retryText(content: JsonValue | undefined): string {
  if (typeof content === 'string') return content;
  if (!isArray(content)) return pyStr(content ?? null);
  const errors = content.map((e) => {
    if (!isObject(e)) return pyRepr(e);
    const items: string[] = [];
    for (const [k, v] of e) {
      let value: string;
      if (k === 'loc' && isArray(v)) value = v.length === 1 ? `(${pyRepr(v[0]!)},)` : `(${v.map(pyRepr).join(', ')})`;
      else value = pyRepr(v);
      items.push(`${pyStrRepr(k)}: ${value}`);
    }
    return '{' + items.join(', ') + '}';
  });
  return '[' + errors.join(', ') + ']';
}

/** `InstructionDeltaPart.render()` (spec §4.1, §9 item 26). */
function instructionDeltaText(p: JsonObject): string {
  const id = pyStrRepr(p.get('id') as string);
  const content = p.get('content');
  return typeof content === 'string'
    ? `Instruction block ${id} is replaced from this point onward by:\n\n${content}`
    : `Instruction block ${id} is withdrawn. Its previous instructions no longer apply.`;
}

function name(v: JsonValue | undefined): string {
  return typeof v === 'string' ? v : pyStr(v ?? null);
}

function toolName(p: JsonObject): string | null {
  const n = p.get('tool_name');
  return typeof n === 'string' ? n : null;
}

/**
 * How the display clips a part's text (spec §4.5); the search always sees it whole.
 * - tail500: user, assistant, tool return, speech: 500 code points, then `...`
 * - tail200: tool-call arguments: 200 code points, then `...`
 * - head200: system text and instruction deltas: 200 code points, no ellipsis
 * - none: retry prompts and the compaction placeholder
 */
export type ClipRule = 'tail500' | 'tail200' | 'head200' | 'none';

/**
 * A part that renders text (spec §4.1, §4.2): who speaks (role, and the tool for tool calls, returns and
 * retries), its label and text. The search sees `label + text`; the display clips `text` by `clip`.
 */
export interface RenderedPart {
  readonly role: Role;
  /** The part's `tool_name` for tool calls, tool returns and retries (null for a retry without a tool). */
  readonly toolName: string | null;
  readonly label: string;
  readonly text: string;
  readonly clip: ClipRule;
}

function speech(p: JsonObject, role: Role): RenderedPart | null {
  const transcript = p.get('transcript');
  if (typeof transcript !== 'string' || transcript === '') return null;
  return { role, toolName: null, label: `Speech [${name(p.get('speaker'))}]: `, text: transcript, clip: 'tail500' };
}

function requestPart(p: JsonObject): RenderedPart | null {
  switch (p.get('part_kind')) {
    case 'system-prompt': {
      const content = p.get('content') as string;
      if (content.startsWith(SUMMARY_PREFIX))
        return { role: 'system', toolName: null, label: '[Compaction summary]', text: '', clip: 'none' };
      return { role: 'system', toolName: null, label: 'System: ', text: content, clip: 'head200' };
    }
    case 'user-prompt':
      return { role: 'user', toolName: null, label: 'User: ', text: userText(p.get('content')), clip: 'tail500' };
    case 'instruction-delta':
      return { role: 'system', toolName: null, label: 'System: ', text: instructionDeltaText(p), clip: 'head200' };
    case 'tool-return':
      return {
        role: 'tool-return',
        toolName: toolName(p),
        label: `Tool [${name(p.get('tool_name'))}]: `,
        text: toolContentStr(p.get('content') ?? null),
        clip: 'tail500',
      };
    case 'retry-prompt':
      return {
        role: 'retry',
        toolName: toolName(p),
        label: `Retry [${name(p.get('tool_name'))}]: `,
        text: retryText(p.get('content')),
        clip: 'none',
      };
    case 'speech':
      return speech(p, 'user');
    default:
      return null; // tool-availability deltas and unknown kinds render nothing
  }
}

function responsePart(p: JsonObject): RenderedPart | null {
  switch (p.get('part_kind')) {
    case 'text':
      return { role: 'assistant', toolName: null, label: 'Assistant: ', text: p.get('content') as string, clip: 'tail500' };
    case 'tool-call':
      return {
        role: 'tool-call',
        toolName: toolName(p),
        label: `Tool Call [${name(p.get('tool_name'))}]: `,
        text: pyJsonDumps(argsAsDict(p.get('args'))),
        clip: 'tail200',
      };
    case 'speech':
      return speech(p, 'assistant');
    default:
      return null; // thinking, file, compaction and built-in tool activity are never indexed
  }
}

/** One part of a request or response message, rendered; null for the parts that render nothing. */
export function renderPart(kind: Message['kind'], p: JsonObject): RenderedPart | null {
  return kind === 'request' ? requestPart(p) : responsePart(p);
}

/** The message's rendered parts, in part order (spec §4): empty when nothing renders, which still makes a document. */
export function renderMessage(m: Message): RenderedPart[] {
  const out: RenderedPart[] = [];
  for (const p of m.parts) {
    const r = renderPart(m.kind, p);
    if (r) out.push(r);
  }
  return out;
}

/** What BM25 tokenizes and `--json` reports as `text`: the part lines (label and text) joined by newlines. */
export function searchText(parts: readonly Pick<RenderedPart, 'label' | 'text'>[]): string {
  let out = '';
  for (let i = 0; i < parts.length; i++) {
    if (i) out += '\n';
    out += parts[i]!.label + parts[i]!.text;
  }
  return out;
}
