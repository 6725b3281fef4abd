import {
  colorEnabled,
  storeTargets,
  withSession,
  withStores,
  type ColorChoice,
  type Session,
  type SessionOptions,
  type StoreSet,
  type WorkHooks,
} from '../lib.js';
import { CommandError } from './errors.js';
import { resolveDb } from './flags.js';
import type { Io } from './io.js';
import { progressWanted, startProgress } from './progress.js';

export interface CliSessionOptions extends SessionOptions {
  readonly quiet?: boolean;
  /** The command's --color: the spinner follows it too. */
  readonly color?: ColorChoice;
}

/**
 * A library session on the store named by `--db`, with a progress spinner on a terminal when the store
 * is big enough to need one; `fn` passes the hooks on to the session's calls. When `--db` names several
 * stores (repeated, or a directory of .db files), `several` answers over all of them; a command without
 * it says it reads one store.
 */
export function withCliSession<T>(
  io: Io,
  db: readonly string[] | undefined,
  opts: CliSessionOptions,
  fn: (session: Session, hooks: WorkHooks) => T,
  several?: { readonly command: string; readonly fn?: (stores: StoreSet, hooks: WorkHooks) => T },
): Promise<T> {
  const { quiet, color, ...rest } = opts;
  const options = { ...rest, env: io.env };
  const targets = resolveDb(db, io.env);
  const spinner = async <R>(runs: number, go: (hooks: WorkHooks) => R): Promise<R> => {
    const wanted = progressWanted(quiet ?? false, runs, io.stderr, io.env);
    const progress = await startProgress(wanted ? io.stderr.stream : undefined, colorEnabled(color ?? 'auto', io.stderr, io.env));
    try {
      return go({ onProgress: progress.onProgress });
    } finally {
      progress.stop();
    }
  };
  const stores = storeTargets(targets);
  if (stores.length === 1) return withSession(stores[0]!, options, (session) => spinner(session.runCount(), (hooks) => fn(session, hooks)));
  const multi = several?.fn;
  if (!multi) {
    const what = several ? `convsearch ${several.command}` : 'this command';
    throw new CommandError(`${what} reads one store at a time, and --db names ${stores.length} (${stores.join(', ')}): pass one`);
  }
  return withStores(stores, options, (set) => spinner(set.runCount(), (hooks) => multi(set, hooks)));
}
