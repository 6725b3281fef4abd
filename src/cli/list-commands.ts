import { Command, Option } from 'commander';
import { HistorySource } from '../history/source.js';
import { summarizeConversations, summarizeRuns } from '../history/listing.js';
import { colorEnabled, makeChalk, type ColorChoice } from '../output/color.js';
import { conversationsJson, conversationsTable, runsJson, runsTable } from '../output/listing.js';
import { openStore } from '../store/open.js';
import { reportWarnings, writeOut } from './io.js';
import { dbOption, resolveDb } from './options.js';

interface ListFlags {
  db?: string;
  json?: boolean;
  color: ColorChoice;
}

const colorOption = () => new Option('--color <when>', 'colour: auto, always or never').choices(['auto', 'always', 'never']).default('auto');

function withSource<T>(flags: ListFlags, fn: (source: HistorySource) => T): T {
  const store = openStore(resolveDb(flags.db));
  try {
    const source = new HistorySource(store);
    const out = fn(source);
    reportWarnings(source.warnings());
    return out;
  } finally {
    store.close();
  }
}

export function runsCommand(): Command {
  return new Command('runs')
    .description('list the runs of a store in corpus order (started_at), with replayed message counts')
    .addOption(dbOption())
    .option('--json', 'one JSON document (schema_version 1)')
    .addOption(colorOption())
    .addHelpText('after', '\nExamples:\n  convsearch runs --db sessions.db\n  convsearch runs --json | jq -r \'.runs[] | select(.interrupted_snapshots > 0) | .run_id\'')
    .action((flags: ListFlags) => {
      const text = withSource(flags, (source) => {
        const runs = summarizeRuns(source);
        return flags.json ? JSON.stringify(runsJson(runs), null, 2) : runsTable(runs, makeChalk(colorEnabled(flags.color, process.stdout)));
      });
      writeOut(text + '\n');
    });
}

export function conversationsCommand(): Command {
  return new Command('conversations')
    .description('list conversations: their runs, time span and searchable messages')
    .addOption(dbOption())
    .option('--json', 'one JSON document (schema_version 1)')
    .addOption(colorOption())
    .addHelpText('after', '\nExamples:\n  convsearch conversations --db sessions.db\n  convsearch conversations --json | jq -r \'.conversations[].conversation_id\'')
    .action((flags: ListFlags) => {
      const text = withSource(flags, (source) => {
        const convs = summarizeConversations(source);
        return flags.json
          ? JSON.stringify(conversationsJson(convs), null, 2)
          : conversationsTable(convs, makeChalk(colorEnabled(flags.color, process.stdout)));
      });
      writeOut(text + '\n');
    });
}
