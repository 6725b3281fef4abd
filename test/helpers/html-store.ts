/**
 * A store whose text attacks an HTML page: markup that would fetch from `beacon` (a local server the
 * test watches) and scripts that would retitle the page, in messages, run ids, agent names, tool names
 * and conversation ids; spread over several days and runs so that the timeline has something to draw.
 */
import { join } from 'node:path';
import {
  request,
  response,
  textPart,
  toolCallPart,
  toolReturnPart,
  userPromptPart,
  utc,
  type JsonObject,
} from '../../scripts/lib/messages.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { tempDir } from './ux-store.js';

/** Every attack the page must show as text; `beacon` is the base URL of a server that records requests. */
export function htmlAttacks(beacon: string): string[] {
  return [
    `<img src="${beacon}/img" onerror="document.title='pwned-img'">`,
    `<script>document.title='pwned-script';fetch('${beacon}/fetch')</script>`,
    `"><svg onload="document.title='pwned-svg'"><image href="${beacon}/svg"/></svg>`,
    `<link rel="stylesheet" href="${beacon}/css"><style>@import url(${beacon}/import);</style>`,
    `<iframe src="${beacon}/frame"></iframe><meta http-equiv="refresh" content="0;url=${beacon}/refresh">`,
    `</pre></article><a href="javascript:document.title='pwned-link'">x</a><!--`,
  ];
}

export function buildHtmlHostileStore(beacon: string, path = join(tempDir(), 'html.db')): string {
  const attacks = htmlAttacks(beacon);
  const w = new StepStoreWriter(path);
  let clock = utc('2025-05-01T09:00:00Z');
  const day = (n: number): number => utc('2025-05-01T09:00:00Z') + n * 86_400_000_000;
  const save = (runId: string, conversationId: string, agentName: string, startDay: number, messages: () => JsonObject[]): void => {
    clock = day(startDay);
    w.registerRun({ runId, conversationId, agentName, startedAt: new Date(day(startDay) / 1000).toISOString() });
    const made = messages(); // after the clock is set: the messages are dated on the run's day
    w.saveSnapshot({ runId, stepIndex: 1, state: 'complete', timestamp: clock, messages: made });
  };
  const user = (text: string): JsonObject => request([userPromptPart(text, { timestamp: (clock += 1_000_000) })], { timestamp: clock });
  const said = (text: string): JsonObject => response([textPart(text)], { timestamp: (clock += 1_000_000) });

  save('run-plain-1', 'conv-orders', 'support', 0, () => [
    user('Please refund order 42; the refund policy allows 30 days.'),
    said('The refund for order 42 is approved under the refund policy.'),
  ]);
  save(`run-<b>bold</b>-${attacks[1]!}`, `conv-${attacks[0]!}`, `agent-${attacks[2]!}`, 2, () => [
    user(`refund request: ${attacks.join(' ')}`),
    response([textPart(`refund denied ${attacks[5]!}`), toolCallPart(`tool_${attacks[3]!}`, { note: attacks[4]! }, 'c1')], {
      timestamp: (clock += 1_000_000),
    }),
    request([toolReturnPart(`tool_${attacks[3]!}`, `refund ${attacks[0]!}`, 'c1', { timestamp: (clock += 1_000_000) })], {
      timestamp: clock,
    }),
  ]);
  save('run-plain-2', 'conv-orders', 'billing', 3, () => [
    user('Refund the shipping too.'),
    said('Shipping refund issued, refund logged.'),
  ]);
  save('run-plain-3', 'conv-weather', 'support', 5, () => [user('What is the weather?'), said('Sunny.')]);
  w.close();
  return path;
}
