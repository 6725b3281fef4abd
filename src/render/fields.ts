/**
 * A rendered part: its role label and the text that follows it. The index sees `label + text` in full;
 * the display clips `text` by `clip` (spec §4.1, §4.2, §4.5).
 */
export type ClipRule =
  /** user, assistant, tool return, speech: 500 code points, then `...` */
  | 'tail500'
  /** tool-call arguments: 200 code points, then `...` */
  | 'tail200'
  /** system text and instruction deltas: 200 code points, no ellipsis */
  | 'head200'
  /** retry prompts and the compaction placeholder: never clipped */
  | 'none';

export interface RenderedField {
  readonly label: string;
  readonly text: string;
  readonly clip: ClipRule;
}

/** The message's index line: what BM25 tokenizes (part lines joined by a newline). */
export function indexText(fields: readonly RenderedField[]): string {
  let out = '';
  for (let i = 0; i < fields.length; i++) {
    if (i) out += '\n';
    out += fields[i]!.label + fields[i]!.text;
  }
  return out;
}
