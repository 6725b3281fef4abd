/**
 * A synthetic step store shaped like a busy production one, written the way the Python store writes it
 * (via the project's simulator and writer): ~200 conversations of threaded runs whose growing histories
 * are re-saved at every step, late stamping, tool calls with sizeable outputs, a compaction summary now
 * and then, some interrupted snapshots, and a Zipf-like vocabulary so that terms have realistic spread.
 */
import { statSync } from 'node:fs';
import { textPart, toolCallPart, type JsonObject, type SimResult, type SimStep, simulateRun } from '../lib/messages.js';
import { StepStoreWriter } from '../lib/store-writer.js';
import { mulberry32 } from '../lib/random.js';

export const rng = mulberry32;

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'sa',
  'ti',
  'vo',
  'ze',
  'qua',
  'bri',
  'dor',
  'fen',
  'gal',
  'hux',
  'jin',
  'kor',
  'lum',
  'mar',
  'nox',
  'pel',
  'rin',
  'sol',
  'tor',
  'ul',
  'vex',
  'wen',
  'yar',
];

/** A vocabulary sampled with Zipf weights (rank r has weight 1/r). */
export class Vocabulary {
  readonly words: string[] = [];
  private readonly cumulative: Float64Array;

  constructor(size: number, random: () => number) {
    const seen = new Set<string>();
    while (this.words.length < size) {
      const n = 1 + Math.floor(random() * 4);
      let w = '';
      for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
      if (!seen.has(w)) {
        seen.add(w);
        this.words.push(w);
      }
    }
    this.cumulative = new Float64Array(size);
    let acc = 0;
    for (let r = 0; r < size; r++) this.cumulative[r] = acc += 1 / (r + 1);
  }

  word(random: () => number): string {
    const x = random() * this.cumulative[this.cumulative.length - 1]!;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo]!;
  }

  text(random: () => number, words: number): string {
    const out: string[] = [];
    for (let i = 0; i < words; i++) out.push(this.word(random));
    return out.join(' ');
  }
}

export interface SyntheticOptions {
  /** Approximate store size in bytes (the number of conversations scales with it). */
  readonly targetBytes: number;
  readonly seed?: number;
  /** Called after each conversation is written. */
  readonly onProgress?: (conversations: number, bytesSoFar: number) => void;
  /**
   * Many small runs instead of a few big ones: this many runs in all (10 per conversation), each of
   * 1 to 3 steps; `targetBytes` is then ignored. What listings and the index build meet in a store
   * that an agent fleet fills with short tasks.
   */
  readonly smallRuns?: number;
}

export interface SyntheticStore {
  readonly path: string;
  readonly runs: number;
  readonly conversations: number;
  readonly snapshots: number;
}

// One conversation ≈ 10 runs × ≈ 13 snapshots ≈ 3.5 MB: about 214 conversations make 750 MB.
const BYTES_PER_CONVERSATION = 3.5e6;
const RUNS_PER_CONVERSATION = 10;
const TOOLS = ['read_file', 'run_shell', 'search_docs', 'query_db', 'http_get', 'write_file'];

function step(v: Vocabulary, random: () => number, callId: string): SimStep {
  const tool = TOOLS[Math.floor(random() * TOOLS.length)]!;
  const args: JsonObject = { target: v.text(random, 3), limit: 1 + Math.floor(random() * 50) };
  return {
    parts: [textPart(v.text(random, 12 + Math.floor(random() * 30))), toolCallPart(tool, args, callId)],
    results: [
      {
        content:
          random() < 0.25
            ? { status: 'ok', rows: Math.floor(random() * 1000), note: v.text(random, 20) }
            : v.text(random, 20 + Math.floor(random() * 45)),
      },
    ],
  };
}

/** Writes the store to `path` (which must not exist) and returns what it holds. */
export function writeSyntheticStore(path: string, opts: SyntheticOptions): SyntheticStore {
  const random = rng(opts.seed ?? 42);
  const vocab = new Vocabulary(60_000, random);
  const small = opts.smallRuns !== undefined;
  const conversations = small
    ? Math.max(1, Math.ceil(opts.smallRuns! / RUNS_PER_CONVERSATION))
    : Math.max(1, Math.round(opts.targetBytes / BYTES_PER_CONVERSATION));
  const writer = new StepStoreWriter(path, { overwrite: false });
  writer.db.pragma('synchronous = OFF'); // generation speed only; the layout is the Python store's
  let runs = 0;
  let snapshots = 0;
  const t0 = Date.UTC(2026, 0, 5, 8, 0, 0);
  for (let c = 0; c < conversations; c++) {
    const conversationId = `conv-${String(c).padStart(4, '0')}`;
    let history: JsonObject[] = [];
    const sims: SimResult[] = [];
    for (let r = 0; r < RUNS_PER_CONVERSATION; r++) {
      const threaded = r > 0 && random() < 0.3;
      const steps: SimStep[] = [];
      const nSteps = small ? 1 + Math.floor(random() * 3) : 8 + Math.floor(random() * 10);
      for (let s = 0; s < nSteps; s++) steps.push(step(vocab, random, `call-${c}-${r}-${s}`));
      steps.push({ parts: [textPart(vocab.text(random, 40 + Math.floor(random() * 60)))] });
      if (random() < 0.05) steps[nSteps - 1]!.results = [{ error: 'worker lost' }];
      if (!small && random() < 0.08 && nSteps > 6) {
        steps[nSteps - 2]!.compaction = { summary: vocab.text(random, 60), keepLast: 4, shape: 'marked-user' };
      }
      const sim = simulateRun({
        runId: `run-${c}-${r}`,
        conversationId,
        startedAt: new Date(t0 + (c * RUNS_PER_CONVERSATION + r) * 600_000),
        instructions: 'You are a careful operations agent.',
        systemPrompt: r === 0 || !threaded ? 'You are a careful operations agent.' : undefined,
        history: threaded ? history : undefined,
        prompt: vocab.text(random, 15 + Math.floor(random() * 30)),
        steps,
      });
      history = sim.failed ? sim.lastCompleteMessages : sim.messages;
      sims.push(sim);
      runs++;
      snapshots += sim.snapshots.length;
    }
    writer.writeSimulatedRuns(sims);
    if (opts.onProgress && (c % 5 === 4 || c === conversations - 1)) opts.onProgress(c + 1, statSync(path).size);
  }
  writer.close();
  return { path, runs, conversations, snapshots };
}
