import { readFileSync } from 'node:fs';
import {
  DEFAULTS,
  GlobSet,
  type HitFilter,
  type HitSort,
  isEmptyFilter,
  isRole,
  type Role,
  ROLES,
  type SearchRequest,
  NotFoundError,
  tokenizeWith,
  tokenizerNamed,
  type Tokenizer,
  type TokenizerName,
} from '../lib.js';
import type { CommandDef } from './command.js';
import { CommandError, UsageError } from './errors.js';
import { FLAGS, indexChoice, parseB, parseCount, parseK1, parseScore, reworded, sortedBy, timeBounds } from './flags.js';
import { standingLog } from './index-standing.js';
import type { Io } from './io.js';
import { judge, outputPlan, printOutcome, type OutputPlan, type SearchOutputFlags } from './search-output.js';
import { withCliSession } from './session.js';

export interface SearchFlags extends SearchOutputFlags {
  db?: string[];
  conversation?: string;
  scope?: string;
  run?: string;
  maxMatches: string;
  context: string;
  bm25K1: string;
  bm25B: string;
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
  tokenizer: TokenizerName;
  /** a path with --index, false with --no-index */
  index?: string | false;
  verify?: boolean;
  fresh?: boolean;
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
function phraseTokens(f: SearchFlags, tok: Tokenizer): string[][] {
  return (f.phrase ?? []).map((p) => {
    const tokens = tokenizeWith(tok, p);
    if (tokens.length === 0) throw new UsageError(`--phrase ${JSON.stringify(p)} holds no word to search for`);
    return tokens;
  });
}

/** How `--query-file` is read: a file, or the sink's standard input for `-`. */
export function queryReader(io: Io): (path: string | 0) => string {
  return (p) => (p === 0 ? io.sink.readStdin() : readFileSync(p, 'utf8'));
}

/** The query words: the arguments, or those of `--query-file` (a file, or `-` for standard input). */
export function queryWords(
  args: string[],
  queryFile: string | undefined,
  read: (path: string | 0) => string = (p) => readFileSync(p, 'utf8'),
): string[] {
  if (queryFile === undefined) return args;
  if (args.length)
    throw new UsageError(
      `pass the query words as arguments or in --query-file, not both (got ${JSON.stringify(args.join(' '))} and --query-file ${queryFile})`,
    );
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

/** Flags → the library's search request, checked in the reference's order (spec §7), then convsearch's own filters. */
export function searchRequest(words: string[], f: SearchFlags): SearchRequest & { readonly maxMatches: number } {
  const maxMatches = parseCount('--max-matches', f.maxMatches, 'max_matches');
  const contextLines = parseCount('--context', f.context, 'context_lines');
  const k1 = parseK1(f.bm25K1);
  const b = parseB(f.bm25B);
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
  const tok = tokenizerNamed(f.tokenizer);
  const phrases = phraseTokens(f, tok);
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
    ...(f.sort !== DEFAULTS.hitSort ? { sort: f.sort } : {}),
    ...(f.reverse ? { reverse: true } : {}),
    ...(tok.parity ? {} : { tokenizer: tok.name }),
  };
}

/** The request a format is answered with: the parity format answers like the reference, so it ignores the views. */
export function requestForFormat(request: SearchRequest, plan: OutputPlan): SearchRequest {
  if (plan.format !== 'tool') return request;
  if (request.tokenizer === 'cjk') throw new UsageError('--format tool answers like the reference; it cannot rank with --tokenizer cjk');
  const { collapse: _collapse, explain: _explain, sort: _sort, reverse: _reverse, ...reference } = request;
  return reference;
}

export function searchCommand(): CommandDef {
  return {
    name: 'search',
    description: 'BM25-rank the replayed messages of a store and print excerpts around the hits',
    args: [{ spelling: '[words...]', help: 'query words (joined by one space; each word is searched independently)' }],
    flags: [
      FLAGS.db,
      FLAGS.conversation,
      FLAGS.scope,
      FLAGS.run,
      FLAGS.queryFile,
      FLAGS.maxMatches,
      FLAGS.context,
      FLAGS.bm25K1,
      FLAGS.bm25B,
      FLAGS.index,
      FLAGS.noIndex,
      FLAGS.verify,
      FLAGS.fresh,
      FLAGS.tokenizer,
      { group: 'Filters (they pick which ranked messages count as hits; BM25 statistics and scores stay those of the whole scope):' },
      FLAGS.role,
      FLAGS.tool,
      FLAGS.minScore,
      reworded(FLAGS.agent, "only messages of runs of this agent count: repeatable, comma-separated, globs ('deploy-*')"),
      reworded(FLAGS.parent, 'only messages of this run and the runs it delegated to, transitively (its delegate tree), count'),
      reworded(
        FLAGS.since,
        "only messages made at or after this count: an ISO 8601 date or time (UTC unless it has an offset) or a duration back from now ('90m', '36h', '7d', '2w')",
      ),
      reworded(FLAGS.until, 'only messages made at or before this count (a bare date includes that whole day)'),
      FLAGS.phrase,
      { group: 'Output:' },
      FLAGS.format,
      FLAGS.json,
      reworded(FLAGS.ndjson, 'one JSON event per line: begin, hit..., end, summary'),
      FLAGS.plain,
      FLAGS.collapse,
      sortedBy(
        ['score', 'time'],
        DEFAULTS.hitSort,
        'order of the hits shown: score (rank, the default) or time (the message time, oldest first, ties by rank); -m still picks the best',
      ),
      reworded(FLAGS.reverse, 'print the hits (or the runs of -l) in the opposite order'),
      FLAGS.runsWithMatches,
      FLAGS.explain,
      FLAGS.timeline,
      FLAGS.count,
      FLAGS.countBy,
      FLAGS.color,
      {
        group:
          'Checks (exit status 0 when they hold, 1 when not, 2 on errors; they count every matching message, whatever -m and -C show):',
      },
      FLAGS.quiet,
      FLAGS.expectNone,
      FLAGS.expectMin,
    ],
    helpAfter: `
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
  convsearch search refund --scope all --timeline run
  convsearch search refund --db sessions.db --scope all --plain | fzf --delimiter : --preview 'convsearch show {1} --at {2} -C 3 --db sessions.db'
  convsearch search delete_user --conversation conv-42 --role tool-call --tool delete_user --expect-none
  convsearch search refund policy --run run-7f3a --role assistant --expect-min 1 -q
  printf '%s\\n' --verbose -rf | convsearch search --query-file - --scope all
  convsearch search 全文検索 --tokenizer cjk --db sessions.db --scope all`,
    async action(io: Io, args: string[], flags: SearchFlags) {
      const requested = searchRequest(queryWords(args, flags.queryFile, queryReader(io)), flags);
      const plan = outputPlan(flags, requested.maxMatches);
      const request = requestForFormat(requested, plan);
      const log = standingLog();
      const hooks = {
        onIndexStanding: log.onIndexStanding,
        onFallback: (reason: string): void => {
          if (!plan.quiet) io.warn(`index unavailable, searching without it: ${reason}`);
        },
        onWarning: (message: string): void => {
          if (!plan.quiet) io.warn(message);
        },
      };
      const outcome = await withCliSession(
        io,
        flags.db,
        { quiet: plan.quiet, color: plan.color, index: indexChoice(flags, io.env), ...hooks },
        (session, progress) => session.search(request, progress),
      ).catch((e: unknown) => {
        // a scope the store lacks: the reference's reply stays on stdout for parity and JSON documents
        // carry the error; the rest print nothing; then the error line, exit 2
        const replied = e instanceof NotFoundError && e.outcome !== null && !plan.quiet;
        if (replied && (plan.format === 'tool' || plan.format === 'json' || plan.format === 'ndjson')) {
          printOutcome(io, { ...e.outcome!, warnings: [] }, { ...plan, expectNone: false });
        }
        throw e;
      });
      printOutcome(io, outcome, plan, log.standings());
      judge(io, outcome, plan);
    },
  };
}
