import {
  type ColorChoice,
  colorEnabled,
  DEFAULTS,
  escapeInline,
  makeChalk,
  showJson,
  showNdjson,
  showText,
  terminalWidth,
  PastEndError,
} from '../lib.js';
import type { CommandDef } from './command.js';
import { EXIT_FOUND, UsageError } from './errors.js';
import { FLAGS, parseCount, parseLimit, reworded } from './flags.js';
import type { Io } from './io.js';
import { withCliSession } from './session.js';

interface ShowFlags {
  db?: string[];
  json?: boolean;
  ndjson?: boolean;
  at?: string;
  context?: string;
  includeInterrupted?: boolean;
  color: ColorChoice;
}

export function showCommand(): CommandDef {
  return {
    name: 'show',
    description: "print a run's replayed full record, numbered as in search excerpts",
    args: [{ spelling: '<run-id>', help: 'the run to show', completes: { kind: 'run' } }],
    flags: [
      FLAGS.db,
      FLAGS.at,
      reworded(FLAGS.context, `messages of context around --at (default ${DEFAULTS.showContext})`, { withoutDefault: true }),
      FLAGS.includeInterrupted,
      FLAGS.json,
      reworded(FLAGS.ndjson, 'one JSON event per line: begin, message..., interrupted..., end'),
      FLAGS.color,
    ],
    helpAfter: `
Exit status: 0 when the run exists; 2 when it does not (with the closest ids) or on another error.

Examples:
  convsearch show run-alpha-1 --db sessions.db
  convsearch show run-alpha-1 --at 7 -C 2
  convsearch show run-alpha-1 --include-interrupted
  convsearch show run-alpha-1 --json | jq -r '.messages[] | select(.roles | index("tool-call")) | .parts[] | select(.role == "tool-call") | .tool_name'
  convsearch search refund --db sessions.db --scope all --plain | fzf --delimiter : --preview 'convsearch show {1} --at {2} -C 3 --db sessions.db --color always'`,
    async action(io: Io, runId: string, flags: ShowFlags) {
      if (flags.json && flags.ndjson) throw new UsageError('--json and --ndjson ask for different outputs; pass one');
      const at = flags.at === undefined ? null : parseLimit('--at', flags.at);
      if (flags.context !== undefined && at === null) throw new UsageError('-C/--context needs --at <n>');
      const context = flags.context === undefined ? DEFAULTS.showContext : parseCount('--context', flags.context, 'context_lines');
      const request = { at, context, includeInterrupted: flags.includeInterrupted === true };
      const view = await withCliSession(io, flags.db, { color: flags.color }, (session, hooks) =>
        session.showRun(runId, request, hooks),
      ).catch((e: unknown) => {
        if (!(e instanceof PastEndError)) throw e;
        const n = e.length;
        throw new UsageError(`--at ${at} is past the end: run ${escapeInline(runId)} has ${n} message${n === 1 ? '' : 's'}`);
      });
      if (flags.json) io.out(JSON.stringify(showJson(view), null, 2) + '\n');
      else if (flags.ndjson) io.out(showNdjson(view).join('\n') + '\n');
      else
        io.out(
          showText(view, { chalk: makeChalk(colorEnabled(flags.color, io.stdout, io.env)), width: terminalWidth(io.stdout, io.env) }) +
            '\n',
        );
      io.reportWarnings(view.warnings);
      io.status = EXIT_FOUND;
    },
  };
}
