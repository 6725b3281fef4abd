import type { Section } from '../history/attribution.js';
import type { RecordMessage } from '../history/replay.js';
import type { RenderedField } from '../render/fields.js';
import { indexText } from '../render/fields.js';
import { renderMessage } from '../render/message.js';
import type { TermStats } from './bm25.js';
import { TOKEN_PATTERN } from './tokenize.js';

/** One BM25 document: a message of a section, with its position in the run's full record. */
export interface Document {
  readonly section: number;
  readonly position: number;
  readonly fields: readonly RenderedField[];
  readonly text: string;
}

const rendered = new WeakMap<RecordMessage, { fields: RenderedField[]; text: string }>();

/** Rendering is a pure function of the message; a record shared by several scopes renders once. */
export function renderRecordMessage(m: RecordMessage): { fields: RenderedField[]; text: string } {
  let r = rendered.get(m);
  if (!r) {
    const fields = renderMessage(m.message);
    r = { fields, text: indexText(fields) };
    rendered.set(m, r);
  }
  return r;
}

/** The flattened documents of all sections, in section order then message order (spec §5.2). */
export function buildDocuments(sections: readonly Section[]): Document[] {
  const docs: Document[] = [];
  sections.forEach((s, si) => {
    for (let i = s.start; i < s.record.length; i++) {
      const { fields, text } = renderRecordMessage(s.record[i]!);
      docs.push({ section: si, position: i, fields, text });
    }
  });
  return docs;
}

/** Term statistics computed by scanning every document once for the given query terms. */
export function scanTermStats(docs: readonly Document[], terms: readonly string[]): TermStats {
  const wanted = new Set(terms);
  const lengths = new Int32Array(docs.length);
  const postings = new Map<string, Array<[number, number]>>(terms.map((t) => [t, []]));
  let total = 0;
  const tf = new Map<string, number>();
  for (let d = 0; d < docs.length; d++) {
    let dl = 0;
    tf.clear();
    for (const m of docs[d]!.text.matchAll(TOKEN_PATTERN)) {
      dl++;
      const t = m[0].toLowerCase();
      if (wanted.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
    }
    lengths[d] = dl;
    total += dl;
    for (const [t, f] of tf) postings.get(t)!.push([d, f]);
  }
  return {
    n: docs.length,
    totalLength: total,
    docLength: (d) => lengths[d]!,
    postings: (t) => postings.get(t) ?? [],
  };
}
