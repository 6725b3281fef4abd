import { isArray, isObject, type JsonObject, type JsonValue } from '../py/json-value.js';

/** A pydantic-ai message after JSON parsing and media restore, with its parts checked for the fields we read. */
export interface Message {
  readonly kind: 'request' | 'response';
  readonly raw: JsonObject;
  readonly parts: readonly JsonObject[];
}

export const REQUEST_PART_KINDS = new Set([
  'system-prompt',
  'user-prompt',
  'tool-return',
  'retry-prompt',
  'speech',
  'tool-availability-delta',
  'instruction-delta',
]);

export const RESPONSE_PART_KINDS = new Set([
  'text',
  'tool-call',
  'builtin-tool-call',
  'builtin-tool-return',
  'thinking',
  'compaction',
  'file',
  'speech',
]);

/** A snapshot whose messages do not validate; the reference skips such a snapshot whole. */
export class MessageShapeError extends Error {}

type Check = (v: JsonValue | undefined) => boolean;
const str: Check = (v) => typeof v === 'string';
const optStr: Check = (v) => v === undefined || v === null || typeof v === 'string';
const strOrList: Check = (v) => typeof v === 'string' || isArray(v);
const optStrOrList: Check = (v) => v === undefined || v === null || typeof v === 'string' || isArray(v);
const argsShape: Check = (v) => v === undefined || v === null || typeof v === 'string' || isObject(v);

// Only the fields that rendering and keys read; a wrong type here fails pydantic validation too.
const FIELD_CHECKS: Record<string, Array<[string, Check, string]>> = {
  'system-prompt': [
    ['content', str, 'a string'],
    ['dynamic_ref', optStr, 'a string or null'],
  ],
  'user-prompt': [['content', strOrList, 'a string or a list']],
  'tool-return': [['tool_name', str, 'a string']],
  'builtin-tool-return': [['tool_name', str, 'a string']],
  'retry-prompt': [
    ['content', strOrList, 'a string or a list'],
    ['tool_name', optStr, 'a string or null'],
  ],
  speech: [
    ['speaker', str, 'a string'],
    ['transcript', optStr, 'a string or null'],
  ],
  'instruction-delta': [
    ['id', (v) => typeof v === 'string' && v.length > 0, 'a non-empty string'],
    ['content', optStr, 'a string or null'],
  ],
  text: [['content', str, 'a string']],
  thinking: [['content', str, 'a string']],
  'tool-call': [
    ['tool_name', str, 'a string'],
    ['args', argsShape, 'an object, a string or null'],
  ],
  'builtin-tool-call': [
    ['tool_name', str, 'a string'],
    ['args', argsShape, 'an object, a string or null'],
  ],
  compaction: [['content', optStrOrList, 'a string or null']],
};

/** Validates one message of a snapshot, or throws MessageShapeError (the reference skips the snapshot). */
export function toMessage(m: JsonValue, i: number): Message {
  if (!isObject(m)) throw new MessageShapeError(`message ${i} is not an object`);
  const kind = m.get('kind');
  if (kind !== 'request' && kind !== 'response') {
    throw new MessageShapeError(`message ${i} has unknown kind ${JSON.stringify(kind ?? null)}`);
  }
  const parts = m.get('parts');
  if (!isArray(parts)) throw new MessageShapeError(`message ${i} has no parts list`);
  const known = kind === 'request' ? REQUEST_PART_KINDS : RESPONSE_PART_KINDS;
  for (let j = 0; j < parts.length; j++) {
    const p = parts[j]!;
    if (!isObject(p)) throw new MessageShapeError(`message ${i} part ${j} is not an object`);
    const pk = p.get('part_kind');
    if (typeof pk !== 'string') throw new MessageShapeError(`message ${i} part ${j} has no part_kind`);
    if (!known.has(pk)) continue; // unknown kinds render nothing; counted where the record is built
    for (const [field, ok, what] of FIELD_CHECKS[pk] ?? []) {
      if (!ok(p.get(field))) throw new MessageShapeError(`message ${i} part ${j} (${pk}): ${field} is not ${what}`);
    }
  }
  return { kind, raw: m, parts: parts as JsonObject[] };
}

/** part_kind values of a message that no known pydantic-ai version defines. */
export function unknownPartKinds(m: Message): string[] {
  const known = m.kind === 'request' ? REQUEST_PART_KINDS : RESPONSE_PART_KINDS;
  const out: string[] = [];
  for (const p of m.parts) {
    const pk = p.get('part_kind') as string;
    if (!known.has(pk)) out.push(pk);
  }
  return out;
}
