import {
  DEFAULTS,
  type ColorChoice,
  colorEnabled,
  conversationsJson,
  conversationsNdjson,
  type ConversationSort,
  conversationsTable,
  GlobSet,
  makeChalk,
  omittedNote,
  type RenderedTable,
  type RunFilter,
  runsJson,
  runsNdjson,
  type RunSort,
  runsTable,
  type TableStyle,
  terminalWidth,
  withIndexJson,
  wrapText,
} from '../lib.js';
import type { CommandDef } from './command.js';
import { EXIT_FOUND, UsageError } from './errors.js';
import { FLAGS, indexChoice, parseLimit, reworded, sortedBy, timeBounds, type Flag } from './flags.js';
import { standingLog } from './index-standing.js';
import type { Io } from './io.js';
import { withCliSession } from './session.js';

export interface ListFlags {
  db?: string[];
  json?: boolean;
  ndjson?: boolean;
  wide?: boolean;
  color: ColorChoice;
  /** a path with --index, false with --no-index */
  index?: string | false;
  verify?: boolean;
  fresh?: boolean;
}

/** Message counts come from the sidecar index (kept up to date like a search's), or a replay. */
export const INDEX_FLAGS: Flag[] = [
  reworded(
    FLAGS.index,
    "persistent index file to read counts from, new or convsearch's own, or a postgres:// URL of a shared index kept by 'convsearch index sync' (default: $CONVSEARCH_INDEX, else one file per store under $XDG_CACHE_HOME/convsearch, else ~/.cache, else $TMPDIR)",
  ),
  reworded(FLAGS.noIndex, 'replay the store instead of using the index (same numbers, slower)'),
  FLAGS.verify,
  FLAGS.fresh,
];

/** What the index has to say on the way: why it is not used, what it repaired or rebuilt. */
export function indexHooks(io: Io): { onFallback: (reason: string) => void; onWarning: (message: string) => void } {
  return { onFallback: (reason) => io.warn(`index unavailable, replaying the store: ${reason}`), onWarning: (message) => io.warn(message) };
}

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

export function machineFormat(flags: ListFlags): 'json' | 'ndjson' | null {
  if (flags.json && flags.ndjson) throw new UsageError('--json and --ndjson ask for different outputs; pass one');
  return flags.json ? 'json' : flags.ndjson ? 'ndjson' : null;
}

/**
 * Prints a table for the terminal (or a pipe: never cut, never wrapped); columns left out to fit the
 * terminal are named on stderr. `--wide` keeps them all, at their full width.
 */
export function printTable(io: Io, flags: ListFlags, render: (style: TableStyle) => RenderedTable): void {
  const width = flags.wide ? null : terminalWidth(io.stdout, io.env);
  const table = render({ chalk: makeChalk(colorEnabled(flags.color, io.stdout, io.env)), width });
  // written as drawn, ~64 KB at a time: a table of every run of a large store is never one string
  let chunk = '';
  for (const line of table.lines) {
    chunk += `${line}\n`;
    if (chunk.length >= 1 << 16) {
      io.out(chunk);
      chunk = '';
    }
  }
  io.out(chunk);
  const note = width === null ? null : omittedNote(table.omitted, width);
  if (note !== null) io.err(wrapText(note, terminalWidth(io.stderr, io.env), '  ') + '\n');
}

