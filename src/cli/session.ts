import { colorEnabled, withSession, type ColorChoice, type Session, type SessionOptions, type WorkHooks } from '../lib.js';
import { resolveDb } from './flags.js';
import type { Io } from './io.js';
import { progressWanted, startProgress } from './progress.js';

export interface CliSessionOptions extends SessionOptions {
  readonly quiet?: boolean;
  /** The command's --color: the spinner follows it too. */
  readonly color?: ColorChoice;
}

/**
 * A library session on the stores `--db` names (one, or several read as one), with a progress spinner
 * on a terminal when they are big enough to need one; `fn` passes the hooks on to the session's calls.
 */
export function withCliSession<T>(
  io: Io,
  db: readonly string[] | undefined,
  opts: CliSessionOptions,
  fn: (session: Session, hooks: WorkHooks) => T,
): Promise<T> {
  const { quiet, color, ...rest } = opts;
  return withSession(
    cliStores(io, db, quiet ?? false),
    { ...rest, env: io.env, ...(io.sink.bulkWrite ? { onBulkWrite: io.sink.bulkWrite } : {}) },
    async (session) => {
      const wanted = progressWanted(quiet ?? false, () => session.runCount(), io.stderr, io.env);
      const progress = await startProgress(wanted ? io.stderr.stream : undefined, colorEnabled(color ?? 'auto', io.stderr, io.env));
      try {
        return fn(session, { onProgress: progress.onProgress });
      } finally {
        progress.stop();
      }
    },
  );
}

/**
 * The stores a command reads (resolveDb). A store found in a default place is named on stderr, after
 * the places before it that hold something else (never taken silently for "no store"); -q says nothing.
 */
export function cliStores(io: Io, db: readonly string[] | undefined, quiet: boolean): string[] {
  const r = resolveDb(db, io.env, io.cwd);
  if (r.found !== null && !quiet) {
    for (const l of r.looked) if (l.skipped !== null) io.warn(`skipped ${l.shown} (${l.from}): ${l.skipped}`);
    io.note(`no --db or $CONVSEARCH_DB given: reading ${r.found.shown} (${r.found.from})`);
  }
  return r.targets;
}
