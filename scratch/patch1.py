p='src/history/replay.ts'
s=open(p).read()
def rep(a,b):
    global s
    assert a in s, a[:60]
    s=s.replace(a,b)
rep('''import { parseJson, splitTopLevelArray } from './json-parse.js';
import type { JsonValue } from './json-value.js';
import { messageKeys, type MessageKeys } from './keys.js';''','''import { objectMembers, parseJson, splitTopLevelArray } from './json-parse.js';
import type { JsonValue } from './json-value.js';
import { KEYLESS_FIELDS, messageKeys, type MessageKeys } from './keys.js';''')
rep('''interface ParsedSnapshot {
  readonly text: string;''','''/** A parsed snapshot, kept so that the next one (of the run, or of a later run of the conversation) can reuse it. */
export interface ParsedSnapshot {
  readonly text: string;''')
rep(''' * the changed tail of each snapshot is scanned and parsed.
 */''',''' * the changed tail of each snapshot is scanned and parsed. A run's first snapshot is compared with
 * `seed`, the last snapshot of the conversation's previous run, whose history it usually inherits.
 * An element that differs from the previous snapshot's element at its position only in what core
 * stamps later (timestamp, run id, instructions) reuses that element's parts and keys.
 */''')
rep('''    stored: readonly StoredPosition[] = [],
  ) {''','''    stored: readonly StoredPosition[] = [],
    seed: ParsedSnapshot | null = null,
  ) {
    this.previous = seed;''')
rep('''  get length(): number {''','''  /** The last snapshot parsed (or the seed): what a later run of the conversation may start from. */
  get lastSnapshot(): ParsedSnapshot | null {
    return this.previous;
  }

  get length(): number {''')
old=s[s.index("    const elements: ParsedElement[] = reused > 0"):s.index("    return { text: value, ranges, elements };")]
rep(old,'''    const elements: ParsedElement[] = reused > 0 ? prev!.elements.slice(0, reused) : [];
    for (let i = reused; i < ranges.length; i++) {
      const [s, e] = ranges[i]!;
      const marked = mayHaveMarkers(value.slice(s, e));
      const restamped = prev && i < prev.ranges.length && !marked ? restampedElement(prev, i, value, s, e) : null;
      if (restamped) {
        elements.push(restamped);
        continue;
      }
      let json: JsonValue = parseJson(value, s, e);
      if (marked) json = restoreMedia(json, this.media);
      const message = toMessage(json, i);
      elements.push({ message, summary: isSummaryArtifact(message), keys: messageKeys(message) });
    }
''')
rep('''export function countUnknownParts(''','''/**
 * The element at `text[s, e)` when it equals `prev`'s element `i` except for values of the fields the
 * keys leave out (so keys, parts and summary status carry over), or null when that cannot be shown
 * from the text: then the element is parsed in full. Values that differ are parsed here; the rest is
 * byte-identical to text that parsed before, and `objectMembers` checked the punctuation around it.
 */
function restampedElement(prev: ParsedSnapshot, i: number, text: string, s: number, e: number): ParsedElement | null {
  const old = prev.elements[i]!;
  const [ps, pe] = prev.ranges[i]!;
  const a = objectMembers(prev.text, ps, pe);
  const b = a && objectMembers(text, s, e);
  if (!a || !b || a.length !== b.length || a.length !== old.message.raw.size * 4) return null;
  const keyless = KEYLESS_FIELDS[old.message.kind];
  let raw: Map<string, JsonValue> | null = null;
  for (let m = 0; m < b.length; m += 4) {
    const keyText = text.slice(b[m]!, b[m + 1]!);
    if (keyText !== prev.text.slice(a[m]!, a[m + 1]!)) return null;
    if (text.slice(b[m + 2]!, b[m + 3]!) === prev.text.slice(a[m + 2]!, a[m + 3]!)) continue;
    // an escaped spelling of a field name is not recognized here and takes the full parse
    const key = keyText.slice(1, -1);
    if (!keyless.has(key)) return null;
    try {
      (raw ??= new Map(old.message.raw)).set(key, parseJson(text, b[m + 2]!, b[m + 3]!));
    } catch {
      return null; // the full parse reports it
    }
  }
  if (!raw) return old; // only whitespace differs
  const message: Message = { kind: old.message.kind, raw, parts: old.message.parts };
  return { message, summary: old.summary, keys: old.keys };
}

export function countUnknownParts(''')
open(p,'w').write(s)
