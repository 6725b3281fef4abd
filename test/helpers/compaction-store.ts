/**
 * A store whose compactions leave repeats, as the harness's summarizing compaction does: after each
 * compaction the snapshot starts with a summary (dropped by replay), a receipt, the re-injected pin and
 * a kept copy of the last user message, so it no longer overlaps the record and its kept tail is
 * indexed again. Run `lx-1` holds the pin at [0], [9] and [20]; `lx-2` and `ly-1` hold it once more.
 */
import { join } from 'node:path';
import {
  keptUserCopy,
  pinRequest,
  receiptRequest,
  receiptText,
  request,
  response,
  summaryRequest,
  textPart,
  toolCallPart,
  toolReturnPart,
  userPromptPart,
  utc,
  type JsonObject,
} from '../../scripts/lib/messages.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { tempDir } from './stores.js';

export const PIN_TEXT = 'Pinned: always cite the eviction runbook before changing cache settings.';

/** Positions in lx-1's full record of each repeated text (the first is where it was first indexed). */
export const LX1_REPEATS = {
  pin: [0, 9, 20],
  checkNode3: [5, 10],
  catEviction: [6, 11],
  evictionConf: [7, 12],
  switchBack: [16, 21],
  setPolicy: [17, 22],
  policySet: [18, 23],
} as const;

export function buildCompactionStore(path = join(tempDir(), 'compaction.db')): string {
  let clock = utc('2026-02-03T08:00:00Z');
  const tick = (): number => (clock += 2_000_000);
  const user = (text: string): JsonObject => request([userPromptPart(text, { timestamp: tick() })], { timestamp: clock });
  const call = (id: string, name: string, args: JsonObject): JsonObject => response([toolCallPart(name, args, id)], { timestamp: tick() });
  const ret = (id: string, name: string, content: string): JsonObject =>
    request([toolReturnPart(name, content, id, { timestamp: tick() })], { timestamp: clock });
  const say = (text: string): JsonObject => response([textPart(text)], { timestamp: tick() });

  const w = new StepStoreWriter(path);
  const save = (runId: string, step: number, messages: JsonObject[]): void => {
    w.saveSnapshot({ runId, stepIndex: step, state: 'complete', timestamp: tick(), messages });
  };

  w.registerRun({ runId: 'lx-1', conversationId: 'conv-lx', agentName: 'researcher', startedAt: clock });
  const pin = pinRequest(PIN_TEXT, { partTimestamp: tick(), timestamp: clock });
  const u1 = user('Why are cache hits dropping on the search cluster?');
  const a1 = call('c1', 'read_metrics', { metric: 'cache_hit_ratio' });
  const r1 = ret('c1', 'read_metrics', 'cache_hit_ratio fell from 0.93 to 0.41 after the eviction policy change');
  save('lx-1', 1, [pin, u1, a1, r1]);
  const a2 = say('The eviction policy change (LRU to LFU) halved the cache hit ratio.');
  const u2 = user('Check the eviction settings on node 3.');
  const a3 = call('c3', 'run_shell', { cmd: 'cat /etc/cache/eviction.conf' });
  const r3 = ret('c3', 'run_shell', 'policy = lfu\nmax_entries = 20000\nttl = 300');
  save('lx-1', 2, [pin, u1, a1, r1, a2, u2, a3, r3]);

  // compaction 1: summary, receipt, the pin re-injected, the last user turn kept, the tail [a3, r3]
  const s1 = summaryRequest('The cache hit ratio fell after an eviction policy change.', { partTimestamp: tick() });
  const rc1 = receiptRequest(receiptText({ droppedMessages: 6, droppedTokens: 240, by: 'summarizing_compaction', handle: 'lx-1' }), {
    partTimestamp: clock,
  });
  const k1 = keptUserCopy(u2);
  const a4 = call('c4', 'run_shell', { cmd: 'grep evict /var/log/cache.log | tail -3' });
  const r4 = ret('c4', 'run_shell', 'evicted 18200 entries in 60s (policy lfu)');
  const head1 = [s1, rc1, pin, k1, a3, r3];
  save('lx-1', 3, [...head1, a4, r4]);
  const a5 = say('Node 3 evicts 18200 entries a minute under LFU; switching back to LRU should restore the hits.');
  const u5 = user('Switch node 3 back to LRU and confirm the hit ratio.');
  const a6 = call('c6', 'run_shell', { cmd: 'cachectl set-policy lru --node 3' });
  const r6 = ret('c6', 'run_shell', 'policy set to lru on node 3');
  save('lx-1', 4, [...head1, a4, r4, a5, u5, a6, r6]);

  // compaction 2: the same shapes again
  const s2 = summaryRequest('Node 3 evicted too much under LFU; the user asked to switch back to LRU.', { partTimestamp: tick() });
  const rc2 = receiptRequest(receiptText({ droppedMessages: 9, droppedTokens: 410, by: 'summarizing_compaction', handle: 'lx-1' }), {
    partTimestamp: clock,
  });
  const a7 = say('Node 3 runs LRU again and the cache hit ratio is back to 0.92 (runbook step 4 followed).');
  save('lx-1', 5, [s2, rc2, pin, keptUserCopy(u5), a6, r6, a7]);

  // another run of the conversation, pinned with the same words (a different part: another time)
  w.registerRun({ runId: 'lx-2', conversationId: 'conv-lx', agentName: 'researcher', startedAt: tick() });
  save('lx-2', 1, [
    pinRequest(PIN_TEXT, { partTimestamp: tick(), timestamp: clock }),
    user('Is node 3 still on LRU?'),
    call('d1', 'run_shell', { cmd: 'cachectl get-policy --node 3' }),
    ret('d1', 'run_shell', 'node 3: policy = lru, hit ratio 0.92'),
    say('Yes: node 3 runs LRU and its cache hit ratio is 0.92.'),
  ]);

  // another conversation with the pin
  w.registerRun({ runId: 'ly-1', conversationId: 'conv-ly', agentName: 'auditor', parentRunId: 'lx-2', startedAt: tick() });
  save('ly-1', 1, [
    pinRequest(PIN_TEXT, { partTimestamp: tick(), timestamp: clock }),
    user('Audit the cache policy change on node 3.'),
    say('The change followed the runbook.'),
  ]);
  w.close();
  return path;
}

/** One run whose third message carries no timestamp at all (nor its part): it is dated by its snapshot. */
export function buildUndatedStore(path = join(tempDir(), 'undated.db')): string {
  const w = new StepStoreWriter(path);
  w.registerRun({ runId: 'u-1', conversationId: 'conv-u', startedAt: '2026-03-01T09:00:00Z' });
  const first = [
    request([userPromptPart('zebra sighting one', { timestamp: '2026-03-01T09:00:01Z' })], { timestamp: '2026-03-01T09:00:01Z' }),
    response([textPart('noted zebra')], { timestamp: '2026-03-01T09:00:02Z' }),
  ];
  w.saveSnapshot({ runId: 'u-1', stepIndex: 1, timestamp: '2026-03-01T09:00:03Z', messages: first });
  const bare = request([{ content: 'zebra sighting two, undated', part_kind: 'user-prompt' }]);
  const reply = response([textPart('zebra logged')], { timestamp: '2026-03-01T15:00:01Z' });
  w.saveSnapshot({ runId: 'u-1', stepIndex: 2, timestamp: '2026-03-01T15:00:00Z', messages: [...first, bare, reply] });
  w.close();
  return path;
}
