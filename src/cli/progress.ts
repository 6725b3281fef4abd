import type { ProgressFn } from '../lib.js';
import type { TextStream } from './io.js';

/** Progress of a long replay, shown as an ora spinner on stderr. */
export interface Progress {
  readonly onProgress: ProgressFn | undefined;
  stop(): void;
}

const NONE: Progress = { onProgress: undefined, stop() {} };

/** Below this many runs in the store a replay is quick: ora is not even loaded. */
const MIN_RUNS = 50;
/** The spinner appears only once a replay has taken this long, so quick ones never flicker. */
const DELAY_MS = 250;
const FRAME_MS = 80;

/**
 * Only on a terminal (stderr), never with `-q` or `TERM=dumb`, and only when the terminal reports its
 * width: ora divides by it (a pty of 0 columns, as `script` without a terminal gives, would spin forever).
 */
export function progressWanted(quiet: boolean, runs: () => number, stream: TextStream, env: NodeJS.ProcessEnv): boolean {
  // the stores' runs counted last: only for a terminal (a count reads every store's runs table)
  return (
    !quiet && Boolean(stream.isTTY) && stream.stream !== undefined && (stream.columns ?? 0) > 0 && env.TERM !== 'dumb' && runs() >= MIN_RUNS
  );
}

/**
 * A spinner (`replaying run 120/2000`) on `stream` (none: no spinner) for synchronous work: it is drawn from the progress callback,
 * not a timer. It never hides the cursor or grabs stdin, and installs no signal handler, so Ctrl+C
 * ends the process at once even in the middle of a replay.
 */
export async function startProgress(stream: NodeJS.WriteStream | undefined, color: boolean, verb = 'replaying run'): Promise<Progress> {
  if (stream === undefined) return NONE;
  const { default: ora } = await import('ora');
  const spinner = ora({ stream, discardStdin: false, hideCursor: false, isEnabled: true, color: color ? 'cyan' : false });
  const began = Date.now();
  let last = 0;
  return {
    onProgress(done, total) {
      const now = Date.now();
      if (now - began < DELAY_MS || now - last < FRAME_MS) return;
      last = now;
      spinner.text = `${verb} ${done}/${total}`;
      if (spinner.isSpinning) spinner.render();
      else spinner.start();
    },
    stop() {
      if (spinner.isSpinning) spinner.stop();
    },
  };
}
