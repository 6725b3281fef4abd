import type { CommandDef } from './command.js';
import { bashScript } from './completion/bash.js';
import { fishScript } from './completion/fish.js';
import { completionModel } from './completion/model.js';
import { zshScript } from './completion/zsh.js';
import { FLAGS, type Flag } from './flags.js';
import type { Io } from './io.js';
import { withCliSession } from './session.js';

export type Shell = 'bash' | 'zsh' | 'fish';

/** The completion script for a shell, generated from the command definitions and the flag table. */
export function completionScript(program: string, topFlags: readonly Flag[], defs: readonly CommandDef[], shell: Shell): string {
  const model = completionModel(program, topFlags, defs);
  return shell === 'bash' ? bashScript(model) : shell === 'zsh' ? zshScript(model) : fishScript(model);
}

export function completionCommand(script: (shell: Shell) => string): CommandDef {
  return {
    name: 'completion',
    description: 'print a shell completion script (bash, zsh or fish)',
    args: [{ spelling: '<shell>', help: 'the shell', choices: ['bash', 'zsh', 'fish'] }],
    flags: [],
    helpAfter: `
The scripts complete commands, flags and flag values; --run, --parent, --conversation, --tool,
--agent and show's run id are completed from the store a command would read (--db, $CONVSEARCH_DB, or the one 'convsearch where' finds).

Examples:
  source <(convsearch completion bash)      # this shell only
  d=~/.local/share/bash-completion/completions && mkdir -p $d && convsearch completion bash > $d/convsearch
  d=~/.zfunc && mkdir -p $d && convsearch completion zsh > $d/_convsearch    # with fpath=(~/.zfunc $fpath)
  d=~/.config/fish/completions && mkdir -p $d && convsearch completion fish > $d/convsearch.fish`,
    action(io: Io, shell: Shell) {
      io.out(script(shell));
    },
  };
}

type Words = 'runs' | 'conversations' | 'tools' | 'agents';

/**
 * `convsearch __complete runs|conversations|tools|agents [--db path]`: words for the completion scripts, one
 * per line, without replaying anything. Hidden; the scripts drop its stderr.
 */
export function completeCommand(): CommandDef {
  return {
    name: '__complete',
    hidden: true,
    args: [{ spelling: '<kind>', choices: ['runs', 'conversations', 'tools', 'agents'] }],
    flags: [FLAGS.db],
    async action(io: Io, kind: Words, flags: { db?: string[] }) {
      const fromRuns = (runs: ReadonlyArray<{ runId: string; agentName: string | null; conversationId: string | null }>): string[] => {
        if (kind === 'runs') return runs.map((r) => r.runId);
        if (kind === 'agents') return [...new Set(runs.map((r) => r.agentName).filter((a): a is string => a !== null))].sort();
        return [...new Set(runs.map((r) => r.conversationId).filter((c): c is string => c !== null))];
      };
      const words = await withCliSession(
        io,
        flags.db,
        { quiet: true },
        // run ids as the session names them (qualified where several stores share one)
        (session) => (kind === 'tools' ? session.toolNames() : fromRuns(session.runs())),
      );
      // one word per line: ids holding a newline or control character cannot be completed safely
      const safe = words.filter((id) => id !== '' && !/[\u0000-\u001f\u007f-\u009f]/.test(id));
      if (safe.length) io.out(safe.join('\n') + '\n');
    },
  };
}
