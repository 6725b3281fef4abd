import { closeSync } from 'node:fs';
import { isatty } from 'node:tty';
import { warningNotices, type Warning } from '../api/warnings.js';
import { escapeInline } from '../output/escape.js';
import { warningLine } from '../output/warnings.js';

/** Where a command's output goes: a real stream, or nowhere (`-q`). */
export type OutStream = NodeJS.WriteStream;

const closed = new WeakSet<NodeJS.WriteStream>();

// A reader that goes away (`| head -1`) is not an error: stop writing, keep the exit status.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') closed.add(stream);
    else throw e;
  });
}

export function writeTo(stream: OutStream, text: string): void {
  if (!closed.has(stream)) stream.write(text);
}

export function writeOut(text: string): void {
  writeTo(process.stdout, text);
}

export function writeErr(text: string): void {
  writeTo(process.stderr, text);
}

export function warn(message: string): void {
  // paths and ids inside are the user's or the store's: one line, nothing a terminal would act on
  writeErr(`convsearch: warning: ${escapeInline(message)}\n`);
}

/** Counted warnings on stderr, one line per run and kind; details go to the JSON output. */
export function reportWarnings(warnings: readonly Warning[]): void {
  for (const n of warningNotices(warnings)) warn(warningLine(n));
}

/**
 * At exit Node puts back the terminal modes it found at start on every stdio fd that is a terminal
 * (its ResetStdio). When convsearch feeds a pipe (`| fzf`, `| less`), the program reading it shares that
 * terminal and has switched it to raw mode in the meantime: the reset would undo that under it (keys
 * echoed, Enter read as Ctrl-J). Node leaves alone an fd that no longer refers to what it found, so a
 * convsearch writing into a pipe closes its terminal fds as it exits. Nothing is written after 'exit'.
 */
export function leaveTerminalAloneAtExit(): void {
  if (process.stdout.isTTY) return; // convsearch draws on the terminal itself: nobody downstream to disturb
  process.on('exit', () => {
    for (const fd of [0, 2]) {
      if (!isatty(fd)) continue;
      try {
        closeSync(fd);
      } catch {
        // already closed: nothing to protect
      }
    }
  });
}
