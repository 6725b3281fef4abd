import type { ChalkInstance } from 'chalk';
import type { Explain } from '../search/explain.js';
import { escapeInline } from './escape.js';
import { displayWidth } from './width.js';

const num = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(4));

/**
 * `--explain` under a hit's header: the scope's BM25 figures, one line per query term (tf, df, idf and
 * what it adds), and the sum, which is the score.
 */
export function explainLines(e: Explain, c: ChalkInstance): string[] {
  const names = e.terms.map((t) => escapeInline(t.term));
  const width = Math.max(...names.map(displayWidth));
  const col = (values: string[]): string[] => {
    const w = Math.max(...values.map((v) => v.length));
    return values.map((v) => v.padStart(w));
  };
  const tf = col(e.terms.map((t) => String(t.tf)));
  const df = col(e.terms.map((t) => String(t.df)));
  const idf = col(e.terms.map((t) => num(t.idf)));
  const add = col(e.terms.map((t) => num(t.contribution)));
  return [
    c.dim(`    explain: N ${e.n} · dl ${e.dl} · avgdl ${num(e.avgdl)} · k1 ${e.k1} · b ${e.b}`),
    ...e.terms.map((t, i) => {
      const line = `      ${names[i]!}${' '.repeat(width - displayWidth(names[i]!))}  tf ${tf[i]}  df ${df[i]}  idf ${idf[i]}  + ${add[i]}`;
      return t.tf === 0 ? c.dim(line) : line;
    }),
    c.dim(`      = ${num(e.score)}`),
  ];
}
