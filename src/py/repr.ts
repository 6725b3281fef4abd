/**
 * Byte-exact Python renderings of {@link JsonValue}s: `repr()`, `str()`, `json.dumps(...,
 * ensure_ascii=False)`, `format(x, '.1f')`, and code-point based `len()` / slicing.
 */
import { PyFloat, PyInt, type JsonValue } from './json-value.js';

// ---------------------------------------------------------------------------------------------
// Floats
// ---------------------------------------------------------------------------------------------

/**
 * Python `repr(float)`: the shortest round-tripping digits (the same digits JS picks), formatted
 * in scientific notation when the decimal exponent is < -4 or >= 16, otherwise positional with at
 * least one fractional digit.
 */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const neg = x < 0;
  // toExponential() without an argument yields the shortest round-trip digits: "d.ddde+N".
  const ex = (neg ? -x : x).toExponential();
  const ePos = ex.indexOf('e');
  const mant = ex.slice(0, ePos);
  const exp = Number(ex.slice(ePos + 1));
  const digits = mant.length > 1 ? mant[0] + mant.slice(2) : mant;
  let body: string;
  if (exp < -4 || exp >= 16) {
    const absExp = exp < 0 ? -exp : exp;
    body =
      (digits.length > 1 ? digits[0] + '.' + digits.slice(1) : digits) +
      (exp < 0 ? 'e-' : 'e+') +
      (absExp < 10 ? '0' + absExp : String(absExp));
  } else if (exp < 0) {
    body = '0.' + '0'.repeat(-exp - 1) + digits;
  } else if (digits.length > exp + 1) {
    body = digits.slice(0, exp + 1) + '.' + digits.slice(exp + 1);
  } else {
    body = digits + '0'.repeat(exp + 1 - digits.length) + '.0';
  }
  return neg ? '-' + body : body;
}

/** Python `repr(float)` as used by `json.dumps`: NaN / Infinity / -Infinity spelled the JSON way. */
function jsonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  return pyFloatRepr(x);
}

const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer);
// Index of the high 32-bit word of the double in U32 (platform endianness).
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;
const LO = 1 - HI;

/**
 * Python `format(x, '.1f')`: the exact binary value of the double rounded to one decimal,
 * ties (exact halves only) to even; the sign of negative values (and -0.0) is kept, e.g. `'-0.0'`.
 */
export function formatScore1f(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  F64[0] = x;
  const hi = U32[HI];
  const lo = U32[LO];
  const neg = hi >>> 31 === 1;
  const biased = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp: number;
  if (biased === 0) {
    exp = -1074; // subnormal (or zero)
  } else {
    mant |= 1n << 52n;
    exp = biased - 1075;
  }
  // |x| = mant * 2^exp; compute round_half_even(|x| * 10).
  let tenths: bigint;
  if (exp >= 0) {
    tenths = (mant * 10n) << BigInt(exp);
  } else {
    const num = mant * 10n;
    const shift = BigInt(-exp);
    const q = num >> shift;
    const r = num - (q << shift);
    const twice = r << 1n;
    const den = 1n << shift;
    tenths = twice > den || (twice === den && (q & 1n) === 1n) ? q + 1n : q;
  }
  let s = tenths.toString();
  if (s.length < 2) s = '0' + s;
  const body = s.slice(0, -1) + '.' + s.slice(-1);
  return neg ? '-' + body : body;
}

// ---------------------------------------------------------------------------------------------
// Strings
// ---------------------------------------------------------------------------------------------

/** Only printable ASCII other than quotes and backslash: the repr is the string wrapped in quotes. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x26\x28-\x5b\x5d-\x7e]*$/;

// Python's non-printable characters: categories Cc, Cf, Cs, Co, Cn, Zl, Zp, and Zs except U+0020
// (Zs is spelled out to exclude the ASCII space). Plus the characters repr escapes specially: the
// backslash, and in single quotes the quote. Made on first use (a `\p{…}` class: see text/tokenize.ts tokenPattern).
let escapes: { readonly sq: RegExp; readonly dq: RegExp } | undefined;
const reprEscapes = (): NonNullable<typeof escapes> =>
  (escapes ??= {
    sq: /[\\'\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/gu,
    dq: /[\\\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/gu,
  });

function hex(cp: number, width: number): string {
  const h = cp.toString(16);
  return h.length >= width ? h : '0'.repeat(width - h.length) + h;
}

function reprEscape(ch: string): string {
  switch (ch) {
    case '\\':
      return '\\\\';
    case "'":
      return "\\'";
    case '\n':
      return '\\n';
    case '\r':
      return '\\r';
    case '\t':
      return '\\t';
  }
  const cp = ch.codePointAt(0)!;
  if (cp < 0x100) return '\\x' + hex(cp, 2);
  if (cp < 0x10000) return '\\u' + hex(cp, 4);
  return '\\U' + hex(cp, 8);
}

/** Python `repr(str)`. */
export function pyStrRepr(s: string): string {
  if (PLAIN_ASCII.test(s)) return "'" + s + "'";
  if (s.includes("'") && !s.includes('"')) {
    return '"' + s.replace(reprEscapes().dq, reprEscape) + '"';
  }
  return "'" + s.replace(reprEscapes().sq, reprEscape) + "'";
}

