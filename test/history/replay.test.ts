import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { simulateRun, summaryRequest, textPart, toolCallPart } from '../../scripts/lib/messages.js';
import {
  addRun,
  addSnapshot,
  assistantMsg,
  at,
  buildStore,
  recordTexts,
  replayOf,
  toolReply,
  userMsg,
  withSource,
} from '../helpers/stores.js';

const R = userMsg('again please', 1);
const reply = assistantMsg('here it is', 2);
const orig = userMsg('the original ALBATROSS question', 1);
const followUp = userMsg('and a follow-up', 5);
const summary = summaryRequest('they talked about birds', { partTimestamp: at(4) });

describe('per-run replay: longest overlap, later copy kept (§3.2)', () => {
  test('[R] then [R, R, reply] gives [R, R, reply]: identical messages at distinct positions are kept', () => {
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [R]);
      addSnapshot(w, 'r1', [R, R, reply]);
    });
    assert.deepEqual(recordTexts(path, 'r1'), ['User: again please', 'User: again please', 'Assistant: here it is']);
  });

  test('recovery: [orig, reply] then [summary, reply, follow_up] gives [orig, reply, follow_up]', () => {
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [orig, reply]);
      addSnapshot(w, 'r1', [summary, reply, followUp]);
    });
    assert.deepEqual(recordTexts(path, 'r1'), ['User: the original ALBATROSS question', 'Assistant: here it is', 'User: and a follow-up']);
    assert.match(
      toolReply(path, { query: 'albatross', conversationId: 'c1', contextLines: 0 }),
      /\n\[0\] User: the original ALBATROSS question$/,
    );
  });

  test('a pruned pre-compaction snapshot gives partial recovery: [reply, follow_up]', () => {
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [summary, reply, followUp]);
    });
    assert.deepEqual(recordTexts(path, 'r1'), ['Assistant: here it is', 'User: and a follow-up']);
    assert.equal(toolReply(path, { query: 'albatross', conversationId: 'c1' }), "No matches for 'albatross' in 2 persisted messages.");
  });

  test('documented limitation: a repeated exchange right after a prefix drop is absorbed into the overlap', () => {
    const x = userMsg('status?', 10);
    const y = assistantMsg('all green', 11);
    const z = userMsg('thanks', 12);
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [orig, reply, x, y]);
      // compaction dropped everything old; the run then genuinely repeated x, y before z
      addSnapshot(w, 'r1', [summary, x, y, z]);
    });
    assert.deepEqual(recordTexts(path, 'r1'), [
      'User: the original ALBATROSS question',
      'Assistant: here it is',
      'User: status?',
      'Assistant: all green',
      'User: thanks',
    ]);
  });

  test('no overlap appends the whole snapshot', () => {
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [orig, reply]);
      addSnapshot(w, 'r1', [followUp]);
    });
    assert.equal(recordTexts(path, 'r1').length, 3);
  });
});

describe('late stamping (issue #810)', () => {
  test('timestamp/run_id/instructions filled in the next snapshot do not duplicate messages: 6 stay 6', () => {
    const sim = simulateRun({
      runId: 'r1',
      conversationId: 'c1',
      startedAt: at(0),
      instructions: 'be precise',
      prompt: 'audit the vault',
      steps: [
        { parts: [toolCallPart('open', { door: 1 }, 'c-1')], results: [{ content: 'door 1 open' }] },
        { parts: [toolCallPart('open', { door: 2 }, 'c-2')], results: [{ content: 'door 2 open' }] },
        { parts: [textPart('vault audited')] },
      ],
    });
    assert.equal(sim.snapshots.length, 3);
    // the boundary snapshot holds the newest request unstamped; the next one holds it stamped
    const first = sim.snapshots[0]!.messages[2]!;
    const second = sim.snapshots[1]!.messages[2]!;
    assert.equal(first.timestamp, null);
    assert.equal(first.instructions, null);
    assert.notEqual(second.timestamp, null);
    assert.equal(second.instructions, 'be precise');
    assert.equal(second.run_id, 'r1');

    const path = buildStore((w) => w.writeSimulatedRun(sim));
    const record = replayOf(path, 'r1').messages;
    assert.equal(record.length, 6);
    // the later (stamped) copy is the one kept
    assert.notEqual(record[2]!.message.raw.get('timestamp'), null);
    assert.equal(record[2]!.message.raw.get('instructions'), 'be precise');
    assert.equal(record[2]!.firstSeq, 1, 'first persisted by the first snapshot');
    assert.match(toolReply(path, { query: 'door', conversationId: 'c1' }), / in 6 persisted messages:/);
  });
});

describe('snapshot states and old shapes (§1.3, §2.3)', () => {
  test('interrupted snapshots are excluded', () => {
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [orig, reply]);
      addSnapshot(w, 'r1', [orig, reply, userMsg('the CORMORANT incident', 6)], { state: 'interrupted' });
    });
    assert.equal(recordTexts(path, 'r1').length, 2);
    assert.equal(toolReply(path, { query: 'cormorant', conversationId: 'c1' }), "No matches for 'cormorant' in 2 persisted messages.");
    withSource(path, (s) => assert.deepEqual(s.store.countsByRun().get('r1'), { complete: 1, interrupted: 1 }));
  });

  test('a run whose only snapshot is interrupted has no history', () => {
    const sim = simulateRun({
      runId: 'r1',
      conversationId: 'c1',
      startedAt: at(0),
      prompt: 'delete the GANNET table',
      steps: [{ parts: [toolCallPart('drop', { t: 'gannet' }, 'c-1')], results: [{ error: 'permission denied' }] }],
    });
    assert.deepEqual(
      sim.snapshots.map((s) => s.state),
      ['interrupted'],
    );
    const path = buildStore((w) => w.writeSimulatedRun(sim));
    assert.equal(toolReply(path, { query: 'gannet', runId: 'r1', scope: 'all' }), "No persisted history for run 'r1'.");
  });

  for (const opts of [{ shape: 'pre-state' as const }, { shape: 'newest' as const, upgradedFrom: 'pre-state' as const }]) {
    test(`a store without a state column reads as all complete (${JSON.stringify(opts)})`, () => {
      const path = buildStore((w) => {
        addRun(w, 'r1', 'c1');
        addSnapshot(w, 'r1', [orig, reply]);
        addSnapshot(w, 'r1', [orig, reply, followUp]);
      }, opts);
      withSource(path, (s, store) => {
        assert.equal(store.file.schema.hasState, opts.shape !== 'pre-state');
        assert.deepEqual(s.store.countsByRun().get('r1'), { complete: 2, interrupted: 0 });
      });
      assert.match(
        toolReply(path, { query: 'albatross', conversationId: 'c1' }),
        /^Found 1 match\(es\) for 'albatross' in 3 persisted messages:/,
      );
    });
  }
});
