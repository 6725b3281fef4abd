import type { HitFilter, SearchRequest } from '../api/search.js';
import { GlobSet, isRole, ROLES, scopeMissMessage, type Role } from '../api/search.js';
import type { CommandDef } from './command.js';
import { CommandError, UsageError } from './errors.js';
import { FLAGS, indexChoice, parseB, parseCount, parseK1, parseScore, reworded } from './flags.js';
import { warn } from './io.js';
import { judge, outputPlan, printOutcome, type SearchOutputFlags } from './search-output.js';
import { withCliSession } from './session.js';

export interface SearchFlags extends SearchOutputFlags {
  db?: string;
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
  /** a path with --index, false with --no-index */
  index?: string | false;
}

function hitFilter(f: SearchFlags): HitFilter | undefined {
  const roles = new Set<Role>();
  for (const r of f.role ?? []) {
    if (!isRole(r)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}; got ${JSON.stringify(r)}`);
    roles.add(r);
  }
  const tools = new GlobSet([...new Set(f.tool ?? [])]);
  const minScore = f.minScore === undefined ? null : parseScore('--min-score', f.minScore);
  return roles.size || tools.size || minScore !== null ? { roles, tools, minScore } : undefined;
}

/** Flags → the library's search request, checked in the reference's order (spec §7), then convsearch's own filters. */
export function searchRequest(words: string[], f: SearchFlags): Required<Omit<SearchRequest, 'filter'>> & Pick<SearchRequest, 'filter'> {
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
  const filter = hitFilter(f);
  return {
    query: words.join(' '),
    scope: f.conversation !== undefined ? 'conversation' : 'all',
    conversationId: f.conversation ?? null,
    runId: f.run ?? null,
    maxMatches,
    contextLines,
    bm25: { k1, b },
    ...(filter ? { filter } : {}),
  };
}

export function searchCommand(): CommandDef {
  return {
    name: 'search',
    description: 'BM25-rank the replayed messages of a store and print excerpts around the hits',
    args: [{ spelling: '<words...>', help: 'query words (joined by one space; each word is searched independently)' }],
    flags: [
      FLAGS.db,
      FLAGS.conversation,
      FLAGS.scope,
      FLAGS.run,
      FLAGS.maxMatches,
      FLAGS.context,
      FLAGS.bm25K1,
      FLAGS.bm25B,
      FLAGS.index,
      FLAGS.noIndex,
      { group: 'Filters (they pick which ranked messages count as hits; BM25 statistics and scores stay those of the whole scope):' },
      FLAGS.role,
      FLAGS.tool,
      FLAGS.minScore,
      { group: 'Output:' },
      FLAGS.format,
      FLAGS.json,
      reworded(FLAGS.ndjson, 'one JSON event per line: begin, hit..., end, summary'),
      FLAGS.plain,
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
With --expect-min n: 0 when at least n match. Checks and --count count every matching message
(score above 0, passing --role, --tool and --min-score), not only the hits -m and -C show.

Examples:
  convsearch search refund idempotency --db sessions.db --conversation conv-42
  convsearch search "connection pool" --scope all --max-matches 3 --context 1
  convsearch search timeout --run run-7f3a --format tool
  convsearch search billing --scope all --json | jq -r '.hits[].run_id'
  convsearch search refund --db sessions.db --scope all --plain | fzf --delimiter : --preview 'convsearch show {1} --at {2} -C 3 --db sessions.db'
  convsearch search delete_user --conversation conv-42 --role tool-call --tool delete_user --expect-none
  convsearch search refund policy --run run-7f3a --role assistant --expect-min 1 -q`,
    async action(words: string[], flags: SearchFlags) {
      const request = searchRequest(words, flags);
      const plan = outputPlan(flags, request.maxMatches);
      const hooks = {
        onFallback: (reason: string): void => {
          if (!plan.quiet) warn(`index unavailable, searching without it: ${reason}`);
        },
        onWarning: (message: string): void => {
          if (!plan.quiet) warn(message);
        },
      };
      const outcome = await withCliSession(
        flags.db,
        { quiet: plan.quiet, color: plan.color, index: indexChoice(flags), ...hooks },
        (session, progress) => session.search(request, progress),
      );
      if (outcome.missing) {
        // the reference's reply stays on stdout for parity and JSON documents carry the error; the rest print nothing
        if (!plan.quiet && (plan.format === 'tool' || plan.format === 'json' || plan.format === 'ndjson')) {
          printOutcome({ ...outcome, warnings: [] }, { ...plan, expectNone: false });
        }
        throw new CommandError(scopeMissMessage(outcome.missing));
      }
      printOutcome(outcome, plan);
      judge(outcome, plan);
    },
  };
}
