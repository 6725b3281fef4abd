import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  request,
  response,
  retryPromptPart,
  textPart,
  thinkingPart,
  toolCallPart,
  toolReturnPart,
  userPromptPart,
} from '../../scripts/lib/messages.js';
import { toolText } from '../../src/output/tool-text.js';
import type { SearchOutcome } from '../../src/search/search.js';
import { addRun, addSnapshot, assistantMsg, at, buildStore, searchStore, toolReply, userMsg } from '../helpers/stores.js';

const NO_CONVERSATION_ID =
  "Conversation-scoped search needs a conversation id, and this run has none. Pass `conversation_id=` to `Agent.run(...)` so the search can tell this conversation's history from other conversations in the same store.";
const NO_HISTORY_CONVERSATION =
  "No persisted history in this conversation yet. Search covers only runs sharing this run's conversation id, which comes from an explicit `conversation_id=` argument or is inherited from `message_history`; runs started with neither belong to other conversations.";
const NO_HISTORY_ALL =
  'No persisted conversation history to search yet. History accumulates as runs persist their steps (pair this capability with `StepPersistence` on a shared store).';

// The §5.3 worked example.
const example = buildStore((w) => {
  addRun(w, 'r1', 'c1');
  addSnapshot(w, 'r1', [userMsg('the ZEBRA passphrase is 42', 1), assistantMsg('noted', 2), userMsg('what was it again?', 3)]);
});

// Ten messages; 'zebra' ranks [2] (1.8) > [3] (1.6) > [6] (1.3), verified with a Python replica of §5.2.
const TEN = [
  'filler zero',
  'filler one',
  'zebra zebra zebra',
  'zebra zebra',
  'filler four',
  'filler five',
  'zebra',
  'filler seven',
  'filler eight',
  'filler nine',
];
const tenLine = (i: number) => `[${i}] ${i % 2 ? 'Assistant' : 'User'}: ${TEN[i]}`;
const ten = buildStore((w) => {
  addRun(w, 'r1', 'c1');
  addSnapshot(
    w,
    'r1',
    TEN.map((t, i) => (i % 2 ? assistantMsg(t, i) : userMsg(t, i))),
  );
});

describe('reply texts and scope (§6.1)', () => {
  test('the worked example, byte for byte', () => {
    assert.equal(
      toolReply(example, { query: 'zebra passphrase', conversationId: 'c1' }),
      "Found 1 match(es) for 'zebra passphrase' in 3 persisted messages:\n\n[score: 1.7 | run: r1 | conversation: c1]\n" +
        '[0] User: the ZEBRA passphrase is 42\n[1] Assistant: noted\n[2] User: what was it again?',
    );
  });

  test('query terms are deduplicated: "zebra zebra" scores like "zebra"', () => {
    const once = searchStore(example, { query: 'zebra', conversationId: 'c1' }).outcome;
    const twice = searchStore(example, { query: 'zebra ZEBRA zebra', conversationId: 'c1' }).outcome;
    assert.ok(once.kind === 'found' && twice.kind === 'found');
    assert.equal(once.hits[0]!.score, twice.hits[0]!.score);
  });

  test('conversation scope without an id fails closed, even with a run id', () => {
    assert.equal(toolReply(example, { query: 'zebra', scope: 'conversation', conversationId: null }), NO_CONVERSATION_ID);
    assert.equal(toolReply(example, { query: 'zebra', scope: 'conversation', conversationId: null, runId: 'r1' }), NO_CONVERSATION_ID);
  });

  test('unknown, out-of-scope and snapshot-less run ids give the same reply, the id raw', () => {
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addRun(w, 'r2', 'c2', 1);
      addRun(w, "it's", 'c1', 2); // registered, no snapshots
      addSnapshot(w, 'r1', [userMsg('zebra', 1)]);
      addSnapshot(w, 'r2', [userMsg('zebra', 1)]);
    });
    assert.equal(toolReply(path, { query: 'zebra', conversationId: 'c1', runId: 'nope' }), "No persisted history for run 'nope'.");
    assert.equal(toolReply(path, { query: 'zebra', conversationId: 'c1', runId: 'r2' }), "No persisted history for run 'r2'.");
    assert.equal(toolReply(path, { query: 'zebra', conversationId: 'c1', runId: "it's" }), "No persisted history for run 'it's'.");
    assert.match(
      toolReply(path, { query: 'zebra', scope: 'all', runId: 'r2' }),
      /^Found 1 match\(es\) for 'zebra' in 1 persisted messages:/,
    );
  });

  test('no history: the conversation and the all-scope texts', () => {
    const path = buildStore((w) => addRun(w, 'r1', 'c1'));
    assert.equal(toolReply(path, { query: 'x', conversationId: 'c1' }), NO_HISTORY_CONVERSATION);
    assert.equal(toolReply(path, { query: 'x', conversationId: 'other' }), NO_HISTORY_CONVERSATION);
    assert.equal(toolReply(path, { query: 'x', scope: 'all' }), NO_HISTORY_ALL);
  });

  test("the empty conversation id '' is a real filter; a NULL conversation omits the label part", () => {
    const path = buildStore((w) => {
      addRun(w, 'r-empty', '', 0);
      addRun(w, 'r-null', null, 1);
      addRun(w, 'r-c', 'c', 2);
      for (const r of ['r-empty', 'r-null', 'r-c']) addSnapshot(w, r, [userMsg(`zebra in ${r}`, 1)]);
    });
    const empty = toolReply(path, { query: 'zebra', conversationId: '' });
    assert.equal(
      empty,
      "Found 1 match(es) for 'zebra' in 1 persisted messages:\n\n[score: 0.3 | run: r-empty | conversation: ]\n[0] User: zebra in r-empty",
    );
    const all = toolReply(path, { query: 'zebra', scope: 'all', contextLines: 0 });
    assert.match(all, /\[score: [\d.]+ \| run: r-null\]\n\[0\] User: zebra in r-null/);
    assert.match(all, /^Found 3 match\(es\)/);
  });

  test('ties keep corpus order: runs by started_at, then message order', () => {
    const path = buildStore((w) => {
      addRun(w, 'late', 'c', 50);
      addRun(w, 'early', 'c', 10);
      addSnapshot(w, 'late', [userMsg('same words', 1)]);
      addSnapshot(w, 'early', [userMsg('same words', 2), userMsg('same words', 3)]);
    });
    const { outcome } = searchStore(path, { query: 'same', conversationId: 'c', contextLines: 0 });
    assert.ok(outcome.kind === 'found');
    assert.deepEqual(
      outcome.hits.map((h) => [h.run.runId, h.position]),
      [
        ['early', 0],
        ['early', 1],
        ['late', 0],
      ],
    );
  });
});

