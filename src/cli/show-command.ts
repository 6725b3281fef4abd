import { Command } from 'commander';
import { beyondRecord } from '../history/interrupted.js';
import { summarizeRuns, replayCounts } from '../history/listing.js';
import { colorEnabled, makeChalk, type ColorChoice } from '../output/color.js';
import { escapeInline } from '../output/escape.js';
import { showJson, showNdjson, showText, type ShowView } from '../output/show.js';
import { terminalWidth } from '../output/width.js';
import { CommandError, EXIT_FOUND, UsageError } from './errors.js';
import { scopeMiss, scopeMissMessage } from '../search/scope.js';
import { reportWarnings, writeOut } from './io.js';
import { colorOption, dbOption, parseLimit } from './options.js';
import { withSource } from './session.js';

interface ShowFlags {
  db?: string;
  json?: boolean;
  ndjson?: boolean;
  at?: string;
  context?: string;
  includeInterrupted?: boolean;
  color: ColorChoice;
}

const DEFAULT_CONTEXT = 5;

export function showCommand(): Command {
  return new Command('show')
    .description("print a run's replayed full record, numbered as in search excerpts")
    .argument('<run-id>', 'the run to show')
    .addOption(dbOption())
    .option('--at <n>', 'show only message [n] and its context (search hits name it: run_id:n)')
    .option('-C, --context <k>', `messages of context around --at (default ${DEFAULT_CONTEXT})`)
    .option('--include-interrupted', 'also list what interrupted snapshots held beyond the record (never searchable)')
    .option('--json', 'one JSON document (schema_version 1)')
    .option('--ndjson', 'one JSON event per line: begin, message..., interrupted..., end')
    .addOption(colorOption())
    .addHelpText(
      'after',
      `
Exit status: 0 when the run exists; 2 when it does not (with the closest ids) or on another error.

Examples:
  convsearch show run-alpha-1 --db sessions.db
  convsearch show run-alpha-1 --at 7 -C 2
  convsearch show run-alpha-1 --include-interrupted
  convsearch show run-alpha-1 --json | jq -r '.messages[] | select(.roles | index("tool-call")) | .parts[] | select(.role == "tool-call") | .tool_name'
  convsearch search refund --db sessions.db --scope all --plain | fzf --delimiter : --preview 'convsearch show {1} --at {2} -C 3 --db sessions.db --color always'`,
    )
    .action(async (runId: string, flags: ShowFlags) => {
      if (flags.json && flags.ndjson) throw new UsageError('--json and --ndjson ask for different outputs; pass one');
      const at = flags.at === undefined ? null : parseLimit('--at', flags.at);
      if (flags.context !== undefined && at === null) throw new UsageError('-C/--context needs --at <n>');
      const context = flags.context === undefined ? DEFAULT_CONTEXT : parseLimit('--context', flags.context);
      const view = await withSource(flags.db, { color: flags.color }, (source): ShowView => {
        const run = source.runs().find((r) => r.runId === runId);
        if (!run) throw new CommandError(scopeMissMessage(scopeMiss(source.runs(), { scope: 'all', conversationId: null, runId })!));
        const [summary] = summarizeRuns(source, [run], replayCounts(source));
        const record = source.replay(runId).messages;
        if (at !== null && at >= record.length) {
          throw new UsageError(`--at ${at} is past the end: run ${escapeInline(runId)} has ${record.length} message${record.length === 1 ? '' : 's'}`);
        }
        return {
          summary: summary!,
          record,
          window: at === null ? null : { at, context, first: Math.max(0, at - context), last: Math.min(record.length - 1, at + context) },
          interrupted: flags.includeInterrupted ? beyondRecord(record, source.interruptedSnapshots(runId)) : null,
          warnings: source.warnings([runId]),
        };
      });
      if (flags.json) writeOut(JSON.stringify(showJson(view), null, 2) + '\n');
      else if (flags.ndjson) writeOut(showNdjson(view).join('\n') + '\n');
      else writeOut(showText(view, { chalk: makeChalk(colorEnabled(flags.color, process.stdout)), width: terminalWidth(process.stdout) }) + '\n');
      reportWarnings(view.warnings);
      process.exitCode = EXIT_FOUND;
    });
}
