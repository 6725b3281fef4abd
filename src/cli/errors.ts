import { escapeInline, IndexRefusedError, IndexUnavailableError, RequestError, StoreError } from '../lib.js';
import type { Io } from './io.js';

export const EXIT_FOUND = 0;
export const EXIT_NOT_FOUND = 1;
export const EXIT_ERROR = 2;

/** A failure the user can act on (its message says how): one line on stderr, exit status 2. */
export class CommandError extends Error {}

/** A wrong flag or flag combination. */
export class UsageError extends CommandError {}

/** Turns any failure into one line on stderr and exit status 2; never a stack trace. */
export function reportError(io: Io, e: unknown): void {
  let message: string;
  if (
    e instanceof CommandError ||
    e instanceof StoreError ||
    e instanceof RequestError ||
    e instanceof IndexRefusedError ||
    e instanceof IndexUnavailableError
  )
    message = e.message;
  else if (e instanceof Error && 'code' in e && typeof e.code === 'string' && e.code.startsWith('SQLITE_')) {
    message = `database error: ${e.message} (${e.code})`;
  } else if (e instanceof Error) message = `internal error: ${e.message}`;
  else message = `internal error: ${String(e)}`;
  io.err(`convsearch: error: ${escapeInline(message.replace(/[\r\n]+/g, ' '))}\n`);
  io.status = EXIT_ERROR;
}
