import { GlobSet, isoMicros, toolsJson, toolsNdjson, toolsTable, withIndexJson } from '../lib.js';
import { standingLog } from './index-standing.js';
import type { CommandDef } from './command.js';
import { EXIT_FOUND } from './errors.js';
import { FLAGS, indexChoice, reworded, timeBounds } from './flags.js';
import type { Io } from './io.js';
import { INDEX_FLAGS, indexHooks, machineFormat, printTable, type ListFlags } from './list-commands.js';
import { withCliSession } from './session.js';

interface ToolsFlags extends ListFlags {
  conversation?: string;
  run?: string;
  agent?: string[];
  since?: string;
  until?: string;
  collapse?: boolean;
}

export function toolsCommand(): CommandDef {
  return {
    name: 'tools',
    description: 'list the tools the runs called: calls, returns, retries, runs, first and last seen',
    args: [],
    flags: [
      ...INDEX_FLAGS,
      FLAGS.db,
      reworded(FLAGS.conversation, "only this conversation's runs"),
      reworded(FLAGS.run, "only this run's full record"),
      FLAGS.agent,
      reworded(FLAGS.since, "only messages made at or after this ISO 8601 date or time, or a duration back from now ('7d')"),
      reworded(FLAGS.until, 'only messages made at or before it (a bare date includes that whole day)'),
      reworded(FLAGS.collapse, 'count a message whose text repeats an earlier one of its run (a copy compaction left in the record) once'),
      FLAGS.json,
      reworded(FLAGS.ndjson, 'one JSON event per line: begin, tool..., end'),
      FLAGS.wide,
      FLAGS.color,
    ],
    helpAfter: `
Each message counts once, under the run that first persisted it, as a search of the same scope sees
it (--run: that run's full record); copies a compaction indexed again count too, unless --collapse.
Counts come from the index when it is current, else a replay: the same numbers either way.

Examples:
  convsearch tools --db sessions.db
  convsearch tools --conversation conv-42 --since 7d
  convsearch tools --agent 'deploy-*' --json | jq -r '.tools[] | "\\(.tool_name) \\(.calls)"'`,
    async action(io: Io, flags: ToolsFlags) {
      const format = machineFormat(flags);
      const { since, until } = timeBounds(flags);
      const query = {
        conversationId: flags.conversation ?? null,
        runId: flags.run ?? null,
        agents: new GlobSet([...new Set(flags.agent ?? [])]),
        since,
        until,
        collapse: Boolean(flags.collapse),
      };
      const log = standingLog();
      const { tools, warnings } = await withCliSession(
        io,
        flags.db,
        { color: flags.color, index: indexChoice(flags, io.env), ...indexHooks(io), onIndexStanding: log.onIndexStanding },
        (session, hooks) => session.listTools(query, hooks),
      );
      if (format === 'json') io.out(JSON.stringify(withIndexJson(toolsJson(tools, warnings), log.standings()), null, 2) + '\n');
      else if (format === 'ndjson')
        io.out(toolsNdjson(tools, warnings, toolsParams(flags, since, until), log.standings()).join('\n') + '\n');
      else printTable(io, flags, (style) => toolsTable(tools, style));
      io.reportWarnings(warnings);
      io.status = EXIT_FOUND;
    },
  };
}

function toolsParams(f: ToolsFlags, since: number | null, until: number | null): Record<string, unknown> {
  return {
    filters: {
      conversation_id: f.conversation ?? null,
      run_id: f.run ?? null,
      agents: f.agent ?? [],
      since: since === null ? null : isoMicros(since),
      until: until === null ? null : isoMicros(until),
    },
    collapse: Boolean(f.collapse),
  };
}