/** Characters `json.dumps(..., ensure_ascii=False)` escapes. */
const JSON_ESCAPE = /[\x00-\x1f"\\]/g;
const JSON_SHORT: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

function jsonEscape(ch: string): string {
  return JSON_SHORT[ch] ?? '\\u' + hex(ch.charCodeAt(0), 4);
}

/** Python `json.dumps(s, ensure_ascii=False)` for a string. */
function jsonStr(s: string): string {
  JSON_ESCAPE.lastIndex = 0;
  if (!JSON_ESCAPE.test(s)) return '"' + s + '"';
  JSON_ESCAPE.lastIndex = 0;
  return '"' + s.replace(JSON_ESCAPE, jsonEscape) + '"';
}

// ---------------------------------------------------------------------------------------------
// Containers
// ---------------------------------------------------------------------------------------------

type Frame = { arr: JsonValue[]; i: number; it?: undefined } | { arr?: undefined; i: number; it: Iterator<[string, JsonValue]> };

/**
 * Serialize with Python's container syntax (`[a, b]`, `{k: v}`), iteratively so that deep nesting
 * cannot overflow the JS stack.
 */
function serialize(
  root: JsonValue,
  scalar: (v: JsonValue) => string,
  key: (k: string) => string,
  leaf?: (v: Map<string, JsonValue>) => string | null,
): string {
  let out = '';
  const stack: Frame[] = [];
  let v = root;
  for (;;) {
    const whole = leaf !== undefined && v instanceof Map ? leaf(v) : null;
    if (whole !== null) {
      out += whole;
    } else if (Array.isArray(v)) {
      if (v.length === 0) {
        out += '[]';
      } else {
        out += '[';
        stack.push({ arr: v, i: 1 });
        v = v[0];
        continue;
      }
    } else if (v instanceof Map) {
      if (v.size === 0) {
        out += '{}';
      } else {
        const it = v.entries();
        const first = it.next().value as [string, JsonValue];
        out += '{' + key(first[0]) + ': ';
        stack.push({ it, i: 0 });
        v = first[1];
        continue;
      }
    } else {
      out += scalar(v);
    }
    // Ascend: emit separators / closers until there is a next value to emit.
    for (;;) {
      const top = stack[stack.length - 1];
      if (top === undefined) return out;
      if (top.arr !== undefined) {
        if (top.i < top.arr.length) {
          out += ', ';
          v = top.arr[top.i++];
          break;
        }
        out += ']';
      } else {
        const n = top.it.next();
        if (!n.done) {
          out += ', ' + key(n.value[0]) + ': ';
          v = n.value[1];
          break;
        }
        out += '}';
      }
      stack.pop();
    }
  }
}

function reprScalar(v: JsonValue): string {
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return pyStrRepr(v);
  if (v instanceof PyInt) return v.value.toString();
  if (v instanceof PyFloat) return pyFloatRepr(v.value);
  throw new TypeError('not a JSON scalar');
}

function jsonScalar(v: JsonValue): string {
  if (v === null) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'string') return jsonStr(v);
  if (v instanceof PyInt) return v.value.toString();
  if (v instanceof PyFloat) return jsonFloatRepr(v.value);
  throw new TypeError('not a JSON scalar');
}

/** Python `repr()` of the value `json.loads` would produce. */
export function pyRepr(v: JsonValue): string {
  return serialize(v, reprScalar, pyStrRepr);
}

/** `repr()` where `leaf` may print a whole dict its own way (pydantic-ai objects re-hydrated from dicts). */
export function pyReprWith(v: JsonValue, leaf: (v: Map<string, JsonValue>) => string | null): string {
  return serialize(v, reprScalar, pyStrRepr, leaf);
}

/** Python `str()`: strings as-is, everything else as its repr. */
export function pyStr(v: JsonValue): string {
  return typeof v === 'string' ? v : pyRepr(v);
}

/** Python `json.dumps(v, ensure_ascii=False)` with the default separators `', '` and `': '`. */
export function pyJsonDumps(v: JsonValue): string {
  return serialize(v, jsonScalar, jsonStr);
}

// ---------------------------------------------------------------------------------------------
// Code points
// ---------------------------------------------------------------------------------------------

const HAS_SURROGATE = /[\uD800-\uDFFF]/;

/** Python `len(s)`: code points (a surrogate pair counts 1, a lone surrogate counts 1). */
export function codePointLength(s: string): number {
  if (!HAS_SURROGATE.test(s)) return s.length;
  let n = 0;
  const len = s.length;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** UTF-16 offset of code point index `cp` (0 <= cp <= code point length). */
function utf16Offset(s: string, cp: number): number {
  const len = s.length;
  let i = 0;
  while (cp > 0 && i < len) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    i++;
    cp--;
  }
  return i;
}

/** Python `s[start:end]` in code points (negative indices count from the end; out of range clamps). */
export function codePointSlice(s: string, start: number, end?: number): string {
  if (!HAS_SURROGATE.test(s)) return s.slice(start, end);
  const n = codePointLength(s);
  const a = start < 0 ? Math.max(0, start + n) : Math.min(start, n);
  const b = end === undefined ? n : end < 0 ? Math.max(0, end + n) : Math.min(end, n);
  if (a >= b) return '';
  return s.slice(utf16Offset(s, a), utf16Offset(s, b));
}
