/**
 * The store the terminal-UX tests search: two conversations, delegated runs, an agent per run, tool
 * calls (including `delete_user`), a retry, an interrupted snapshot, a long message whose term lies past
 * the display cutoff, and untrusted text full of terminal escape sequences.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  request,
  response,
  retryPromptPart,
  systemPart,
  textPart,
  toolCallPart,
  toolReturnPart,
  userPromptPart,
  utc,
  type JsonObject,
} from '../../scripts/lib/messages.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';

const dirs: string[] = [];
process.on('exit', () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'convsearch-ux-'));
  dirs.push(d);
  return d;
}

/** Terminal attacks stored in messages: a window-title OSC and a clear-screen CSI. */
export const OSC_TITLE = '\x1b]0;pwned\x07';
export const CSI_CLEAR = '\x1b[2J';
export const EVIL_AGENT = `agent${OSC_TITLE}`;
export const EVIL_RUN = `run-evil${CSI_CLEAR}`;

const CLOCK0 = utc('2025-03-01T09:00:00Z');
let clock = CLOCK0;
const tick = (): number => (clock += 1_000_000);

const user = (text: string): JsonObject => request([userPromptPart(text, { timestamp: tick() })], { timestamp: clock });
const assistant = (...parts: JsonObject[]): JsonObject => response(parts, { timestamp: tick() });
const toolReturn = (name: string, content: unknown, id: string): JsonObject =>
  request([toolReturnPart(name, content, id, { timestamp: tick() })], { timestamp: clock });

/** 560 filler characters, then the word the window must find. */
export const LONG_TEXT = `${'lorem ipsum '.repeat(46)}dolor sit amet, the zeppelin marker sits past the cutoff.`;

export function buildUxStore(path = join(tempDir(), 'ux.db')): string {
  clock = CLOCK0; // same store, same bytes, every time
  const w = new StepStoreWriter(path);
  const save = (runId: string, step: number, messages: JsonObject[], state: 'complete' | 'interrupted' = 'complete'): void => {
    w.saveSnapshot({ runId, stepIndex: step, state, timestamp: tick(), messages });
  };

  w.registerRun({ runId: 'run-a1', conversationId: 'conv-x', agentName: 'support', startedAt: '2025-03-01T09:00:00Z' });
  const a1 = [
    user('Please refund order 42 according to the refund policy.'),
    assistant(textPart('Let me read the refund policy first.'), toolCallPart('lookup_policy', { topic: 'refund' }, 'c1')),
    toolReturn('lookup_policy', 'Refunds are allowed within 30 days of purchase.', 'c1'),
    assistant(toolCallPart('delete_user', { user_id: 7, reason: 'refund abuse' }, 'c2')),
    toolReturn('delete_user', 'user 7 deleted', 'c2'),
    assistant(textPart('Done: order 42 is refunded; the refund policy allows 30 days.')),
  ];
  save('run-a1', 1, a1.slice(0, 3));
  save('run-a1', 2, a1);

  w.registerRun({
    runId: 'run-a2',
    conversationId: 'conv-x',
    parentRunId: 'run-a1',
    agentName: 'billing',
    startedAt: '2025-03-01T09:05:00Z',
  });
  save('run-a2', 1, [
    request(
      [
        systemPart('You are the billing agent.', { timestamp: tick() }),
        userPromptPart('Charge the card for order 43.', { timestamp: clock }),
      ],
      { timestamp: clock },
    ),
    assistant(toolCallPart('charge_card', { order: 43 }, 'c3')),
    request([retryPromptPart('card declined, try a different card', { toolName: 'charge_card', toolCallId: 'c3', timestamp: tick() })], {
      timestamp: clock,
    }),
    assistant(textPart(LONG_TEXT)),
  ]);

  w.registerRun({ runId: 'run-b1', conversationId: 'conv-y', agentName: 'support', startedAt: '2025-03-02T10:00:00Z' });
  const b1 = [user('What is the weather in Reykjavik?'), assistant(textPart('Cloudy, 14 degrees.'))];
  save('run-b1', 1, b1);
  save('run-b1', 2, [...b1, user('And tomorrow? Draft the xylophone plan.')], 'interrupted');

  w.registerRun({
    runId: 'run-c1',
    conversationId: 'conv-y',
    parentRunId: 'run-a2',
    agentName: 'billing',
    startedAt: '2025-03-03T08:00:00Z',
  });
  save('run-c1', 1, [user('Summarize the refund for the ledger.'), assistant(textPart('Refund of order 42 recorded.'))]);

  w.registerRun({ runId: EVIL_RUN, conversationId: `conv-z${OSC_TITLE}`, agentName: EVIL_AGENT, startedAt: '2025-03-04T08:00:00Z' });
  save(EVIL_RUN, 1, [
    user(`escape ${OSC_TITLE} then ${CSI_CLEAR} then a carriage\rreturn and back\bspace`),
    assistant(textPart(`escape answer ${CSI_CLEAR}`), toolCallPart(`tool${CSI_CLEAR}`, { cmd: OSC_TITLE }, 'c9')),
  ]);
  w.close();
  return path;
}

/** A store with `runs` runs of one message each, all matching `word` (spinner and pipe tests). */
export function buildWideStore(runs: number, messagesPerRun: number, word = 'needle', path = join(tempDir(), 'wide.db')): string {
  const w = new StepStoreWriter(path);
  for (let r = 0; r < runs; r++) {
    const runId = `run-${String(r).padStart(4, '0')}`;
    w.registerRun({ runId, conversationId: 'conv-wide', startedAt: utc('2025-01-01T00:00:00Z') + r * 1_000_000 });
    const messages: JsonObject[] = [];
    for (let i = 0; i < messagesPerRun; i++)
      messages.push(i % 2 ? assistant(textPart(`${word} answer ${i} of run ${r}`)) : user(`${word} question ${i} of run ${r}`));
    w.saveSnapshot({ runId, stepIndex: 1, timestamp: tick(), messages });
  }
  w.close();
  return path;
}
