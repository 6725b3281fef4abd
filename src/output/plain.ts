import { formatScore1f } from '../py/repr.js';
import type { SearchOutcome } from '../search/search.js';
import { escapeInline } from './escape.js';

/**
 * `--plain`: one line per hit, `run_id:message_index:score:text`, for grep, awk, cut and fzf. The text is
 * the hit's display line (clipped and windowed as in every format) with newlines, tabs and controls
 * escaped, so a hit is always exactly one line. The score has one decimal, as everywhere it is shown.
 */
export function plainLines(outcome: SearchOutcome): string[] {
  if (outcome.kind !== 'found') return [];
  return outcome.hits.map((h) => {
    const line = h.excerpt.find((l) => l.hit);
    const text = line && line.text !== '' ? line.text : '[no text content]';
    return `${escapeInline(h.run.runId)}:${h.messageIndex}:${formatScore1f(h.score)}:${escapeInline(text)}`;
  });
}

/** `--count`: the number of hits; `--count-by run`: `run_id:count` per run with hits, in corpus order. */
export function countLines(outcome: SearchOutcome, by: 'run' | null): string[] {
  const hits = outcome.kind === 'found' ? outcome.hits : [];
  if (by === null) return [String(hits.length)];
  const perRun = new Map<string, number>();
  for (const h of hits) perRun.set(h.run.runId, (perRun.get(h.run.runId) ?? 0) + 1);
  return outcome.runs.filter((r) => perRun.has(r.runId)).map((r) => `${escapeInline(r.runId)}:${perRun.get(r.runId)}`);
}