export function runFilter(f: RunsFlags): RunFilter {
  const { since, until } = timeBounds(f);
  return {
    ...(f.conversation !== undefined ? { conversationId: f.conversation } : {}),
    ...(f.agent !== undefined ? { agents: new GlobSet([...new Set(f.agent)]) } : {}),
    ...(since !== null ? { since } : {}),
    ...(until !== null ? { until } : {}),
    ...(f.parent !== undefined ? { parent: f.parent } : {}),
  };
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

export function runsCommand(): CommandDef {
  return {
    name: 'runs',
    description: 'list the runs of a store in corpus order (started_at), with snapshot and replayed message counts',
    args: [],
    flags: [
      ...INDEX_FLAGS,
      FLAGS.db,
      reworded(FLAGS.conversation, "only this conversation's runs"),
      FLAGS.agent,
      FLAGS.since,
      FLAGS.until,
      FLAGS.parent,
      FLAGS.limit,
      FLAGS.sort,
      FLAGS.reverse,
      FLAGS.json,
      reworded(FLAGS.ndjson, 'one JSON event per line: begin, run..., end'),
      FLAGS.wide,
      FLAGS.color,
    ],
    helpAfter: `
Examples:
  convsearch runs --db sessions.db
  convsearch runs --conversation conv-42 --since 2025-03-01 --until 2025-03-07
  convsearch runs --parent run-7f3a               # a run and every sub-agent run it started
  convsearch runs --sort messages --limit 5
  convsearch runs --reverse --limit 3                 # the three latest runs
  convsearch runs --json | jq -r '.runs[] | select(.interrupted_snapshots > 0) | .run_id'`,
    async action(io: Io, flags: RunsFlags) {
      const format = machineFormat(flags);
      const filter = runFilter(flags);
      const limit = flags.limit === undefined ? null : parseLimit('--limit', flags.limit);
      const query = { ...filter, sort: flags.sort, reverse: Boolean(flags.reverse), limit };
      const log = standingLog();
      const listing = await withCliSession(
        io,
        flags.db,
        { color: flags.color, index: indexChoice(flags, io.env), ...indexHooks(io), onIndexStanding: log.onIndexStanding },
        (session, hooks) => session.listRuns(query, hooks),
      );
      const { runs, warnings } = listing;
      if (format === 'json') io.out(JSON.stringify(withIndexJson(runsJson(runs, warnings), log.standings()), null, 2) + '\n');
      else if (format === 'ndjson')
        io.out(
          runsNdjson(
            runs,
            warnings,
            { filters: runFilterJson(flags), sort: flags.sort, reverse: Boolean(flags.reverse), limit },
            log.standings(),
          ).join('\n') + '\n',
        );
      else printTable(io, flags, (style) => runsTable(runs, style));
      io.reportWarnings(warnings);
      io.status = EXIT_FOUND;
    },
  };
}

export function conversationsCommand(): CommandDef {
  return {
    name: 'conversations',
    description:
      'list conversations: their title, tags and outcome (where the store keeps them), runs, time span, searchable messages and agents',
    args: [],
    flags: [
      ...INDEX_FLAGS,
      FLAGS.db,
      sortedBy(
        ['started', 'messages', 'runs'],
        DEFAULTS.conversationSort,
        'started (by first start, the default), messages or runs (most first)',
      ),
      reworded(FLAGS.reverse, 'the opposite order, before --limit'),
      reworded(FLAGS.limit, 'at most n conversations (after sorting)'),
      FLAGS.json,
      reworded(FLAGS.ndjson, 'one JSON event per line: begin, conversation..., end'),
      FLAGS.wide,
      FLAGS.color,
    ],
    helpAfter: `
"messages" counts what a search of the conversation covers: inherited history is counted once.

Examples:
  convsearch conversations --db sessions.db
  convsearch conversations --sort messages --limit 3     # the three largest
  convsearch conversations --json | jq -r '.conversations[] | select(.runs > 1) | .conversation_id'`,
    async action(io: Io, flags: ConversationsFlags) {
      const format = machineFormat(flags);
      const limit = flags.limit === undefined ? null : parseLimit('--limit', flags.limit);
      const query = { sort: flags.sort, reverse: Boolean(flags.reverse), limit };
      const log = standingLog();
      const { conversations, warnings } = await withCliSession(
        io,
        flags.db,
        { color: flags.color, index: indexChoice(flags, io.env), ...indexHooks(io), onIndexStanding: log.onIndexStanding },
        (session, hooks) => session.listConversations(query, hooks),
      );
      if (format === 'json')
        io.out(JSON.stringify(withIndexJson(conversationsJson(conversations, warnings), log.standings()), null, 2) + '\n');
      else if (format === 'ndjson') io.out(conversationsNdjson(conversations, warnings, query, log.standings()).join('\n') + '\n');
      else printTable(io, flags, (style) => conversationsTable(conversations, style));
      io.reportWarnings(warnings);
      io.status = EXIT_FOUND;
    },
  };
}
