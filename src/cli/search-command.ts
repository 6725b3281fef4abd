import { Command, Option } from 'commander';
import { colorEnabled, makeChalk, type ColorChoice } from '../output/color.js';
import { escapeForTerminal } from '../output/escape.js';
import { humanText } from '../output/human.js';
import { searchJson } from '../output/json.js';
import { toolText } from '../output/tool-text.js';
import { searchStore } from '../index/indexed-search.js';
import type { SearchOptions, SearchOutcome } from '../search/search.js';
import { openStore } from '../store/open.js';
import { EXIT_FOUND, EXIT_NOT_FOUND, UsageError } from './errors.js';
import { reportWarnings, warn, writeOut } from './io.js';
import { dbOption, parseB, parseCount, parseK1, resolveDb } from './options.js';

interface SearchFlags {
  db?: string;
  conversation?: string;
  scope?: string;
  run?: string;
  maxMatches: string;
  context: string;
  bm25K1: string;
  bm25B: string;
  format?: string;
  json?: boolean;
  color: ColorChoice;
  /** a path with --index, false with --no-index */
  index?: string | false;
}

/** Flags → search options, validated in the reference's order (spec §7). */
export function searchOptions(words: string[], f: SearchFlags): SearchOptions {
  const maxMatches = parseCount('--max-matches', f.maxMatches, 'max_matches');
  const contextLines = parseCount('--context', f.context, 'context_lines');
  const k1 = parseK1(f.bm25K1);
  const b = parseB(f.bm25B);
  if (f.scope !== undefined && f.scope !== 'all' && f.scope !== 'conversation') {
    throw new UsageError(`--scope must be 'all' or 'conversation', got ${JSON.stringify(f.scope)}`);
  }
  if (f.scope === 'all' && f.conversation !== undefined) {
    throw new UsageError('--scope all searches every conversation; drop --conversation or --scope all');
  }
  if (f.scope === 'conversation' && f.conversation === undefined) {
    throw new UsageError('--scope conversation needs --conversation <id>');
  }
  if (f.conversation === undefined && f.scope === undefined && f.run === undefined) {
    throw new UsageError('search needs a scope: pass --conversation <id>, --scope all, or --run <id>');
  }
  const scope = f.conversation !== undefined ? 'conversation' : 'all';
  return {
    query: words.join(' '),
    scope,
    conversationId: f.conversation ?? null,
    runId: f.run ?? null,
    maxMatches,
    contextLines,
    bm25: { k1, b },
  };
}

function render(outcome: SearchOutcome, f: SearchFlags): string {
  if (f.json) return JSON.stringify(searchJson(outcome), null, 2);
  const format = f.format ?? 'human';
  if (format === 'tool') {
    const text = toolText(outcome);
    // byte-exact for pipes and files (the parity format); a terminal still never gets raw controls
    return process.stdout.isTTY ? escapeForTerminal(text) : text;
  }
  return humanText(outcome, makeChalk(colorEnabled(f.color, process.stdout)));
}

export function searchCommand(): Command {
  return new Command('search')
    .description('BM25-rank the replayed messages of a store and print excerpts around the hits')
    .argument('<words...>', 'query words (joined by one space; each word is searched independently)')
    .addOption(dbOption())
    .option('--conversation <id>', "search this conversation's runs (the reference's default scope)")
    .addOption(new Option('--scope <scope>', 'all: every run in the store').choices(['all', 'conversation']))
    .option('--run <id>', "search only this run's full record")
    .option('-m, --max-matches <n>', 'most excerpts to print', '10')
    .option('-C, --context <n>', 'messages of context around each hit', '5')
    .option('--bm25-k1 <x>', 'BM25 term-frequency saturation', '1.5')
    .option('--bm25-b <x>', 'BM25 length normalization, 0..1', '0.75')
    .addOption(new Option('--format <format>', 'output format').choices(['human', 'tool']).default('human'))
    .option('--json', 'one JSON document with every hit (schema_version 1)')
    .addOption(new Option('--color <when>', 'colour: auto, always or never').choices(['auto', 'always', 'never']).default('auto'))
    .option('--index <path>', 'persistent index file (default: one per store under $XDG_CACHE_HOME/convsearch)')
    .option('--no-index', 'replay the store for this search instead of using the index (same results, slower)')
    .addHelpText(
      'after',
      `
Exit status: 0 when at least one hit is printed, 1 when nothing matched, 2 on an error.

Examples:
  convsearch search refund idempotency --db sessions.db --conversation conv-42
  convsearch search "connection pool" --scope all --max-matches 3 --context 1
  convsearch search timeout --run run-7f3a --format tool
  convsearch search billing --scope all --json | jq -r '.hits[].run_id'`,
    )
    .action((words: string[], flags: SearchFlags) => {
      const options = searchOptions(words, flags);
      const store = openStore(resolveDb(flags.db));
      try {
        const outcome = searchStore(store, options, flags.index === false ? false : { path: flags.index }, {
          onFallback: (reason) => warn(`index unavailable, searching without it: ${reason}`),
        });
        writeOut(render(outcome, flags) + '\n');
        reportWarnings(outcome.warnings);
        process.exitCode = outcome.kind === 'found' && outcome.hits.length > 0 ? EXIT_FOUND : EXIT_NOT_FOUND;
      } finally {
        store.close();
      }
    });
}
