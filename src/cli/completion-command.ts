import { Argument, Command, type Option } from 'commander';
import { bashScript } from '../completion/bash.js';
import { fishScript } from '../completion/fish.js';
import { completionModel } from '../completion/model.js';
import { zshScript } from '../completion/zsh.js';
import { listRuns } from '../store/runs.js';
import { openStore, type Store } from '../store/open.js';
import { storeToolNames } from '../history/tool-names.js';
import { writeOut } from './io.js';
import { collect, collectWhole, dbOption, resolveDb } from './options.js';

export type Shell = 'bash' | 'zsh' | 'fish';

const repeatable = (o: Option): boolean => o.parseArg === (collect as unknown) || o.parseArg === (collectWhole as unknown);

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
The scripts complete commands, flags and flag values; --run, --parent, --conversation, --tool,
--agent and show's run id are completed from the store named by --db (or $CONVSEARCH_DB).

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

type CompleteKind = 'runs' | 'conversations' | 'tools' | 'agents';

/** What `__complete` lists: run ids, conversation ids and agent names from the runs table, tool names from the snapshots. */
function completionWords(store: Store, kind: CompleteKind): string[] {
  if (kind === 'tools') return storeToolNames(store);
  const runs = listRuns(store);
  if (kind === 'runs') return runs.map((r) => r.runId);
  const values = runs.map((r) => (kind === 'agents' ? r.agentName : r.conversationId)).filter((c): c is string => c !== null);
  return kind === 'agents' ? [...new Set(values)].sort() : [...new Set(values)];
}

/**
 * `convsearch __complete runs|conversations|tools|agents [--db path]`: words for the completion scripts, one
 * per line, without replaying anything. Hidden; the scripts drop its stderr.
 */
export function completeCommand(): Command {
  return new Command('__complete')
    .addArgument(new Argument('<kind>').choices(['runs', 'conversations', 'tools', 'agents']))
    .addOption(dbOption())
    .action((kind: CompleteKind, flags: { db?: string }) => {
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
