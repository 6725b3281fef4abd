import { tokenizerNamed, type Tokenizer } from '../text/tokenizer.js';
import type { ClipRule, RenderedPart } from './message.js';
import { codePointLength, codePointSlice } from '../py/repr.js';

/** What clipping reads of a rendered part. */
export type Clippable = Pick<RenderedPart, 'label' | 'text' | 'clip'>;

const LIMIT: Record<Exclude<ClipRule, 'none'>, number> = { tail500: 500, tail200: 200, head200: 200 };

function codePointIndex(text: string, utf16: number): number {
  return codePointLength(text.slice(0, utf16));
}

/** Code-point span of the first token whose lowercase form is a query term, or null. */
function firstQueryTerm(text: string, terms: ReadonlySet<string>, tok: Tokenizer): [number, number] | null {
  if (terms.size === 0) return null;
  let found: [number, number] | null = null;
  tok.forEachSpan(text, (t, start, end) => {
    if (!terms.has(t)) return false;
    const s = codePointIndex(text, start);
    found = [s, s + codePointLength(text.slice(start, end))];
    return true; // the first one is the window's
  });
  return found;
}

/**
 * A clipped field: `body` is the shown slice of the text; `cutStart`/`cutEnd` say whether text was cut
 * there, and `markEnd` whether the reference marks the end cut with `...` (the classic 200-point head clip
 * of system text does not). A start cut is always marked.
 */
export interface ClippedField {
  readonly label: string;
  /** The whole field text (what the index sees after the label). */
  readonly text: string;
  /** Code-point offset of `body` in `text`. */
  readonly start: number;
  readonly body: string;
  readonly cutStart: boolean;
  readonly cutEnd: boolean;
  readonly markEnd: boolean;
}

/**
 * The clip of one field (spec §4.5, §4.6): the classic head clip, or, when the first query term lies past
 * the cutoff, a window of the same size around it, marked on each clipped side.
 */
export function clipFieldParts(
  label: string,
  text: string,
  rule: ClipRule,
  terms: ReadonlySet<string>,
  tok: Tokenizer = tokenizerNamed(undefined),
): ClippedField {
  const whole = { label, text, start: 0, body: text, cutStart: false, cutEnd: false, markEnd: false };
  if (rule === 'none') return whole;
  const limit = LIMIT[rule];
  const length = codePointLength(text);
  if (length <= limit) return whole;
  const match = firstQueryTerm(text, terms, tok);
  if (!match || match[1] <= limit) {
    return { label, text, start: 0, body: codePointSlice(text, 0, limit), cutStart: false, cutEnd: true, markEnd: rule !== 'head200' };
  }
  const [s, e] = match;
  const start = e - s > limit ? s : Math.min(Math.max(s - Math.floor((limit - (e - s)) / 2), 0), length - limit);
  const cutEnd = start + limit < length;
  return { label, text, start, body: codePointSlice(text, start, start + limit), cutStart: start > 0, cutEnd, markEnd: cutEnd };
}

/** A clipped field as the reference prints it: ASCII `...` on the marked sides. */
export function clippedText(f: ClippedField): string {
  return (f.cutStart ? '...' : '') + f.body + (f.markEnd ? '...' : '');
}

/** A field's display text (spec §4.5, §4.6), without its label. */
export function clipField(text: string, rule: ClipRule, terms: ReadonlySet<string>): string {
  return clippedText(clipFieldParts('', text, rule, terms));
}

/** Every field of a message, clipped for display. */
export function clipFields(
  fields: readonly Clippable[],
  terms: ReadonlySet<string>,
  tok: Tokenizer = tokenizerNamed(undefined),
): ClippedField[] {
  return fields.map((f) => clipFieldParts(f.label, f.text, f.clip, terms, tok));
}

/** The display line of clipped fields, without its `[n] ` prefix. */
export function joinClipped(fields: readonly ClippedField[]): string {
  let out = '';
  for (let i = 0; i < fields.length; i++) {
    if (i) out += '\n';
    out += fields[i]!.label + clippedText(fields[i]!);
  }
  return out;
}

/** The message's display line without its `[n] ` prefix. */
export function displayText(fields: readonly Clippable[], terms: ReadonlySet<string>): string {
  return joinClipped(clipFields(fields, terms));
}
