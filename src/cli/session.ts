import type { WorkHooks } from '../api/search.js';
import { withSession, type Session, type SessionOptions } from '../api/session.js';
import { colorEnabled, type ColorChoice } from '../output/color.js';
import { resolveDb } from './flags.js';
import { progressWanted, startProgress } from './progress.js';

export interface CliSessionOptions extends SessionOptions {
  readonly quiet?: boolean;
  /** The command's --color: the spinner follows it too. */
  readonly color?: ColorChoice;
}

/**
 * A library session on the store named by `--db`, with a progress spinner on a terminal when the store
 * is big enough to need one; `fn` passes the hooks on to the session's calls.
 */
export function withCliSession<T>(
  db: string | undefined,
  opts: CliSessionOptions,
  fn: (session: Session, hooks: WorkHooks) => T,
): Promise<T> {
  const { quiet, color, ...options } = opts;
  return withSession(resolveDb(db), options, async (session) => {
    const progress = await startProgress(progressWanted(quiet ?? false, session.runCount()), colorEnabled(color ?? 'auto', process.stderr));
    try {
      return fn(session, { onProgress: progress.onProgress });
    } finally {
      progress.stop();
    }
  });
}
