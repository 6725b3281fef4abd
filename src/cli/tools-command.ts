import { Command } from 'commander';
import { HistorySource } from '../history/source.js';
import { withIndex } from '../index/indexed-search.js';
import { toolsJson, toolsNdjson, toolsTable } from '../output/tools.js';
import { ReplayCorpusSource } from '../search/memory-corpus.js';
import type { CorpusSource } from '../search/corpus.js';
import { scopeMiss, scopeMissMessage, type ScopeFilter } from '../search/scope.js';
import { toolInventory } from '../search/tool-inventory.js';
import { snapshotTimes } from '../store/snapshot-times.js';
import { GlobSet } from '../text/glob.js';
import { CommandError, EXIT_FOUND } from './errors.js';
import { reportWarnings, writeOut } from './io.js';
import { addIndexOptions, indexChoice, indexFallback, machineFormat, printTable, type ListFlags } from './list-commands.js';
import { collect, colorOption, dbOption } from './options.js';
import { withStore } from './session.js';
import { timeBounds } from './time-flags.js';
import { isoMicros } from '../history/time.js';

interface ToolsFlags extends ListFlags {
  conversation?: string;
  run?: string;
  agent?: string[];
  since?: string;
  until?: string;
  collapse?: boolean;
}

export function toolsCommand(): Command {
  return addIndexOptions(new Command('tools'))
    .description('list the tools the runs called: calls, returns, retries, runs, first and last seen')
    .addOption(dbOption())
    .option('--conversation <id>', "only this conversation's runs")
    .option('--run <id>', "only this run's full record")
    .option('--agent <name>', "only runs of this agent: repeatable, comma-separated, globs ('deploy-*')", collect)
    .option('--since <when>', "only messages made at or after this ISO 8601 date or time, or a duration back from now ('7d')")
    .option('--until <when>', 'only messages made at or before it (a bare date includes that whole day)')
    .option('--collapse', 'count a message whose text repeats an earlier one of its run (a copy compaction left in the record) once')
    .option('--json', 'one JSON document (schema_version 1)')
    .option('--ndjson', 'one JSON event per line: begin, tool..., end')
    .option('--wide', 'on a terminal, every column at full width, even past its edge (default: columns left out to fit)')
    .addOption(colorOption())
    .addHelpText(
      'after',
      `
Each message counts once, under the run that first persisted it, as a search of the same scope sees
it (--run: that run's full record); copies a compaction indexed again count too, unless --collapse.
Counts come from the index when it is current, else a replay: the same numbers either way.

Examples:
  convsearch tools --db sessions.db
  convsearch tools --conversation conv-42 --since 7d
  convsearch tools --agent 'deploy-*' --json | jq -r '.tools[] | "\\(.tool_name) \\(.calls)"'`,
    )
    .action(async (flags: ToolsFlags) => {
      const format = machineFormat(flags);
      const { since, until } = timeBounds(flags);
      const agents = new GlobSet([...new Set(flags.agent ?? [])]);
      const scope: ScopeFilter = { scope: flags.conversation !== undefined ? 'conversation' : 'all', conversationId: flags.conversation ?? null, runId: flags.run ?? null };
      const { tools, warnings } = await withStore(flags.db, { color: flags.color }, (store, onProgress) => {
        const history = new HistorySource(store, { onProgress });
        // a scope naming what the store does not hold is a typo, never an empty list
        const miss = scopeMiss(history.runs(), scope);
        if (miss) throw new CommandError(scopeMissMessage(miss));
        const ctx = { snapshotTime: snapshotTimes(store) };
        const list = (source: CorpusSource) => {
          const corpus = source.corpus(scope);
          return { tools: toolInventory(corpus, { agents, since, until, collapse: Boolean(flags.collapse) }, ctx), warnings: corpus.warnings };
        };
        const replay = () => list(new ReplayCorpusSource(history));
        const index = indexChoice(flags);
        return index === false ? replay() : withIndex(store, { path: index.path, onProgress, ...indexFallback }, list, replay);
      });
      if (format === 'json') writeOut(JSON.stringify(toolsJson(tools, warnings), null, 2) + '\n');
      else if (format === 'ndjson') writeOut(toolsNdjson(tools, warnings, toolsParams(flags, since, until)).join('\n') + '\n');
      else await printTable(flags, (style) => toolsTable(tools, style));
      reportWarnings(warnings);
      process.exitCode = EXIT_FOUND;
    });
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
