import { Command, CommanderError } from 'commander';

import { buildCommand, type CommandDef } from './command.js';
import { completeCommand, completionCommand, completionScript } from './completion-command.js';
import { EXIT_ERROR, reportError } from './errors.js';
import { FLAGS } from './flags.js';
import { Io, type Sink } from './io.js';
import { prestart } from '../lib.js';
import { indexCommand } from './index-command.js';
import { conversationsCommand, runsCommand } from './list-commands.js';
import { reportCommand } from './report-command.js';
import { exportCommand } from './export-command.js';
import { searchCommand } from './search-command.js';
import { showCommand } from './show-command.js';
import { VERSION } from './version.js';
import { toolsCommand } from './tools-command.js';
import { whereCommand } from './where-command.js';

const PROGRAM = 'convsearch';
const TOP_FLAGS = [FLAGS.version];

/** Every command, in the order the help lists them. */
export function commands(): CommandDef[] {
  const all: CommandDef[] = [
    searchCommand(),
    runsCommand(),
    conversationsCommand(),
    toolsCommand(),
    showCommand(),
    reportCommand(),
    whereCommand(),
    exportCommand(),
    indexCommand(),
    completionCommand((shell) => completionScript(PROGRAM, TOP_FLAGS, all, shell)),
    completeCommand(),
  ];
  return all;
}

export function buildProgram(io: Io): Command {
  const program: Command = new Command(PROGRAM)
    .description('Search pydantic-ai-harness step-persistence stores (read-only), with the reference BM25 ranking.')
    .version(VERSION, FLAGS.version.spelling, FLAGS.version.help)
    .showHelpAfterError('(run with --help for usage)');
  for (const def of commands()) program.addCommand(buildCommand(def, io), { hidden: def.hidden === true });
  program.addHelpText(
    'after',
    `
Every command reads the store named by --db, else $CONVSEARCH_DB, else the first default place holding
one (./sessions.db, then CLAI 2's store; 'convsearch where' lists them), and never writes to it.

Examples:
  convsearch search refund policy --db sessions.db --conversation conv-42
  convsearch search delete_user --scope all --role tool-call --tool delete_user --expect-none
  convsearch runs --since 2025-03-01 --sort messages --limit 10
  convsearch tools --conversation conv-42 --since 7d
  convsearch show run-7f3a --at 12 -C 2
  convsearch report refund --db sessions.db -o report.html
  convsearch export --conversation conv-42 --format md --redact-preset secrets -o conv-42.md
  source <(convsearch completion bash)`,
  );
  const exitWith2 = (cmd: Command): void => {
    cmd.exitOverride();
    cmd.configureOutput({
      writeOut: (str) => io.out(str),
      writeErr: (str) => io.err(str),
      outputError: (str, write) => write(str.startsWith('error:') ? `convsearch: ${str}` : str),
      // commander's own default: the terminal's width, else its 80 columns (it takes undefined for that)
      getOutHelpWidth: () => (io.stdout.isTTY ? io.stdout.columns : undefined) as number,
      getErrHelpWidth: () => (io.stderr.isTTY ? io.stderr.columns : undefined) as number,
      // the help is plain text: nothing to colour, nothing to strip
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    });
    cmd.commands.forEach(exitWith2);
  };
  exitWith2(program);
  return program;
}

/**
 * Runs one command line (`argv` as process.argv gives it) against a sink and returns its exit status.
 * Nothing here touches the process: bin/convsearch.js binds the sink to it, tests bind it to strings.
 */
export async function main(argv: readonly string[], sink: Sink): Promise<number> {
  const io = new Io(sink);
  // a server's driver thread starts now (unless the launcher started it), so that its start overlaps with parsing and setting up
  prestart(argv.slice(2), sink.env);
  try {
    await buildProgram(io).parseAsync([...argv]);
  } catch (e) {
    // help and version are successes; every other parse failure is a usage error
    if (e instanceof CommanderError) io.status = e.exitCode === 0 ? 0 : EXIT_ERROR;
    else reportError(io, e);
  }
  return io.status;
}
