import { Command, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { isRole, ROLES, type Role } from '../history/roles.js';
import { GlobSet } from '../text/glob.js';
import { colorEnabled, makeChalk, type ColorChoice } from '../output/color.js';
import { escapeForTerminal } from '../output/escape.js';
import { humanHits, humanNotice } from '../output/human.js';
import { searchJson, searchNdjson } from '../output/json.js';
import { countLines, plainLines } from '../output/plain.js';
import { runMatchesJson, runMatchesNdjson, runMatchLines } from '../output/run-matches.js';
import type { HitSort } from '../search/order.js';
import { matchNoun, outcomeStats, plural, summaryLine } from '../output/stats.js';
import { toolText } from '../output/tool-text.js';
import { terminalWidth, wrapText } from '../output/width.js';
import { searchStore, type IndexChoice } from '../index/indexed-search.js';
import type { HitFilter, SearchOptions, SearchOutcome } from '../search/search.js';
import { isEmptyFilter } from '../search/filters.js';
import { tokenize } from '../search/tokenize.js';
import { timeBounds } from './time-flags.js';
import { CommandError, EXIT_FOUND, EXIT_NOT_FOUND, UsageError } from './errors.js';
import { scopeMissMessage } from '../search/scope.js';
import { reportWarnings, warn, writeErr, writeTo, type OutStream } from './io.js';
import { collect, collectWhole, colorOption, dbOption, parseB, parseCount, parseK1, parseScore } from './options.js';
import { withStore } from './session.js';

export interface SearchFlags {
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
  ndjson?: boolean;
  plain?: boolean;
  count?: boolean;
  countBy?: string;
  color: ColorChoice;
  quiet?: boolean;
  expectNone?: boolean;
  expectMin?: string;
  minScore?: string;
  role?: string[];
  tool?: string[];
  agent?: string[];
  parent?: string;
  since?: string;
  until?: string;
  phrase?: string[];
  collapse?: boolean;
  explain?: boolean;
  sort: HitSort;
  reverse?: boolean;
  runsWithMatches?: boolean;
  queryFile?: string;
  /** a path with --index, false with --no-index */
  index?: string | false;
}

export type SearchFormat = 'human' | 'tool' | 'json' | 'ndjson' | 'plain' | 'count';

/** How the outcome is printed and judged: the output side of the flags. */
export interface OutputPlan {
  readonly format: SearchFormat;
  readonly countBy: 'run' | null;
  readonly quiet: boolean;
  /** `--expect-none`: hits are a failure, printed to stderr. */
  readonly expectNone: boolean;
  /** `--expect-min n`. */
  readonly expectMin: number | null;
  readonly color: ColorChoice;
  /** `-l`: the runs with matches instead of the hits (as lines, or in the JSON format chosen). */
  readonly runsWithMatches: boolean;
}

function hitFilter(f: SearchFlags, phrases: string[][]): HitFilter | undefined {
  const roles = new Set<Role>();
  for (const r of f.role ?? []) {
    if (!isRole(r)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}; got ${JSON.stringify(r)}`);
    roles.add(r);
  }
  const tools = new GlobSet([...new Set(f.tool ?? [])]);
  const minScore = f.minScore === undefined ? null : parseScore('--min-score', f.minScore);
  const agents = new GlobSet([...new Set(f.agent ?? [])]);
  const { since, until } = timeBounds(f);
  const filter: HitFilter = {
    roles,
    tools,
    minScore,
    ...(agents.size ? { agents } : {}),
    ...(f.parent !== undefined ? { parent: f.parent } : {}),
    ...(since !== null ? { since } : {}),
    ...(until !== null ? { until } : {}),
    ...(phrases.length ? { phrases } : {}),
  };
  return isEmptyFilter(filter) ? undefined : filter;
}

/** `--phrase` texts as token lists, tokenized like the query; a phrase without a word is a usage error. */
function phraseTokens(f: SearchFlags): string[][] {
  return (f.phrase ?? []).map((p) => {
    const tokens = tokenize(p);
    if (tokens.length === 0) throw new UsageError(`--phrase ${JSON.stringify(p)} holds no word to search for`);
    return tokens;
  });
}

/** The query words: the arguments, or those of `--query-file` (a file, or `-` for standard input). */
export function queryWords(args: string[], queryFile: string | undefined, read: (path: string | 0) => string = (p) => readFileSync(p, 'utf8')): string[] {
  if (queryFile === undefined) return args;
  if (args.length) throw new UsageError(`pass the query words as arguments or in --query-file, not both (got ${JSON.stringify(args.join(' '))} and --query-file ${queryFile})`);
  let text: string;
  try {
    text = read(queryFile === '-' ? 0 : queryFile);
  } catch (e) {
    throw new CommandError(`cannot read --query-file ${queryFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const words = text.split(/\s+/).filter((w) => w !== '');
  if (words.length === 0) throw new UsageError(`--query-file ${queryFile === '-' ? '- (standard input)' : queryFile} holds no query words`);
  return words;
}

/** Flags → search options, validated in the reference's order (spec §7), then convsearch's own filters. */
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
  const phrases = phraseTokens(f);
  const filter = hitFilter(f, phrases);
  // without words, the phrases are the query: `search --phrase 'connection pool'`
  const query = words.length ? words.join(' ') : (f.phrase ?? []).join(' ');
  if (query.trim() === '') throw new UsageError('search needs query words (or --query-file, or --phrase)');
  return {
    query,
    scope,
    conversationId: f.conversation ?? null,
    runId: f.run ?? null,
    maxMatches,
    contextLines,
    bm25: { k1, b },
    ...(filter ? { filter } : {}),
    ...(f.collapse ? { collapse: true } : {}),
    ...(f.explain ? { explain: true } : {}),
    ...(f.sort === 'time' ? { sort: 'time' as const } : {}),
    ...(f.reverse ? { reverse: true } : {}),
  };
}

/** The options a format is answered with: the parity format answers like the reference, so it ignores the views. */
export function optionsForFormat(options: SearchOptions, plan: OutputPlan): SearchOptions {
  if (plan.format !== 'tool') return options;
  const { collapse: _collapse, explain: _explain, sort: _sort, reverse: _reverse, ...reference } = options;
  return reference;
}

/** Output flags → plan; conflicting formats and impossible expectations are usage errors. */
export function outputPlan(f: SearchFlags, options: SearchOptions): OutputPlan {
  const chosen: Array<[string, SearchFormat]> = [];
  if (f.format !== undefined) chosen.push([`--format ${f.format}`, f.format as SearchFormat]);
  if (f.json) chosen.push(['--json', 'json']);
  if (f.ndjson) chosen.push(['--ndjson', 'ndjson']);
  if (f.plain) chosen.push(['--plain', 'plain']);
  if (f.count || f.countBy !== undefined) chosen.push([f.countBy !== undefined ? '--count-by' : '--count', 'count']);
  const distinct = chosen.filter(([, fmt], i) => chosen.findIndex(([, g]) => g === fmt) === i);
  if (distinct.length > 1) {
    throw new UsageError(`${distinct[0]![0]} and ${distinct[1]![0]} ask for different outputs; pass one`);
  }
  if (f.expectNone && f.expectMin !== undefined) throw new UsageError('--expect-none and --expect-min contradict each other; pass one');
  const expectMin = f.expectMin === undefined ? null : parseCount('--expect-min', f.expectMin, '--expect-min');
  const format = distinct[0]?.[1] ?? 'human';
  const runsWithMatches = Boolean(f.runsWithMatches);
  if (runsWithMatches && (format === 'tool' || format === 'count')) {
    throw new UsageError(`-l and ${distinct[0]![0]} ask for different outputs; pass one`);
  }
  if (options.maxMatches === 0 && !f.quiet && !runsWithMatches && (format === 'human' || format === 'plain')) {
    // the reference accepts max_matches=0 (tool, json, ndjson answer it); these formats would print nothing
    throw new UsageError(`-m 0 selects no hit to print${format === 'plain' ? ' with --plain' : ''}: use --count for the number of matching messages, or -q for the exit status alone`);
  }
  return {
    format,
    countBy: f.countBy === 'run' ? 'run' : null,
    quiet: Boolean(f.quiet),
    expectNone: Boolean(f.expectNone),
    expectMin,
    color: f.color,
    runsWithMatches,
  };
}

function indexChoice(f: SearchFlags): IndexChoice {
  return f.index === false ? false : f.index === undefined ? {} : { path: f.index };
}

/** The reference text and its newline: byte-exact for pipes and files (the parity format); a terminal still never gets raw controls. */
function toolPrintable(outcome: SearchOutcome, out: OutStream): string {
  const text = toolText(outcome);
  return (out.isTTY ? escapeForTerminal(text) : text) + '\n';
}

/** Prints the outcome in the planned format (nothing with `-q`). */
function print(outcome: SearchOutcome, plan: OutputPlan): void {
  if (plan.quiet) return;
  const out: OutStream = plan.expectNone ? process.stderr : process.stdout;
  const lines = (ls: string[]): void => {
    if (ls.length) writeTo(out, ls.join('\n') + '\n');
  };
  if (plan.runsWithMatches) {
    if (plan.format === 'json') writeTo(out, JSON.stringify(runMatchesJson(outcome), null, 2) + '\n');
    else if (plan.format === 'ndjson') lines(runMatchesNdjson(outcome));
    else lines(runMatchLines(outcome));
    reportWarnings(outcome.warnings);
    return;
  }
  switch (plan.format) {
    case 'tool':
      writeTo(out, toolPrintable(outcome, out));
      break;
    case 'json':
      writeTo(out, JSON.stringify(searchJson(outcome), null, 2) + '\n');
      break;
    case 'ndjson':
      lines(searchNdjson(outcome));
      break;
    case 'plain':
      lines(plainLines(outcome));
      break;
    case 'count':
      lines(countLines(outcome, plan.countBy));
      break;
    case 'human': {
      const text = humanHits(outcome, { chalk: makeChalk(colorEnabled(plan.color, out)), width: terminalWidth(out) });
      if (text) writeTo(out, text + '\n');
      const notice = humanNotice(outcome);
      if (notice !== null) writeErr(wrapText(notice, terminalWidth(process.stderr), '  ') + '\n');
      break;
    }
  }
  reportWarnings(outcome.warnings);
  if (plan.format === 'human') writeErr(wrapText(summaryLine(outcome), terminalWidth(process.stderr), '  ') + '\n');
}

/**
 * The exit status of a search under the plan: the checks judge every matching message (`matches`, like
 * `grep -c`); without one, 0 when a hit is shown and 1 otherwise, as the reference's parity answers say.
 */
export function exitStatus(shown: number, matches: number, plan: OutputPlan): number {
  if (plan.expectNone) return matches === 0 ? EXIT_FOUND : EXIT_NOT_FOUND;
  if (plan.expectMin !== null) return matches >= plan.expectMin ? EXIT_FOUND : EXIT_NOT_FOUND;
  return shown > 0 ? EXIT_FOUND : EXIT_NOT_FOUND;
}

function judge(outcome: SearchOutcome, plan: OutputPlan): void {
  const stats = outcomeStats(outcome);
  const { matches } = stats;
  // with -l, what is shown is the runs
  const hits = plan.runsWithMatches ? stats.matchingRuns : stats.hits;
  const status = exitStatus(hits, matches, plan);
  if (status !== EXIT_FOUND && !plan.quiet) {
    const found = `${plural(matches, matchNoun(outcome))} found${matches > hits ? ` (${hits} shown)` : ''}`;
    if (plan.expectNone) writeErr(`convsearch: --expect-none failed: ${found}\n`);
    else if (plan.expectMin !== null) writeErr(`convsearch: --expect-min ${plan.expectMin} failed: ${found}\n`);
  }
  process.exitCode = status;
}

const ROLE_HELP = `only messages with a part of this role count as hits: ${ROLES.join(', ')} (repeatable, or comma-separated)`;

export function searchCommand(): Command {
  return new Command('search')
    .description('BM25-rank the replayed messages of a store and print excerpts around the hits')
    .argument('[words...]', 'query words (joined by one space; each word is searched independently)')
    .addOption(dbOption())
    .option('--conversation <id>', "search this conversation's runs (the reference's default scope)")
    .addOption(new Option('--scope <scope>', 'all: every run in the store').choices(['all', 'conversation']))
    .option('--run <id>', "search only this run's full record")
    .option('--query-file <path>', "read the query words from a file ('-': standard input), so that words starting with a dash or another program's output need no quoting")
    .option('-m, --max-matches <n>', 'most hits to select', '10')
    .option('-C, --context <n>', 'messages of context around each hit', '5')
    .option('--bm25-k1 <x>', 'BM25 term-frequency saturation', '1.5')
    .option('--bm25-b <x>', 'BM25 length normalization, 0..1', '0.75')
    .option('--index <path>', 'persistent index file (default: one per store under $XDG_CACHE_HOME/convsearch)')
    .option('--no-index', 'replay the store for this search instead of using the index (same results, slower)')
    .optionsGroup('Filters (they pick which ranked messages count as hits; BM25 statistics and scores stay those of the whole scope):')
    .option('--role <role>', ROLE_HELP, collect)
    .option('--tool <name>', "only messages with a tool call, tool return or retry of this tool count: repeatable, comma-separated, globs ('delete_*,drop_?')", collect)
    .option('--min-score <x>', 'only hits scoring at least x count')
    .option('--agent <name>', "only messages of runs of this agent count: repeatable, comma-separated, globs ('deploy-*')", collect)
    .option('--parent <run>', 'only messages of this run and the runs it delegated to, transitively (its delegate tree), count')
    .option('--since <when>', "only messages made at or after this count: an ISO 8601 date or time (UTC unless it has an offset) or a duration back from now ('90m', '36h', '7d', '2w')")
    .option('--until <when>', 'only messages made at or before this count (a bare date includes that whole day)')
    .option('--phrase <words>', 'only messages holding these words as consecutive tokens count (repeatable; without query words, the phrases are the query)', collectWhole)
    .optionsGroup('Output:')
    .addOption(new Option('--format <format>', 'human (default), tool (the reference text, byte for byte), json, ndjson or plain').choices(['human', 'tool', 'json', 'ndjson', 'plain']))
    .option('--json', 'one JSON document (schema_version 1)')
    .option('--ndjson', 'one JSON event per line: begin, hit..., end, summary')
    .option('--plain', 'one line per hit: run_id:message_index:score:text')
    .option('--collapse', 'fold hits whose text repeats a better hit (compaction re-indexes the kept tail) into that hit, listing every location; counts count distinct texts. Off by default so that the default answers like the reference; --format tool ignores it')
    .addOption(new Option('--sort <key>', 'order of the hits shown: score (rank, the default) or time (the message time, oldest first, ties by rank); -m still picks the best').choices(['score', 'time']).default('score'))
    .option('--reverse', 'print the hits (or the runs of -l) in the opposite order')
    .option('-l, --runs-with-matches', 'print the runs holding a matching message instead of hits: run id, conversation, agent, matching messages, best score, tab-separated, best first (--json, --ndjson too)')
    .option('--explain', "under each hit, each query term's tf, df, idf and share of the score, with N, the lengths, k1 and b (human, --json, --ndjson)")
    .option('--count', 'print the number of matching messages: all of them, whatever -m and -C show (like grep -c)')
    .addOption(new Option('--count-by <key>', 'print run_id:count of matching messages per run (implies --count)').choices(['run']))
    .addOption(colorOption())
    .optionsGroup('Checks (exit status 0 when they hold, 1 when not, 2 on errors; they count every matching message, whatever -m and -C show):')
    .option('-q, --quiet', 'print nothing; only set the exit status')
    .option('--expect-none', 'fail (exit 1) when any message matches; the hits go to stderr')
    .option('--expect-min <n>', 'fail (exit 1) unless at least n messages match')
    .addHelpText(
      'after',
      `
Exit status: 0 when at least one hit is shown, 1 when none is, 2 on an error (an unknown
--conversation or --run included). With --expect-none: 0 when no message matches, 1 when any does.
With --expect-min n: 0 when at least n match. Checks, --count and -l count every matching message
(score above 0, passing the filters; with --collapse, their distinct texts), not only the hits -m and
-C show. The filters, --sort, --reverse, --collapse and --explain never change BM25 statistics or
scores, and --format tool ignores the last four: it answers like the reference.

Examples:
  convsearch search refund idempotency --db sessions.db --conversation conv-42
  convsearch search "connection pool" --scope all --max-matches 3 --context 1
  convsearch search timeout --run run-7f3a --format tool
  convsearch search billing --scope all --json | jq -r '.hits[].run_id'
  convsearch search refund --db sessions.db --scope all --plain | fzf --delimiter : --preview 'convsearch show {1} --at {2} -C 3 --db sessions.db'
  convsearch search delete_user --conversation conv-42 --role tool-call --tool delete_user --expect-none
  convsearch search refund policy --run run-7f3a --role assistant --expect-min 1 -q
  printf '%s\\n' --verbose -rf | convsearch search --query-file - --scope all`,
    )
    .action(async (args: string[], flags: SearchFlags) => {
      const requested = searchOptions(queryWords(args, flags.queryFile), flags);
      const plan = outputPlan(flags, requested);
      const options = optionsForFormat(requested, plan);
      const outcome = await withStore(flags.db, { quiet: plan.quiet, color: plan.color }, (store, onProgress) =>
        searchStore(store, options, indexChoice(flags), {
          onProgress,
          onFallback: (reason) => {
            if (!plan.quiet) warn(`index unavailable, searching without it: ${reason}`);
          },
          onWarning: (message) => {
            if (!plan.quiet) warn(message);
          },
        }),
      );
      if (outcome.missing) {
        // the reference's reply stays on stdout for parity and JSON documents carry the error; the rest print nothing
        if (!plan.quiet && (plan.format === 'tool' || plan.format === 'json' || plan.format === 'ndjson')) print({ ...outcome, warnings: [] }, { ...plan, expectNone: false });
        throw new CommandError(scopeMissMessage(outcome.missing));
      }
      print(outcome, plan);
      judge(outcome, plan);
    });
}
