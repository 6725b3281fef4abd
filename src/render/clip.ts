import { TOKEN_PATTERN } from '../search/tokenize.js';
import type { ClipRule, RenderedField } from './fields.js';
import { codePointLength, codePointSlice } from './python.js';

const LIMIT: Record<Exclude<ClipRule, 'none'>, number> = { tail500: 500, tail200: 200, head200: 200 };

function codePointIndex(text: string, utf16: number): number {
  return codePointLength(text.slice(0, utf16));
}

/** Code-point span of the first token whose lowercase form is a query term, or null. */
function firstQueryTerm(text: string, terms: ReadonlySet<string>): [number, number] | null {
  if (terms.size === 0) return null;
  TOKEN_PATTERN.lastIndex = 0;
  for (const m of text.matchAll(TOKEN_PATTERN)) {
    if (terms.has(m[0].toLowerCase())) {
      const s = codePointIndex(text, m.index!);
      return [s, s + codePointLength(m[0])];
    }
  }
  return null;
}

/**
 * A field's display text (spec §4.5, §4.6): the classic head clip, or, when the first query term lies past
 * the cutoff, a window of the same size around it with `...` on each clipped side.
 */
export function clipField(text: string, rule: ClipRule, terms: ReadonlySet<string>): string {
  if (rule === 'none') return text;
  const limit = LIMIT[rule];
  const length = codePointLength(text);
  if (length <= limit) return text;
  const match = firstQueryTerm(text, terms);
  if (!match || match[1] <= limit) {
    const head = codePointSlice(text, 0, limit);
    return rule === 'head200' ? head : head + '...';
  }
  const [s, e] = match;
  let start = e - s > limit ? s : Math.min(Math.max(s - Math.floor((limit - (e - s)) / 2), 0), length - limit);
  const body = codePointSlice(text, start, start + limit);
  return (start > 0 ? '...' : '') + body + (start + limit < length ? '...' : '');
}

/** The message's display line without its `[n] ` prefix. */
export function displayText(fields: readonly RenderedField[], terms: ReadonlySet<string>): string {
  let out = '';
  for (let i = 0; i < fields.length; i++) {
    if (i) out += '\n';
    out += fields[i]!.label + clipField(fields[i]!.text, fields[i]!.clip, terms);
  }
  return out;
}
