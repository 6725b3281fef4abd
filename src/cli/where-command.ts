import { resolveStores, whereFound, whereJson, whereLines } from '../lib.js';
import type { CommandDef } from './command.js';
import { EXIT_FOUND, EXIT_NOT_FOUND } from './errors.js';
import { FLAGS, reworded } from './flags.js';
import type { Io } from './io.js';

/**
 * `convsearch where`: every place a store is looked for when no --db is given, in order, what each
 * holds, and which one a command reads. Exit 0 when that one is a store, 1 when there is none.
 */
export function whereCommand(): CommandDef {
  return {
    name: 'where',
    description: 'list the places a store is looked for without --db, what each holds, and which one is read',
    args: [],
    flags: [reworded(FLAGS.json, 'one JSON document (schema_version 1): the places, and the one read')],
    helpAfter: `
Without --db, a command reads $CONVSEARCH_DB when it is set, else the first of these that holds a step
store: ./sessions.db, then CLAI 2's $XDG_CONFIG_HOME/pydantic-clai2/sessions.db (~/.config when
$XDG_CONFIG_HOME is not set). A file there that is not a step store is skipped, and said so.
Exit status: 0 when a store would be read, 1 when none would.

Examples:
  convsearch where
  convsearch where --json | jq -r .used`,
    action(io: Io, flags: { json?: boolean }) {
      const r = resolveStores(undefined, io.env, io.cwd, true);
      if (flags.json) io.out(JSON.stringify(whereJson(r), null, 2) + '\n');
      else io.out(whereLines(r).join('\n') + '\n');
      io.status = whereFound(r) ? EXIT_FOUND : EXIT_NOT_FOUND;
    },
  };
}
