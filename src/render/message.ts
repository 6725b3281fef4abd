import { isArray, isObject, type JsonObject, type JsonValue } from '../py/json-value.js';
import { parseJson } from '../py/json-parse.js';
import type { Message } from '../history/messages.js';
import { SUMMARY_PREFIX } from '../history/summary.js';
import type { RenderedField } from './fields.js';
import { toolContentStr } from './multimodal.js';
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

function renderRequestPart(p: JsonObject): RenderedField | null {
  switch (p.get('part_kind')) {
    case 'system-prompt': {
      const content = p.get('content') as string;
      if (content.startsWith(SUMMARY_PREFIX)) return { label: '[Compaction summary]', text: '', clip: 'none' };
      return { label: 'System: ', text: content, clip: 'head200' };
    }
    case 'user-prompt':
      return { label: 'User: ', text: userText(p.get('content')), clip: 'tail500' };
    case 'instruction-delta':
      return { label: 'System: ', text: instructionDeltaText(p), clip: 'head200' };
    case 'tool-return':
      return { label: `Tool [${name(p.get('tool_name'))}]: `, text: toolContentStr(p.get('content') ?? null), clip: 'tail500' };
    case 'retry-prompt':
      return { label: `Retry [${name(p.get('tool_name'))}]: `, text: retryText(p.get('content')), clip: 'none' };
    case 'speech':
      return speech(p);
    default:
      return null; // tool-availability deltas and unknown kinds render nothing
  }
}

function speech(p: JsonObject): RenderedField | null {
  const transcript = p.get('transcript');
  if (typeof transcript !== 'string' || transcript === '') return null;
  return { label: `Speech [${name(p.get('speaker'))}]: `, text: transcript, clip: 'tail500' };
}

function renderResponsePart(p: JsonObject): RenderedField | null {
  switch (p.get('part_kind')) {
    case 'text':
      return { label: 'Assistant: ', text: p.get('content') as string, clip: 'tail500' };
    case 'tool-call':
      return { label: `Tool Call [${name(p.get('tool_name'))}]: `, text: pyJsonDumps(argsAsDict(p.get('args'))), clip: 'tail200' };
    case 'speech':
      return speech(p);
    default:
      return null; // thinking, file, compaction and built-in tool activity are never indexed
  }
}

/** The message's part lines (spec §4): empty when nothing renders, which still makes a document. */
export function renderMessage(m: Message): RenderedField[] {
  const out: RenderedField[] = [];
  const renderPart = m.kind === 'request' ? renderRequestPart : renderResponsePart;
  for (const p of m.parts) {
    const f = renderPart(p);
    if (f) out.push(f);
  }
  return out;
}
