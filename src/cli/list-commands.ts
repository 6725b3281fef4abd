import { Command, Option } from 'commander';
import { selectRuns, sortConversations, sortRuns, summarizeConversations, summarizeRuns, type ConversationSort, type RunFilter, type RunSort } from '../history/listing.js';
import { GlobSet } from '../text/glob.js';
import { timeBounds } from './time-flags.js';
import { withRecordCounts, type IndexChoice } from '../index/indexed-search.js';
import { colorEnabled, makeChalk, type ColorChoice } from '../output/color.js';
import { conversationsJson, conversationsNdjson, runsJson, runsNdjson } from '../output/listing.js';
import { terminalWidth, wrapText } from '../output/width.js';
import { conversationsTable, omittedNote, runsTable, type RenderedTable, type TableStyle } from '../output/tables.js';
import { CommandError, EXIT_FOUND, UsageError } from './errors.js';
import { scopeMiss, scopeMissMessage } from '../search/scope.js';
import { reportWarnings, warn, writeErr, writeOut } from './io.js';
import { collect, colorOption, dbOption, parseLimit } from './options.js';
import { withSource } from './session.js';

export interface ListFlags {
  db?: string;
  json?: boolean;
  ndjson?: boolean;
  wide?: boolean;
  color: ColorChoice;
  /** a path with --index, false with --no-index */
  index?: string | false;
}

/** Message counts come from the persistent index (kept up to date like a search's), or a replay. */
export function addIndexOptions(cmd: Command): Command {
  return cmd
    .option('--index <path>', 'persistent index file to read counts from (default: one per store under $XDG_CACHE_HOME/convsearch)')
    .option('--no-index', 'replay the store instead of using the index (same numbers, slower)');
}

export function indexChoice(flags: ListFlags): IndexChoice {
  return flags.index === false ? false : { path: flags.index };
}

export const indexFallback = { onFallback: (reason: string) => warn(`index unavailable, replaying the store: ${reason}`), onWarning: warn };

interface RunsFlags extends ListFlags {
  conversation?: string;
  agent?: string[];
  since?: string;
  until?: string;
  parent?: string;
  limit?: string;
  sort: RunSort;
  reverse?: boolean;
}

interface ConversationsFlags extends ListFlags {
  limit?: string;
  sort: ConversationSort;
  reverse?: boolean;
}

/** Sorted, maybe turned around, then cut: `--limit` keeps the first n of what would be listed. */
function arrange<T>(items: T[], reverse: boolean | undefined, limit: number | null): T[] {
  const ordered = reverse ? items.slice().reverse() : items;
  return limit === null ? ordered : ordered.slice(0, limit);
}

export function machineFormat(flags: ListFlags): 'json' | 'ndjson' | null {
  if (flags.json && flags.ndjson) throw new UsageError('--json and --ndjson ask for different outputs; pass one');
  return flags.json ? 'json' : flags.ndjson ? 'ndjson' : null;
}

/**
 * Prints a table for the terminal (or a pipe: never cut, never wrapped); columns left out to fit the
 * terminal are named on stderr. `--wide` keeps them all, at their full width.
 */
export async function printTable(flags: ListFlags, render: (style: TableStyle) => RenderedTable): Promise<void> {
  const width = flags.wide ? null : terminalWidth(process.stdout);
  const table = render({ chalk: makeChalk(colorEnabled(flags.color, process.stdout)), width });
  writeOut(table.text + '\n');
  const note = width === null ? null : omittedNote(table.omitted, width);
  if (note !== null) writeErr(wrapText(note, terminalWidth(process.stderr), '  ') + '\n');
}



export function runFilter(f: RunsFlags): RunFilter {
  const { since, until } = timeBounds(f);
  return {
    ...(f.conversation !== undefined ? { conversationId: f.conversation } : {}),
    ...(f.agent !== undefined ? { agent: new GlobSet([...new Set(f.agent)]) } : {}),
    ...(since !== null ? { since } : {}),
    ...(until !== null ? { until } : {}),
    ...(f.parent !== undefined ? { parent: f.parent } : {}),
  };
}

