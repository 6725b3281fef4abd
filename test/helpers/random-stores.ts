import { simulateRun, textPart, toolCallPart, type JsonObject, type SimStep } from '../../scripts/lib/messages.js';
import type { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { rng, Vocabulary } from '../../scripts/bench/synthetic-store.js';
import { DEFAULT_SEARCH, type SearchOptions } from '../../src/search/search.js';

/** Random stores and searches for property tests: the same search by two paths must agree exactly. */
export const vocab = new Vocabulary(300, rng(3));

/** Writes one scripted run (with random content) through the Python-faithful simulator. */
export function writeRun(w: StepStoreWriter, random: () => number, id: string, conv: string | null, start: Date, history?: JsonObject[]): JsonObject[] {
  const steps: SimStep[] = [];
  const n = 1 + Math.floor(random() * 4);
  for (let s = 0; s < n; s++) {
    steps.push({
      parts: [textPart(vocab.text(random, 3 + Math.floor(random() * 8))), toolCallPart('lookup', { q: vocab.text(random, 2) }, `${id}-c${s}`)],
      results: [{ content: vocab.text(random, 5 + Math.floor(random() * 20)) }],
    });
  }
  steps.push({ parts: [textPart(vocab.text(random, 6))] });
  if (random() < 0.15) steps[0]!.results = [{ error: 'boom' }];
  const sim = simulateRun({ runId: id, conversationId: conv, startedAt: start, history, prompt: vocab.text(random, 5), steps });
  w.writeSimulatedRun(sim);
  return sim.failed ? sim.lastCompleteMessages : sim.messages;
}

export function randomOptions(random: () => number, runs: Array<{ id: string; conv: string | null }>): SearchOptions {
  const words = Array.from({ length: 1 + Math.floor(random() * 3) }, () => vocab.words[Math.floor(Math.pow(random(), 2) * vocab.words.length)]!);
  if (random() < 0.1) words.push('user');
  const pick = runs[Math.floor(random() * runs.length)] ?? { id: 'nope', conv: 'nope' };
  const kind = Math.floor(random() * 4);
  return {
    query: words.join(' '),
    scope: kind === 1 ? 'conversation' : 'all',
    conversationId: kind === 1 ? pick.conv ?? 'none' : null,
    runId: kind === 2 ? pick.id : kind === 3 && random() < 0.5 ? 'missing-run' : null,
    maxMatches: Math.floor(random() * 6),
    contextLines: Math.floor(random() * 4),
    bm25: random() < 0.5 ? DEFAULT_SEARCH.bm25 : { k1: random() * 3, b: random() },
  };
}

