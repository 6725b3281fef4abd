/**
 * Shell-style name patterns, as `--tool 'delete_*,drop_?'` takes them: `*` any run of characters, `?` one
 * character, `[abc]`/`[a-z]`/`[!a]` a set; a backslash makes the next character literal. A name matches
 * the set when it matches any pattern, whole and case-sensitively (tool names are identifiers).
 */
export class GlobSet implements Iterable<string> {
  private readonly exact = new Set<string>();
  private readonly regexes: RegExp[] = [];

  constructor(readonly patterns: readonly string[]) {
    for (const p of patterns) {
      if (/[*?[\\]/.test(p)) this.regexes.push(globRegExp(p));
      else this.exact.add(p);
    }
  }

  get size(): number {
    return this.patterns.length;
  }

  has(name: string): boolean {
    return this.exact.has(name) || this.regexes.some((r) => r.test(name));
  }

  [Symbol.iterator](): Iterator<string> {
    return this.patterns[Symbol.iterator]();
  }
}

const SPECIAL = /[.*+?^${}()|[\]\\/]/g;

/** The anchored regular expression of one pattern (a `[` without its `]` is a literal `[`). */
export function globRegExp(pattern: string): RegExp {
  const cps = Array.from(pattern);
  let out = '';
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i]!;
    if (c === '\\' && i + 1 < cps.length) out += cps[++i]!.replace(SPECIAL, '\\$&');
    else if (c === '*') out += '[^]*';
    else if (c === '?') out += '[^]';
    else if (c === '[') {
      const close = cps.indexOf(']', i + (cps[i + 1] === '!' || cps[i + 1] === '^' ? 3 : 2));
      if (close < 0) {
        out += '\\[';
        continue;
      }
      let body = cps.slice(i + 1, close);
      const negate = body[0] === '!' || body[0] === '^';
      if (negate) body = body.slice(1);
      out += `[${negate ? '^' : ''}${body.map((b) => (b === '-' ? '-' : b.replace(/[\]\\^[]/g, '\\$&'))).join('')}]`;
      i = close;
    } else out += c.replace(SPECIAL, '\\$&');
  }
  return new RegExp(`^${out}$`, 'u');
}
