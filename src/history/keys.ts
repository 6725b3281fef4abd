import { createHash, hash } from 'node:crypto';
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

/**
 * A string value longer than the bound: kept as it is and hashed from its JSON escape in slices, so
 * that a 200 MB message is not copied twice more (escaped, then joined) only to be hashed.
 */
class LongString {
  constructor(readonly value: string) {}
}

type Piece = string | LongString;

/**
 * Canonical text being built: `acc` grows by concatenation (cheap ropes in V8); a long string value
 * closes it into `out` as a piece of its own. Most messages end as one string, hashed in one call.
 */
interface Canon {
  readonly out: Piece[];
  acc: string;
  readonly long: number;
  /** Whether a LongString was met. */
  sliced: boolean;
}

function canon(long: number): Canon {
  return { out: [], acc: '', long, sliced: false };
}

/** The finished pieces of `c`. */
function pieces(c: Canon): Piece[] {
  if (c.acc !== '' || c.out.length === 0) c.out.push(c.acc);
  c.acc = '';
  return c.out;
}

/**
 * What JSON.stringify escapes in a string (quote, backslash, control characters, lone surrogates; any
 * surrogate here, to keep it simple): a string without any is its JSON text between quotes, no copy.
 */
const ESCAPED = /["\\\x00-\x1f\ud800-\udfff]/;

function pushString(v: string, c: Canon): void {
  if (v.length > c.long) {
    if (c.acc !== '') c.out.push(c.acc);
    c.out.push(new LongString(v));
    c.acc = '';
    c.sliced = true;
  } else c.acc += ESCAPED.test(v) ? JSON.stringify(v) : `"${v}"`;
}

/** Free-form value: order kept, int/float kept apart, binary data normalized. */
function canonValue(v: JsonValue, c: Canon): void {
  if (v === null) c.acc += 'null';
  else if (typeof v === 'string') pushString(v, c);
  else if (typeof v === 'boolean') c.acc += v ? 'true' : 'false';
  else if (v instanceof PyInt) c.acc += v.value.toString();
  else if (v instanceof PyFloat) c.acc += `f${String(v.value)}`;
  else if (isArray(v)) {
    c.acc += '[';
    for (const x of v) {
      canonValue(x, c);
      c.acc += ',';
    }
    c.acc += ']';
  } else {
    c.acc += '{';
    const binary = v.get('kind') === 'binary' && typeof v.get('data') === 'string';
    for (const [k, x] of v) {
      c.acc += `${JSON.stringify(k)}:`;
      if (binary && k === 'data') c.acc += JSON.stringify(canonicalBase64(x as string));
      else canonValue(x, c);
      c.acc += ',';
    }
    c.acc += '}';
  }
}

/**
 * The object's keys in `Array.prototype.sort` order (UTF-16 code units; keys are distinct), by
 * insertion: a model has a dozen fields, where the builtin sort's comparator calls cost more.
 */
function sortKeys(keys: readonly string[]): string[] {
  const out: string[] = [];
  for (const k of keys) {
    let j = out.length;
    out.push(k);
    while (j > 0 && out[j - 1]! > k) {
      out[j] = out[j - 1]!;
      j--;
    }
    out[j] = k;
  }
  return out;
}

/** Key lists already sorted, by their first key: a store's messages and parts repeat a few shapes. */
const sortedShapes = new Map<string, Array<{ readonly keys: readonly string[]; readonly sorted: readonly string[] }>>();
/** Shapes kept per first key, and first keys: past them, a list is sorted each time (a store of ever-new shapes holds no more). */
const SHAPES_PER_KEY = 16;
const FIRST_KEYS = 256;

/** `obj`'s keys sorted (see sortKeys); the same list for an object of a shape met before (read it, never change it). */
function sortedKeys(obj: JsonObject): readonly string[] {
  const keys: string[] = [];
  for (const k of obj.keys()) keys.push(k);
  if (keys.length < 2) return keys;
  let shapes = sortedShapes.get(keys[0]!);
  if (shapes === undefined) {
    if (sortedShapes.size >= FIRST_KEYS) return sortKeys(keys);
    sortedShapes.set(keys[0]!, (shapes = []));
  }
  for (const shape of shapes) if (sameKeys(shape.keys, keys)) return shape.sorted;
  const sorted = sortKeys(keys);
  if (shapes.length < SHAPES_PER_KEY) shapes.push({ keys, sorted });
  return sorted;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A pydantic model's fields: order-free, null/default fields equal to absent ones. */
function canonModel(obj: JsonObject, c: Canon, skip?: Set<string>): void {
  const keys = sortedKeys(obj);
  c.acc += '<';
  for (const k of keys) {
    if (skip?.has(k)) continue;
    const v = obj.get(k)!;
    if (v === null) continue;
    if ((k === 'state' && v === 'complete') || (k === 'outcome' && v === 'success')) continue;
    c.acc += `${k}=`;
    if (k === 'usage' && isObject(v)) canonModel(v, c);
    else if (k === 'data' && typeof v === 'string' && obj.get('kind') === 'binary') c.acc += JSON.stringify(canonicalBase64(v));
    else if (k === 'content' && isArray(v) && obj.get('part_kind') === 'user-prompt') {
      // user-prompt content items are typed models too (tool-return content stays free-form)
      c.acc += '[';
      for (const item of v) {
        if (isObject(item)) canonModel(item, c);
        else canonValue(item, c);
        c.acc += ',';
      }
      c.acc += ']';
    } else canonValue(v, c);
    c.acc += ';';
  }
  c.acc += '>';
}

const SKIPPED_IN_HEAD = {
  request: new Set([...KEYLESS_FIELDS.request, 'parts']),
  response: new Set([...KEYLESS_FIELDS.response, 'parts']),
} as const;

/** Long string values are hashed in slices of this many code units. */
export const LONG_STRING = 1 << 20;

/** The SHA-1 of pieces of which some are LongStrings: hashed in slices, the same bytes as the joined text's. */
function digest(parts: Piece[], long: number): string {
  const h = createHash('sha1');
  for (const p of parts) {
    if (typeof p === 'string') {
      h.update(p);
      continue;
    }
    // the same bytes as JSON.stringify of the whole: no slice ends between the halves of a surrogate pair
    const s = p.value;
    h.update('"');
    for (let i = 0; i < s.length; ) {
      let end = Math.min(s.length, i + long);
      const last = s.charCodeAt(end - 1);
      if (end < s.length && last >= 0xd800 && last <= 0xdbff) end++;
      h.update(JSON.stringify(s.slice(i, end)).slice(1, -1));
      i = end;
    }
    h.update('"');
  }
  return h.digest('base64');
}

/** `long`: where a string value starts to be hashed in slices (tests lower it; the keys do not change). */
export function messageKeys(m: Message, long = LONG_STRING): MessageKeys {
  const head = canon(long);
  canonModel(m.raw, head, SKIPPED_IN_HEAD[m.kind]);
  head.acc += '|';
  let sliced = head.sliced;
  const parts: Canon[] = [];
  // instruction-delta parts: in the strict key only
  const deltas: boolean[] = [];
  for (const p of m.parts) {
    const one = canon(long);
    canonModel(p, one);
    one.acc += '&';
    sliced ||= one.sliced;
    parts.push(one);
    deltas.push(m.kind === 'request' && p.get('part_kind') === 'instruction-delta');
  }
  if (!sliced) {
    // no LongString (almost every message): each canon is its `acc` alone, the keys' texts are plain concatenations
    let loose = head.acc;
    let strict: string | null = null;
    for (let i = 0; i < parts.length; i++) {
      const text = parts[i]!.acc;
      if (deltas[i]) strict ??= loose;
      else loose += text;
      if (strict !== null) strict += text;
    }
    const looseKey = hash('sha1', loose, 'base64');
    return { loose: looseKey, strict: strict === null ? looseKey : hash('sha1', strict, 'base64') };
  }
  const loose: Piece[] = pieces(head).slice();
  let strict: Piece[] | null = null;
  for (let i = 0; i < parts.length; i++) {
    const text = pieces(parts[i]!);
    if (deltas[i]) strict ??= loose.slice();
    else loose.push(...text);
    strict?.push(...text);
  }
  // a LongString anywhere takes both through the sliced path (it hashes plain pieces the same)
  const looseKey = digest(loose, long);
  return { loose: looseKey, strict: strict ? digest(strict, long) : looseKey };
}
