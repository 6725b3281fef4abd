import { escapeInline, warningLine, warningNotices, type Warning } from '../lib.js';

/** One output stream as a command sees it: text in, and what the terminal behind it can do. */
export interface TextStream {
  write(text: string): void;
  readonly isTTY?: boolean;
  readonly columns?: number;
  /** The real stream, for a spinner that draws on it (only a terminal has one worth drawing on). */
  readonly stream?: NodeJS.WriteStream;
}

/**
 * Everything a command touches outside the library: its two output streams, standard input, and the
 * environment. `bin/` binds it to the process; a test binds it to strings and runs commands in-process.
 */
export interface Sink {
  readonly stdout: TextStream;
  readonly stderr: TextStream;
  readonly env: NodeJS.ProcessEnv;
  /** The working directory, where `./sessions.db` is looked for; '' when it is gone. */
  readonly cwd: string;
  /** Standard input, read whole (`--query-file -`). */
  readStdin(): string;
  /** Called before an index is written in bulk: the process's owner tunes its heap then (WorkHooks.onBulkWrite). */
  readonly bulkWrite?: () => void;
}

/** A command's view of its sink, with the exit status it ends with. */
export class Io {
  /** The exit status: 0 unless a command or an error sets it. */
  status = 0;

  constructor(readonly sink: Sink) {}

  get env(): NodeJS.ProcessEnv {
    return this.sink.env;
  }

  get cwd(): string {
    return this.sink.cwd;
  }

  get stdout(): TextStream {
    return this.sink.stdout;
  }

  get stderr(): TextStream {
    return this.sink.stderr;
  }

  out(text: string): void {
    this.sink.stdout.write(text);
  }

  err(text: string): void {
    this.sink.stderr.write(text);
  }

  /** One line of information on stderr (not a warning): what the command did that the user did not say. */
  note(message: string): void {
    this.err(`convsearch: ${escapeInline(message)}\n`);
  }

  warn(message: string): void {
    // paths and ids inside are the user's or the store's: one line, nothing a terminal would act on
    this.err(`convsearch: warning: ${escapeInline(message)}\n`);
  }

  /** Counted warnings on stderr, one line per run and kind; details go to the JSON output. */
  reportWarnings(warnings: readonly Warning[]): void {
    for (const n of warningNotices(warnings)) this.warn(warningLine(n));
  }
}
