import { Command, Option } from 'commander';
import { HistorySource } from '../history/source.js';
import { summarizeRuns } from '../history/listing.js';
import { colorEnabled, makeChalk, type ColorChoice } from '../output/color.js';
import { showJson, showText } from '../output/show.js';
import { openStore } from '../store/open.js';
import { EXIT_FOUND, EXIT_NOT_FOUND } from './errors.js';
import { reportWarnings, writeOut } from './io.js';
import { dbOption, resolveDb } from './options.js';
import { escapeInline } from '../output/escape.js';

interface ShowFlags {
  db?: string;
  json?: boolean;
  color: ColorChoice;
}

export function showCommand(): Command {
  return new Command('show')
    .description("print a run's replayed full record, numbered as in search excerpts")
    .argument('<run-id>', 'the run to show')
    .addOption(dbOption())
    .option('--json', 'one JSON document (schema_version 1)')
    .addOption(new Option('--color <when>', 'colour: auto, always or never').choices(['auto', 'always', 'never']).default('auto'))
    .addHelpText('after', '\nExamples:\n  convsearch show run-alpha-1 --db sessions.db\n  convsearch show run-alpha-1 --json | jq -r \'.messages[] | select(.kind == "response") | .text\'')
    .action((runId: string, flags: ShowFlags) => {
      const store = openStore(resolveDb(flags.db));
      try {
        const source = new HistorySource(store);
        const run = source.runs().find((r) => r.runId === runId);
        if (!run) {
          process.stderr.write(`convsearch: no run '${escapeInline(runId)}' in ${escapeInline(store.path)}\n`);
          process.exitCode = EXIT_NOT_FOUND;
          return;
        }
        const [summary] = summarizeRuns(source, [run]);
        const record = source.replay(runId).messages;
        const c = makeChalk(colorEnabled(flags.color, process.stdout));
        writeOut((flags.json ? JSON.stringify(showJson(summary!, record), null, 2) : showText(summary!, record, c)) + '\n');
        reportWarnings(source.warnings());
        process.exitCode = EXIT_FOUND;
      } finally {
        store.close();
      }
    });
}
