import type { ChalkInstance } from 'chalk';
import { formatScore1f } from '../render/python.js';
import type { Hit, SearchOutcome } from '../search/search.js';
import { TOKEN_PATTERN } from '../search/tokenize.js';
import { queryTokens } from '../search/tokenize.js';
import { escapeForTerminal, escapeInline } from './escape.js';
import { toolText } from './tool-text.js';

/** Escapes store text and highlights every token that is a query term, as the tokenizer sees it. */
export function highlight(text: string, terms: ReadonlySet<string>, c: ChalkInstance): string {
  if (terms.size === 0 || c.level === 0) return escapeForTerminal(text);
  let out = '';
  let last = 0;
  for (const m of text.matchAll(TOKEN_PATTERN)) {
    if (!terms.has(m[0].toLowerCase())) continue;
    out += escapeForTerminal(text.slice(last, m.index)) + c.bold.red(escapeForTerminal(m[0]));
    last = m.index! + m[0].length;
  }
  return out + escapeForTerminal(text.slice(last));
}

function hitHeader(h: Hit, c: ChalkInstance): string {
  const parts = [
    c.bold(`#${h.rank}`),
    c.yellow(`score ${formatScore1f(h.score)}`),
    c.cyan(`run ${escapeInline(h.run.runId)}`),
    h.run.conversationId === null ? c.dim('no conversation') : c.magenta(`conversation ${escapeInline(h.run.conversationId)}`),
    `message [${h.messageIndex}]`,
  ];
  if (h.run.agentName) parts.splice(4, 0, c.blue(`agent ${escapeInline(h.run.agentName)}`));
  return parts.join(c.dim(' · '));
}

function excerptLines(h: Hit, terms: ReadonlySet<string>, c: ChalkInstance): string[] {
  const out: string[] = [];
  for (const line of h.excerpt) {
    const marker = line.hit ? c.green('>') : ' ';
    const number = `[${line.index}]`;
    const indent = ' '.repeat(number.length + 3);
    const body = line.text === '' ? c.dim('[no text content]') : highlight(line.text, terms, c);
    const rows = body.split('\n');
    const styled = line.hit ? rows : rows.map((r) => c.dim(r));
    out.push(`${marker} ${line.hit ? c.bold(number) : c.dim(number)} ${styled[0]}`);
    for (const r of styled.slice(1)) out.push(indent + r);
  }
  return out;
}

/** The terminal rendering of a search: a header per hit, the hit line marked, context dimmed. */
export function humanText(outcome: SearchOutcome, c: ChalkInstance): string {
  if (outcome.kind !== 'found') return escapeForTerminal(toolText(outcome));
  const terms = new Set(queryTokens(outcome.options.query));
  const blocks = outcome.hits.map((h) => [hitHeader(h, c), ...excerptLines(h, terms, c)].join('\n'));
  return blocks.join('\n\n');
}
