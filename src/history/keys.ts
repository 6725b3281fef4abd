import { hash } from 'node:crypto';
import { isArray, isObject, PyFloat, PyInt, type JsonObject, type JsonValue } from '../py/json-value.js';
import type { Message } from './messages.js';

/**
 * Overlap keys (spec §3.3, §3.4). Python hashes re-validated pydantic objects, so equality must ignore
 * what validation normalizes: field order of messages and parts, absent-vs-default fields, and the
 * base64 alphabet of binary data. Values inside free-form fields (tool content, args) keep their order.
 */
export interface MessageKeys {
  /** Ignores message timestamp/run_id/conversation_id/instructions and instruction-delta parts. */
  readonly loose: string;
  /** The loose key with instruction-delta parts kept: used for cross-run attribution. */
  readonly strict: string;
}

const MESSAGE_STRIPPED = ['timestamp', 'run_id', 'conversation_id'];
const REQUEST_STRIPPED = ['instructions', 'instruction_baseline', 'instruction_parts'];

/** Top-level message fields the keys leave out: what core stamps on a message after its first save. */
export const KEYLESS_FIELDS = {
  request: new Set([...MESSAGE_STRIPPED, ...REQUEST_STRIPPED]),
  response: new Set(MESSAGE_STRIPPED),
} as const;

function canonicalBase64(data: string): string {
  return Buffer.from(data.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('base64');
}

/** Free-form value: order kept, int/float kept apart, binary data normalized. */
function canonValue(v: JsonValue, out: string[]): void {
  if (v === null) out.push('null');
  else if (typeof v === 'string') out.push(JSON.stringify(v));
  else if (typeof v === 'boolean') out.push(v ? 'true' : 'false');
  else if (v instanceof PyInt) out.push(v.value.toString());
  else if (v instanceof PyFloat) out.push(`f${String(v.value)}`);
  else if (isArray(v)) {
    out.push('[');
    for (const x of v) {
      canonValue(x, out);
      out.push(',');
    }
    out.push(']');
  } else {
    out.push('{');
    const binary = v.get('kind') === 'binary' && typeof v.get('data') === 'string';
    for (const [k, x] of v) {
      out.push(JSON.stringify(k), ':');
      if (binary && k === 'data') out.push(JSON.stringify(canonicalBase64(x as string)));
      else canonValue(x, out);
      out.push(',');
    }
    out.push('}');
  }
}

/** A pydantic model's fields: order-free, null/default fields equal to absent ones. */
function canonModel(obj: JsonObject, out: string[], skip?: Set<string>): void {
  const keys = [...obj.keys()].sort();
  out.push('<');
  for (const k of keys) {
    if (skip?.has(k)) continue;
    const v = obj.get(k)!;
    if (v === null) continue;
    if ((k === 'state' && v === 'complete') || (k === 'outcome' && v === 'success')) continue;
    out.push(k, '=');
    if (k === 'usage' && isObject(v)) canonModel(v, out);
    else if (k === 'data' && typeof v === 'string' && obj.get('kind') === 'binary') out.push(JSON.stringify(canonicalBase64(v)));
    else if (k === 'content' && isArray(v) && obj.get('part_kind') === 'user-prompt') {
      // user-prompt content items are typed models too (tool-return content stays free-form)
      out.push('[');
      for (const item of v) {
        if (isObject(item)) canonModel(item, out);
        else canonValue(item, out);
        out.push(',');
      }
      out.push(']');
    } else canonValue(v, out);
    out.push(';');
  }
  out.push('>');
}

const SKIPPED_IN_HEAD = {
  request: new Set([...KEYLESS_FIELDS.request, 'parts']),
  response: new Set([...KEYLESS_FIELDS.response, 'parts']),
} as const;

function digest(parts: string[]): string {
  // one-shot hash: no Hash object per message (replay computes one or two keys per new message)
  return hash('sha1', parts.join(''), 'base64');
}

export function messageKeys(m: Message): MessageKeys {
  const head: string[] = [];
  canonModel(m.raw, head, SKIPPED_IN_HEAD[m.kind]);
  const loose: string[] = [...head, '|'];
  const strict: string[] = [...head, '|'];
  let hasDelta = false;
  for (const p of m.parts) {
    const one: string[] = [];
    canonModel(p, one);
    one.push('&');
    if (m.kind === 'request' && p.get('part_kind') === 'instruction-delta') hasDelta = true;
    else loose.push(...one);
    strict.push(...one);
  }
  const looseKey = digest(loose);
  return { loose: looseKey, strict: hasDelta ? digest(strict) : looseKey };
}