describe('window selection (§6.1 step 6, §9.8–§9.10)', () => {
  test('a skipped hit frees its slot for a lower-ranked one', () => {
    const { outcome, text } = searchStore(ten, { query: 'zebra', conversationId: 'c1', maxMatches: 2, contextLines: 1 });
    assert.equal(
      text,
      "Found 2 match(es) for 'zebra' in 10 persisted messages:\n\n" +
        `[score: 1.8 | run: r1 | conversation: c1]\n${tenLine(1)}\n${tenLine(2)}\n${tenLine(3)}\n\n---\n\n` +
        `[score: 1.3 | run: r1 | conversation: c1]\n${tenLine(5)}\n${tenLine(6)}\n${tenLine(7)}`,
    );
    assert.ok(outcome.kind === 'found');
    assert.deepEqual(
      outcome.ranking.map((r) => [r.position, r.shown]),
      [
        [2, true],
        [3, false],
        [6, true],
      ],
    );
  });

  test('partially overlapping windows repeat lines', () => {
    const text = toolReply(ten, { query: 'zebra', conversationId: 'c1', contextLines: 2 });
    assert.equal(
      text,
      "Found 2 match(es) for 'zebra' in 10 persisted messages:\n\n" +
        `[score: 1.8 | run: r1 | conversation: c1]\n${[0, 1, 2, 3, 4].map(tenLine).join('\n')}\n\n---\n\n` +
        `[score: 1.3 | run: r1 | conversation: c1]\n${[4, 5, 6, 7, 8].map(tenLine).join('\n')}`,
    );
  });

  test('max_matches=0: the header, two newlines and nothing else', () => {
    assert.equal(
      toolReply(ten, { query: 'zebra', conversationId: 'c1', maxMatches: 0 }),
      "Found 0 match(es) for 'zebra' in 10 persisted messages:\n\n",
    );
  });

  test('context_lines=0: one line per result', () => {
    assert.equal(
      toolReply(ten, { query: 'zebra', conversationId: 'c1', contextLines: 0 }),
      "Found 3 match(es) for 'zebra' in 10 persisted messages:\n\n" +
        `[score: 1.8 | run: r1 | conversation: c1]\n${tenLine(2)}\n\n---\n\n` +
        `[score: 1.6 | run: r1 | conversation: c1]\n${tenLine(3)}\n\n---\n\n` +
        `[score: 1.3 | run: r1 | conversation: c1]\n${tenLine(6)}`,
    );
  });

  test('windows never cross runs, even when the runs are adjacent in the corpus', () => {
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1', 0);
      addRun(w, 'r2', 'c1', 10);
      addSnapshot(w, 'r1', [userMsg('alpha', 1), assistantMsg('beta', 2), userMsg('the zebra', 3)]);
      addSnapshot(w, 'r2', [userMsg('gamma', 4), assistantMsg('delta', 5)]);
    });
    assert.equal(
      toolReply(path, { query: 'zebra', conversationId: 'c1' }),
      "Found 1 match(es) for 'zebra' in 5 persisted messages:\n\n[score: 1.2 | run: r1 | conversation: c1]\n" +
        '[0] User: alpha\n[1] Assistant: beta\n[2] User: the zebra',
    );
  });

  test('context lines are windowed around a query term past the cutoff too', () => {
    const long = 'x'.repeat(700) + ' zebra ' + 'y'.repeat(300);
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [userMsg('zebra zebra', 1), assistantMsg(long, 2)]);
    });
    const text = toolReply(path, { query: 'zebra', conversationId: 'c1', maxMatches: 1 });
    assert.equal(text.split('\n').at(-1), '[1] Assistant: ...' + long.slice(454, 954) + '...');
  });
});

