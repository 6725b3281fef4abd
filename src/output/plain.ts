import { formatScore1f } from '../py/repr.js';
import type { SearchOutcome } from '../search/search.js';
import { escapeInline } from './escape.js';

/**
 * `--plain`: one line per hit, `run_id:message_index:score:text`, for grep, awk, cut and fzf (over several
 * stores, run_id is `<store>:<run-id>`). The text is
 * the hit's display line (clipped and windowed as in every format) with newlines, tabs and controls
 * escaped, so a hit is always exactly one line. The score has one decimal, as everywhere it is shown.
 */
export function plainLines(outcome: SearchOutcome): string[] {
  if (outcome.kind !== 'found') return [];
  return outcome.hits.map((h) => {
    const line = h.excerpt.find((l) => l.hit);
    const text = line && line.text !== '' ? line.text : '[no text content]';
    // several stores: the run as `<store>:<run-id>`, which --run and show accept back
    const run = h.run.store === undefined ? h.run.runId : `${h.run.store}:${h.run.storeRunId ?? h.run.runId}`;
    return `${escapeInline(run)}:${h.position}:${formatScore1f(h.score)}:${escapeInline(text)}`;
  });
}

/**
 * `--count`: every matching message in scope, like `grep -c` (not only those `-m` and `-C` would show);
 * `--count-by run`: `run_id:count` per run with matches, in corpus order.
 */
export function countLines(outcome: SearchOutcome, by: 'run' | null): string[] {
  if (by === null) return [String(outcome.matches.total)];
  return outcome.matches.byRun.map((m) => `${escapeInline(m.run.runId)}:${m.count}`);
}
