import type { ProgressFn } from '../history/source.js';

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

export function progressWanted(quiet: boolean, runs: number, stream: NodeJS.WriteStream = process.stderr): boolean {
  return !quiet && runs >= MIN_RUNS && Boolean(stream.isTTY) && process.env.TERM !== 'dumb';
}

/**
 * A spinner (`replaying run 120/2000`) for synchronous work: it is drawn from the progress callback,
 * not a timer. It never hides the cursor or grabs stdin, and installs no signal handler, so Ctrl+C
 * ends the process at once even in the middle of a replay.
 */
export async function startProgress(wanted: boolean, verb = 'replaying run'): Promise<Progress> {
  if (!wanted) return NONE;
  const { default: ora } = await import('ora');
  const spinner = ora({ stream: process.stderr, discardStdin: false, hideCursor: false, isEnabled: true });
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