describe('what is indexed (§4, §9.2–§9.4)', () => {
  const mixed = buildStore((w) => {
    addRun(w, 'r1', 'c1');
    addSnapshot(w, 'r1', [
      userMsg('please look it up', 1),
      response([thinkingPart('pondering text content')], { timestamp: at(2) }),
      response([toolCallPart('lookup', { q: 'x' }, 'c-1')], { timestamp: at(3) }),
      request([toolReturnPart('lookup', 'found it', 'c-1', { timestamp: at(4) })]),
      request([retryPromptPart('bad call', { toolName: null, toolCallId: 'c-2', timestamp: at(5) })]),
      response([textPart('done')], { timestamp: at(6) }),
      request([userPromptPart('thanks', { timestamp: at(7) })]),
    ]);
  });

  test('role labels and tool names are searchable', () => {
    const user = searchStore(mixed, { query: 'user', conversationId: 'c1', contextLines: 0 }).outcome;
    assert.ok(user.kind === 'found');
    assert.deepEqual(
      user.hits.map((h) => h.position),
      [6, 0],
      'the shorter message ranks first',
    );
    const tool = searchStore(mixed, { query: 'tool', conversationId: 'c1', contextLines: 0 }).outcome;
    assert.ok(tool.kind === 'found');
    assert.deepEqual(tool.hits.map((h) => h.position).sort(), [2, 3]);
    assert.match(
      toolReply(mixed, { query: 'none', conversationId: 'c1', contextLines: 0 }),
      /^Found 1 match\(es\)[^\n]*\n\n[^\n]*\n\[4\] Retry \[None\]: bad call$/,
    );
    assert.match(toolReply(mixed, { query: 'lookup', conversationId: 'c1', contextLines: 0 }), /^Found 2 match\(es\)/);
  });

  test('a message with no text counts in N and shows [no text content]; the placeholder is not searchable', () => {
    assert.equal(toolReply(mixed, { query: 'content', conversationId: 'c1' }), "No matches for 'content' in 7 persisted messages.");
    assert.equal(toolReply(mixed, { query: 'pondering', conversationId: 'c1' }), "No matches for 'pondering' in 7 persisted messages.");
    const text = toolReply(mixed, { query: 'please', conversationId: 'c1', contextLines: 1 });
    assert.match(text, /\n\[0\] User: please look it up\n\[1\] \[no text content\]$/);
  });

  test('the [n] prefix is not searchable', () => {
    assert.equal(toolReply(mixed, { query: '1', conversationId: 'c1' }), "No matches for '1' in 7 persisted messages.");
    assert.equal(toolReply(mixed, { query: '[3]', conversationId: 'c1' }), "No matches for '[3]' in 7 persisted messages.");
  });

  test('a punctuation-only query matches nothing', () => {
    assert.equal(toolReply(mixed, { query: '!!!', conversationId: 'c1' }), "No matches for '!!!' in 7 persisted messages.");
    assert.equal(toolReply(mixed, { query: '', conversationId: 'c1' }), "No matches for '' in 7 persisted messages.");
  });
});

describe('score formatting (§6.1 step 7, §9.7)', () => {
  // a real outcome of the worked example with its score replaced
  const real = searchStore(example, { query: 'zebra', scope: 'all', contextLines: 0 }).outcome;
  assert.ok(real.kind === 'found');
  const outcome = (score: number): SearchOutcome => ({ ...real, hits: [{ ...real.hits[0]!, score }] });
  for (const [score, want] of [
    [0.25, '0.2'],
    [2.25, '2.2'],
    [0.35, '0.3'],
    [0.75, '0.8'],
    [1.6722334805445824, '1.7'],
    [0.05, '0.1'],
    [12.95, '12.9'],
  ] as const) {
    test(`${score} -> ${want}`, () => {
      assert.equal(
        toolText(outcome(score)),
        `Found 1 match(es) for 'zebra' in 3 persisted messages:\n\n[score: ${want} | run: r1 | conversation: c1]\n[0] User: the ZEBRA passphrase is 42`,
      );
    });
  }
});
