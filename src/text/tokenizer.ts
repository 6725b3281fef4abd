import { forEachCjkSpan, forEachCjkToken } from './cjk.js';
import { forEachToken, tokenPattern } from './tokenize.js';

/** The tokenizers a search may rank with: `default` is the reference's (parity), `cjk` is not. */
export const TOKENIZERS = ['default', 'cjk'] as const;
export type TokenizerName = (typeof TOKENIZERS)[number];

export function isTokenizer(s: string): s is TokenizerName {
  return (TOKENIZERS as readonly string[]).includes(s);
}

/**
 * One tokenizer, everything tokenizes through: ranking, phrases, match windows and highlighting use the
 * same one, so what is shown as a match is what was counted.
 */
export interface Tokenizer {
  readonly name: TokenizerName;
  /** Whether the ranking is the reference's. */
  readonly parity: boolean;
  /** Visits each lowercased token in order; returns how many there were (see `forEachToken`). */
  forEachToken(text: string, visit: (token: string) => void, lengths?: ReadonlySet<number>): number;
  /** Visits each token with its UTF-16 span in `text`, until `visit` returns true. */
  forEachSpan(text: string, visit: (token: string, start: number, end: number) => boolean | void): void;
}

const DEFAULT: Tokenizer = {
  name: 'default',
  parity: true,
  forEachToken,
  forEachSpan(text, visit) {
    for (const m of text.matchAll(tokenPattern())) if (visit(m[0].toLowerCase(), m.index!, m.index! + m[0].length) === true) return;
  },
};

const CJK: Tokenizer = { name: 'cjk', parity: false, forEachToken: forEachCjkToken, forEachSpan: forEachCjkSpan };

export function tokenizerNamed(name: TokenizerName | undefined): Tokenizer {
  return name === 'cjk' ? CJK : DEFAULT;
}

export function tokenizeWith(tok: Tokenizer, text: string): string[] {
  const out: string[] = [];
  tok.forEachToken(text, (t) => out.push(t));
  return out;
}

/** Query tokens deduplicated, first occurrence kept (spec §5.2). */
export function queryTokensWith(tok: Tokenizer, query: string): string[] {
  return [...new Set(tokenizeWith(tok, query))];
}
