import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { simulateRun, textPart } from '../../scripts/lib/messages.js';
import { addRun, addSnapshot, assistantMsg, at, buildStore, searchStore, toolReply, userMsg } from '../helpers/stores.js';

describe('cross-run attribution (§3.4, §9.19)', () => {
  const u1 = userMsg('first question about the IBIS', 1);
  const a1 = assistantMsg('the IBIS answer', 2);
  const u2 = userMsg('second question', 3);
  const path = buildStore((w) => {
    addRun(w, 'ra', 'c1', 0);
    addRun(w, 'rb', 'c1', 10);
    addSnapshot(w, 'ra', [u1, a1]);
    // rb inherited [u1, a1]; later it repeats a1 verbatim: only the leading prefix is skipped
    addSnapshot(w, 'rb', [u1, a1, u2, a1]);
  });

  test('only the leading inherited prefix is skipped; a later identical message stays in the later run', () => {
    const { outcome } = searchStore(path, { query: 'ibis', conversationId: 'c1', contextLines: 0 });
    assert.ok(outcome.kind === 'found');
    assert.equal(outcome.searched, 4, 'ra: 2 messages, rb: its own 2');
    assert.deepEqual(
      outcome.hits.map((h) => [h.run.runId, h.position]),
      [
        ['ra', 1],
        ['rb', 3],
        ['ra', 0],
      ],
    );
  });

  test('display numbers are positions in the full record; windows stay inside the section', () => {
    const text = toolReply(path, { query: 'second', conversationId: 'c1', contextLines: 5 });
    assert.equal(
      text,
      "Found 1 match(es) for 'second' in 4 persisted messages:\n\n[score: 1.4 | run: rb | conversation: c1]\n" +
        '[2] User: second question\n[3] Assistant: the IBIS answer',
    );
  });

  test('--run shows the run full record and counts it in N', () => {
    const text = toolReply(path, { query: 'second', scope: 'all', runId: 'rb', contextLines: 5 });
    assert.match(
      text,
      /^Found 1 match\(es\) for 'second' in 4 persisted messages:\n\n\[score: [\d.]+ \| run: rb \| conversation: c1\]\n\[0\] User: first question about the IBIS\n\[1\]/,
    );
  });

  test('a run whose whole record is inherited has no section', () => {
    const p = buildStore((w) => {
      addRun(w, 'ra', 'c1', 0);
      addRun(w, 'rb', 'c1', 10);
      addSnapshot(w, 'ra', [u1, a1]);
      addSnapshot(w, 'rb', [u1, a1]);
    });
    const { outcome } = searchStore(p, { query: 'ibis', conversationId: 'c1' });
    assert.ok(outcome.kind === 'found');
    assert.equal(outcome.searched, 2);
    assert.ok(outcome.hits.every((h) => h.run.runId === 'ra'));
    assert.equal(
      toolReply(p, { query: 'ibis', conversationId: 'c1', runId: 'rb', contextLines: 0 }).split('\n')[0],
      "Found 2 match(es) for 'ibis' in 2 persisted messages:",
    );
  });

  test('attribution follows the scope: under another conversation the first in-scope run owns the history', () => {
    const p = buildStore((w) => {
      addRun(w, 'ra', 'c1', 0);
      addRun(w, 'rb', 'c2', 10); // forked from c1's history into another conversation
      addSnapshot(w, 'ra', [u1, a1]);
      addSnapshot(w, 'rb', [u1, a1, u2]);
    });
    assert.match(
      toolReply(p, { query: 'ibis', conversationId: 'c2', contextLines: 0 }),
      /^Found 2 match\(es\) for 'ibis' in 3 persisted messages:\n\n\[score: [\d.]+ \| run: rb \| conversation: c2\]/,
    );
    assert.match(
      toolReply(p, { query: 'ibis', scope: 'all', contextLines: 0 }),
      /^Found 2 match\(es\) for 'ibis' in 3 persisted messages:/,
    );
  });

  test('the section label uses runs.conversation_id, not the conversation stamped on messages', () => {
    const sim = simulateRun({
      runId: 'r1',
      conversationId: 'from-runs',
      messageConversationId: 'from-messages',
      startedAt: at(0),
      prompt: 'the EGRET question',
      steps: [{ parts: [textPart('ok')] }],
    });
    const p = buildStore((w) => w.writeSimulatedRun(sim));
    assert.match(toolReply(p, { query: 'egret', conversationId: 'from-runs' }), /\[score: [\d.]+ \| run: r1 \| conversation: from-runs\]/);
    assert.equal(
      toolReply(p, { query: 'egret', conversationId: 'from-messages' }),
      "No persisted history in this conversation yet. Search covers only runs sharing this run's conversation id, which comes from an explicit `conversation_id=` argument or is inherited from `message_history`; runs started with neither belong to other conversations.",
    );
  });
});
