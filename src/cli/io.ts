import type { Warning } from '../history/source.js';
import { escapeInline } from '../output/escape.js';

let pipeClosed = false;

// A reader that goes away (`| head -1`) is not an error: stop writing, keep the exit status.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') pipeClosed = true;
  else throw e;
});

export function writeOut(text: string): void {
  if (!pipeClosed) process.stdout.write(text);
}

export function warn(message: string): void {
  process.stderr.write(`convsearch: warning: ${message}\n`);
}

/** Counted warnings on stderr, one line per run and kind; details go to the JSON output. */
export function reportWarnings(warnings: readonly Warning[]): void {
  const skipped = new Map<string, number>();
  const unknown = new Map<string, Map<string, number>>();
  for (const w of warnings) {
    if (w.kind === 'unreadable-snapshot') skipped.set(w.runId, (skipped.get(w.runId) ?? 0) + 1);
    else {
      const m = unknown.get(w.runId) ?? new Map<string, number>();
      m.set(w.partKind, (m.get(w.partKind) ?? 0) + w.count);
      unknown.set(w.runId, m);
    }
  }
  for (const [run, n] of skipped) {
    warn(`skipped ${n} unreadable snapshot${n === 1 ? '' : 's'} in run ${escapeInline(run)} (use --json for details)`);
  }
  for (const [run, kinds] of unknown) {
    for (const [kind, n] of kinds) {
      warn(`${n} part${n === 1 ? '' : 's'} of unknown kind ${escapeInline(JSON.stringify(kind))} in run ${escapeInline(run)} render nothing (kept in the record)`);
    }
  }
}
