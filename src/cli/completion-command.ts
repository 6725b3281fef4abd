import { Argument, Command, type Option } from 'commander';
import { bashScript } from '../completion/bash.js';
import { fishScript } from '../completion/fish.js';
import { completionModel } from '../completion/model.js';
import { zshScript } from '../completion/zsh.js';
import { listRuns } from '../store/runs.js';
import { openStore, type Store } from '../store/open.js';
import { storeToolNames } from '../history/tool-names.js';
import { writeOut } from './io.js';
import { collect, dbOption, resolveDb } from './options.js';

export type Shell = 'bash' | 'zsh' | 'fish';

const repeatable = (o: Option): boolean => o.parseArg === (collect as unknown);

/** The completion script for a shell, generated from the program's command definitions. */
export function completionScript(program: Command, shell: Shell): string {
  const model = completionModel(program, repeatable);
  return shell === 'bash' ? bashScript(model) : shell === 'zsh' ? zshScript(model) : fishScript(model);
}

export function completionCommand(program: () => Command): Command {
  return new Command('completion')
    .description('print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .addHelpText(
      'after',
      `
The scripts complete commands, flags and flag values; --run, --parent, --conversation, --tool
and show's run id are completed from the store named by --db (or $CONVSEARCH_DB).

Examples:
  source <(convsearch completion bash)      # this shell only
  d=~/.local/share/bash-completion/completions && mkdir -p $d && convsearch completion bash > $d/convsearch
  d=~/.zfunc && mkdir -p $d && convsearch completion zsh > $d/_convsearch    # with fpath=(~/.zfunc $fpath)
  d=~/.config/fish/completions && mkdir -p $d && convsearch completion fish > $d/convsearch.fish`,
    )
    .action((shell: Shell) => {
      writeOut(completionScript(program(), shell));
    });
}

/** What `__complete` lists: run ids and conversation ids from the runs table, tool names from the snapshots. */
function completionWords(store: Store, kind: 'runs' | 'conversations' | 'tools'): string[] {
  if (kind === 'tools') return storeToolNames(store);
  const runs = listRuns(store);
  return kind === 'runs' ? runs.map((r) => r.runId) : [...new Set(runs.map((r) => r.conversationId).filter((c): c is string => c !== null))];
}

/**
 * `convsearch __complete runs|conversations|tools [--db path]`: words for the completion scripts, one
 * per line, without replaying anything. Hidden; the scripts drop its stderr.
 */
export function completeCommand(): Command {
  return new Command('__complete')
    .addArgument(new Argument('<kind>').choices(['runs', 'conversations', 'tools']))
    .addOption(dbOption())
    .action((kind: 'runs' | 'conversations' | 'tools', flags: { db?: string }) => {
      const store = openStore(resolveDb(flags.db));
      try {
        const ids = completionWords(store, kind);
        // one id per line: ids holding a newline or control character cannot be completed safely
        const safe = ids.filter((id) => id !== '' && !/[\u0000-\u001f\u007f-\u009f]/.test(id));
        if (safe.length) writeOut(safe.join('\n') + '\n');
      } finally {
        store.close();
      }
    });
}