export function runsCommand(): Command {
  return addIndexOptions(new Command('runs'))
    .description('list the runs of a store in corpus order (started_at), with snapshot and replayed message counts')
    .addOption(dbOption())
    .option('--conversation <id>', "only this conversation's runs")
    .option('--agent <name>', "only runs of this agent: repeatable, comma-separated, globs ('deploy-*')", collect)
    .option('--since <when>', "only runs started at or after this ISO 8601 date or time (UTC unless it has an offset), or a duration back from now ('7d')")
    .option('--until <when>', 'only runs started at or before it (a bare date includes that whole day)')
    .option('--parent <run>', 'only this run and the runs it delegated to, transitively (its delegate tree)')
    .option('--limit <n>', 'at most n runs (after sorting)')
    .addOption(new Option('--sort <key>', 'started (corpus order) or messages (most first)').choices(['started', 'messages']).default('started'))
    .option('--reverse', 'the opposite order (latest first, or fewest messages first), before --limit')
    .option('--json', 'one JSON document (schema_version 1)')
    .option('--ndjson', 'one JSON event per line: begin, run..., end')
    .option('--wide', 'on a terminal, every column at full width, even past its edge (default: columns left out to fit)')
    .addOption(colorOption())
    .addHelpText(
      'after',
      `
Examples:
  convsearch runs --db sessions.db
  convsearch runs --conversation conv-42 --since 2025-03-01 --until 2025-03-07
  convsearch runs --parent run-7f3a               # a run and every sub-agent run it started
  convsearch runs --sort messages --limit 5
  convsearch runs --reverse --limit 3                 # the three latest runs
  convsearch runs --json | jq -r '.runs[] | select(.interrupted_snapshots > 0) | .run_id'`,
    )
    .action(async (flags: RunsFlags) => {
      const format = machineFormat(flags);
      const filter = runFilter(flags);
      const limit = flags.limit === undefined ? null : parseLimit('--limit', flags.limit);
      const result = await withSource(flags.db, { color: flags.color }, (source) => {
        // an id the store does not hold is a typo, never an empty list (the rule of search scopes)
        const miss =
          (filter.conversationId !== undefined ? scopeMiss(source.runs(), { scope: 'conversation', conversationId: filter.conversationId, runId: null }) : null) ??
          (filter.parent !== undefined ? scopeMiss(source.runs(), { scope: 'all', conversationId: null, runId: filter.parent }) : null);
        if (miss) throw new CommandError(scopeMissMessage(miss));
        let runs = selectRuns(source.runs(), filter);
        // corpus order needs no replay to cut: replay only what is shown
        if (flags.sort === 'started') runs = arrange(runs, flags.reverse, limit);
        return withRecordCounts(source, indexChoice(flags), indexFallback, (counts) => {
          let summaries = summarizeRuns(source, runs, counts);
          if (flags.sort !== 'started') summaries = arrange(sortRuns(summaries, flags.sort), flags.reverse, limit);
          return { summaries, warnings: counts.warnings(summaries.map((s) => s.run.runId)) };
        });
      });
      const { summaries, warnings } = result;
      if (format === 'json') writeOut(JSON.stringify(runsJson(summaries, warnings), null, 2) + '\n');
      else if (format === 'ndjson') writeOut(runsNdjson(summaries, warnings, { filters: runFilterJson(flags), sort: flags.sort, reverse: Boolean(flags.reverse), limit }).join('\n') + '\n');
      else await printTable(flags, (style) => runsTable(summaries, style));
      reportWarnings(warnings);
      process.exitCode = EXIT_FOUND;
    });
}

function runFilterJson(f: RunsFlags): Record<string, unknown> {
  return {
    conversation_id: f.conversation ?? null,
    agent_name: f.agent === undefined ? null : f.agent.join(','),
    since: f.since ?? null,
    until: f.until ?? null,
    parent_run_id: f.parent ?? null,
  };
}

export function conversationsCommand(): Command {
  return addIndexOptions(new Command('conversations'))
    .description('list conversations: their runs, time span, searchable messages and agents')
    .addOption(dbOption())
    .addOption(new Option('--sort <key>', 'started (by first start, the default), messages or runs (most first)').choices(['started', 'messages', 'runs']).default('started'))
    .option('--reverse', 'the opposite order, before --limit')
    .option('--limit <n>', 'at most n conversations (after sorting)')
    .option('--json', 'one JSON document (schema_version 1)')
    .option('--ndjson', 'one JSON event per line: begin, conversation..., end')
    .option('--wide', 'on a terminal, every column at full width, even past its edge (default: columns left out to fit)')
    .addOption(colorOption())
    .addHelpText(
      'after',
      `
"messages" counts what a search of the conversation covers: inherited history is counted once.

Examples:
  convsearch conversations --db sessions.db
  convsearch conversations --sort messages --limit 3     # the three largest
  convsearch conversations --json | jq -r '.conversations[] | select(.runs > 1) | .conversation_id'`,
    )
    .action(async (flags: ConversationsFlags) => {
      const format = machineFormat(flags);
      const limit = flags.limit === undefined ? null : parseLimit('--limit', flags.limit);
      const { convs, warnings } = await withSource(flags.db, { color: flags.color }, (source) =>
        withRecordCounts(source, indexChoice(flags), indexFallback, (counts) => {
          const convs = arrange(sortConversations(summarizeConversations(source, counts), flags.sort), flags.reverse, limit);
          const shown = new Set(convs.map((c) => c.conversationId));
          return { convs, warnings: counts.warnings(source.runs().filter((r) => shown.has(r.conversationId)).map((r) => r.runId)) };
        }),
      );
      if (format === 'json') writeOut(JSON.stringify(conversationsJson(convs, warnings), null, 2) + '\n');
      else if (format === 'ndjson') writeOut(conversationsNdjson(convs, warnings, { sort: flags.sort, reverse: Boolean(flags.reverse), limit }).join('\n') + '\n');
      else await printTable(flags, (style) => conversationsTable(convs, style));
      reportWarnings(warnings);
      process.exitCode = EXIT_FOUND;
    });
}
