import { escapeInline } from '../lib.js';
import type { CommandDef } from './command.js';
import { EXIT_FOUND, UsageError } from './errors.js';
import { FLAGS, reworded } from './flags.js';
import type { Io } from './io.js';
import { withCliSession } from './session.js';

interface IndexFlags {
  db?: string[];
  index?: string;
  quiet?: boolean;
  rebuild?: boolean;
}

/** `convsearch index sync`: the one writer of a shared index. */
export function indexCommand(): CommandDef {
  return {
    name: 'index',
    description: 'keep a shared index (in Postgres) up to date with stores: sync',
    args: [{ spelling: '<action>', help: 'sync: fold what changed in each store into the shared index', choices: ['sync'] }],
    flags: [
      reworded(FLAGS.index, 'the shared index: postgres://…[?schema=name] (default schema convsearch_index; default: $CONVSEARCH_INDEX)'),
      reworded(
        FLAGS.db,
        'store to bring the index up to date with (default: $CONVSEARCH_DB, else ./sessions.db); repeatable: one index holds several stores',
      ),
      FLAGS.rebuild,
      FLAGS.quiet,
    ],
    helpAfter: `
One transaction per store, under that store's advisory lock: a second sync of the same store waits for
the first, then finds it current; syncs of other stores go on meanwhile. A sync that is killed leaves
the index as the last one left it; --rebuild builds the store's part beside the one searches read, which
they keep reading until it commits. Searches and listings with --index postgres://… only read the
index, and say when it is behind a store (or, when the store cannot be read, how old the index is).

Examples:
  convsearch index sync --index postgres://indexer@db/forensics --db sessions.db --db other.db
  convsearch search refund --index postgres://searcher@db/forensics --db sessions.db`,
    async action(io: Io, _action: string, flags: IndexFlags) {
      const url = flags.index ?? (io.env.CONVSEARCH_INDEX || undefined);
      if (url === undefined) throw new UsageError('index sync needs the shared index: pass --index postgres://… or set $CONVSEARCH_INDEX');
      const results = await withCliSession(
        io,
        flags.db,
        { quiet: flags.quiet, index: false, onWarning: (m) => io.warn(m) },
        (session, hooks) => session.syncIndex(url, hooks, { rebuild: flags.rebuild === true }),
      );
      for (const { label, report } of results) {
        const what = report.upToDate
          ? 'up to date'
          : `${report.runsReplayed} runs replayed, ${report.runsResumed} resumed, ${report.runsRemoved} removed`;
        if (!flags.quiet) io.err(`convsearch: index sync: ${escapeInline(label)}: ${what}\n`);
      }
      io.status = EXIT_FOUND;
    },
  };
}
