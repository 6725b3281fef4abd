/**
 * Python `json.dumps` emulation for writing stores byte-identical to the Python libraries.
 *
 * `pyJsonDumpsAscii(value)` equals Python's `json.dumps(value)` with default arguments:
 * `ensure_ascii=True`, separators `", "` / `": "`, `allow_nan=True`, insertion key order.
 *
 * Value mapping (JS -> Python):
 * - plain objects / `Map<string, unknown>` -> dict (insertion order; note that JS objects put
 *   integer-like keys such as "2" first: use a Map when that matters)
 * - arrays -> list; strings -> str; booleans -> bool; `null` -> None
 * - integral JS numbers -> int (`1` -> `1`); other numbers -> float (`0.5`, `1e-05`, `1e+16`, `NaN`)
 * - `pyFloat(n)` -> float even when integral (`pyFloat(1)` -> `1.0`)
 * - `rawNumber('123456789012345678901')` -> that lexeme verbatim (big ints, exact decimals)
 * - `bigint` -> int
 * `undefined`, functions and symbols are rejected (Python has no such value).
 */

/** A number that Python holds as a `float`, so `pyFloat(1)` dumps as `1.0`. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** A numeric JSON lexeme emitted verbatim (for ints beyond 2^53, or exact decimals). */
export class RawNumber {
  readonly lexeme: string;
  constructor(lexeme: string) {
    if (!/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$|^(?:NaN|-?Infinity)$/.test(lexeme)) {
      throw new TypeError(`not a numeric lexeme: ${JSON.stringify(lexeme)}`);
    }
    this.lexeme = lexeme;
  }
}

export function pyFloat(value: number): PyFloat {
  return new PyFloat(value);
}

export function rawNumber(lexeme: string): RawNumber {
  return new RawNumber(lexeme);
}

/** Python `repr(float)`: shortest round-trip digits, exponent form when exp < -4 or exp >= 16. */
export function pyFloatRepr(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const sign = value < 0 ? '-' : '';
  // toExponential() without an argument yields the shortest digits that round-trip.
  const [mantissa, expPart] = Math.abs(value).toExponential().split('e');
  const digits = mantissa!.replace('.', '');
  const exp = Number(expPart);
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp);
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${e < 10 ? '0' : ''}${e}`;
  }
  if (exp < 0) {
    return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  }
  const intLen = exp + 1;
  if (digits.length <= intLen) {
    return `${sign}${digits}${'0'.repeat(intLen - digits.length)}.0`;
  }
  return `${sign}${digits.slice(0, intLen)}.${digits.slice(intLen)}`;
}

function pyIntRepr(value: number): string {
  if (Math.abs(value) < 1e21) return Object.is(value, -0) ? '0' : String(value);
  return BigInt(value).toString();
}

function pyNumber(value: number): string {
  return Number.isInteger(value) ? pyIntRepr(value) : pyFloatRepr(value);
}

const SHORT_ESCAPES: Record<number, string> = {
  34: '\\"',
  92: '\\\\',
  8: '\\b',
  12: '\\f',
  10: '\\n',
  13: '\\r',
  9: '\\t',
};

function hex4(code: number): string {
  return '\\u' + code.toString(16).padStart(4, '0');
}

/** Python `json.encoder.py_encode_basestring_ascii` (ensure_ascii=True) / `py_encode_basestring`. */
export function pyJsonString(s: string, ensureAscii = true): string {
  let out = '"';
  let runStart = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const plain = ensureAscii ? c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c : c >= 0x20 && c !== 0x22 && c !== 0x5c;
    if (plain) continue;
    out += s.slice(runStart, i);
    out += SHORT_ESCAPES[c] ?? hex4(c);
    runStart = i + 1;
  }
  return out + s.slice(runStart) + '"';
}

export interface PyJsonOptions {
  /** Python's `ensure_ascii` (default true). */
  ensureAscii?: boolean;
}

/** Python `json.dumps(value, ensure_ascii=...)` with default separators. */
export function pyJsonDumps(value: unknown, options: PyJsonOptions = {}): string {
  const ensureAscii = options.ensureAscii ?? true;
  const parts: string[] = [];
  const stack = new Set<object>();

  const emit = (v: unknown): void => {
    if (v === null) {
      parts.push('null');
    } else if (v === true) {
      parts.push('true');
    } else if (v === false) {
      parts.push('false');
    } else if (typeof v === 'string') {
      parts.push(pyJsonString(v, ensureAscii));
    } else if (typeof v === 'number') {
      parts.push(pyNumber(v));
    } else if (typeof v === 'bigint') {
      parts.push(v.toString());
    } else if (v instanceof PyFloat) {
      parts.push(pyFloatRepr(v.value));
    } else if (v instanceof RawNumber) {
      parts.push(v.lexeme);
    } else if (typeof v === 'object') {
      if (stack.has(v)) throw new TypeError('Circular reference detected');
      stack.add(v);
      if (Array.isArray(v)) {
        parts.push('[');
        v.forEach((item, i) => {
          if (i > 0) parts.push(', ');
          emit(item);
        });
        parts.push(']');
      } else {
        const entries: Array<[string, unknown]> =
          v instanceof Map ? [...(v as Map<unknown, unknown>).entries()].map(([k, x]) => [dictKey(k), x]) : Object.entries(v);
        parts.push('{');
        entries.forEach(([k, x], i) => {
          if (i > 0) parts.push(', ');
          parts.push(pyJsonString(k, ensureAscii), ': ');
          emit(x);
        });
        parts.push('}');
      }
      stack.delete(v);
    } else {
      throw new TypeError(`Object of type ${typeof v} is not JSON serializable`);
    }
  };

  emit(value);
  return parts.join('');
}

function dictKey(k: unknown): string {
  if (typeof k === 'string') return k;
  if (k === null) return 'null';
  if (k === true) return 'true';
  if (k === false) return 'false';
  if (typeof k === 'number') return pyNumber(k);
  if (typeof k === 'bigint') return k.toString();
  throw new TypeError(`keys must be str, int, float, bool or None, not ${typeof k}`);
}

/** Python `json.dumps(value)` with all defaults (ensure_ascii=True). */
export function pyJsonDumpsAscii(value: unknown): string {
  return pyJsonDumps(value, { ensureAscii: true });
}
