import { simulateRun, textPart, toolCallPart, type JsonObject, type SimStep } from '../../scripts/lib/messages.js';
import { join } from 'node:path';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { rng, Vocabulary } from '../../scripts/bench/synthetic-store.js';
import { DEFAULTS } from '../../src/api/defaults.js';
import type { SearchOptions } from '../../src/search/search.js';
import { addRawSnapshot, tempDir } from './stores.js';

/** Random stores and searches for property tests: the same search by two paths must agree exactly. */
export const vocab = new Vocabulary(300, rng(3));

/** Writes one scripted run (with random content) through the Python-faithful simulator. */
export function writeRun(
  w: StepStoreWriter,
  random: () => number,
  id: string,
  conv: string | null,
  start: Date,
  history?: JsonObject[],
): JsonObject[] {
  const steps: SimStep[] = [];
  const n = 1 + Math.floor(random() * 4);
  for (let s = 0; s < n; s++) {
    steps.push({
      parts: [
        textPart(vocab.text(random, 3 + Math.floor(random() * 8))),
        toolCallPart('lookup', { q: vocab.text(random, 2) }, `${id}-c${s}`),
      ],
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
  const words = Array.from({ length: 1 + Math.floor(random() * 3) }, () => vocab.words[Math.floor(random() ** 2 * vocab.words.length)]!);
  if (random() < 0.1) words.push('user');
  const pick = runs[Math.floor(random() * runs.length)] ?? { id: 'nope', conv: 'nope' };
  const kind = Math.floor(random() * 4);
  return {
    query: words.join(' '),
    scope: kind === 1 ? 'conversation' : 'all',
    conversationId: kind === 1 ? (pick.conv ?? 'none') : null,
    runId: kind === 2 ? pick.id : kind === 3 && random() < 0.5 ? 'missing-run' : null,
    maxMatches: Math.floor(random() * 6),
    contextLines: Math.floor(random() * 4),
    bm25: random() < 0.5 ? DEFAULTS.bm25 : { k1: random() * 3, b: random() },
  };
}

/**
 * A closed store (read without locks, so other threads may read it too) of 16 threaded runs over four
 * conversations, some forked from another conversation's history, with a few unreadable snapshots and
 * unknown part kinds.
 */
export function threadedStore(seed: number, count = 16): { path: string; runs: Array<{ id: string; conv: string | null }> } {
  const random = rng(seed * 104729);
  const path = join(tempDir(), 'sessions.db');
  const w = new StepStoreWriter(path);
  const runs: Array<{ id: string; conv: string | null }> = [];
  const histories = new Map<string, JsonObject[]>();
  let clock = Date.UTC(2026, 0, 1);
  try {
    for (let i = 0; i < count; i++) {
      const conv = random() < 0.15 ? null : `conv-${Math.floor(random() * 4)}`;
      // now and then a history forked from another conversation: attribution is store-wide under --scope all
      const from = random() < 0.25 ? `conv-${Math.floor(random() * 4)}` : conv;
      const inherit = from !== null && histories.has(from) && random() < 0.7 ? histories.get(from) : undefined;
      const id = `run-${seed}-${i}`;
      clock += 60_000 * (1 + Math.floor(random() * 5));
      const h = writeRun(w, random, id, conv, new Date(clock), inherit);
      if (conv !== null) histories.set(conv, h);
      runs.push({ id, conv });
      if (random() < 0.2) addRawSnapshot(w, id, '[{"kind": "request", "parts": [', { stepIndex: 99 });
      if (random() < 0.2) {
        addRawSnapshot(
          w,
          id,
          '[{"kind": "response", "parts": [{"part_kind": "hologram", "content": "x"}, {"part_kind": "text", "content": "zzhologram"}]}]',
          { stepIndex: 98 },
        );
      }
    }
  } finally {
    w.close();
  }
  return { path, runs };
}
