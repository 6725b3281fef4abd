import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { instructionDeltaPart, request, simulateRun, textPart, toolCallPart, userPromptPart } from '../../scripts/lib/messages.js';
import { messageKeys } from '../../src/history/keys.js';
import { displayText } from '../../src/render/clip.js';
import { renderMessage, searchText } from '../../src/render/message.js';
import { at, buildStore, parseMessage, recordTexts, replayOf, toolReply } from '../helpers/stores.js';

const HEAD = "Instruction block 'agent:state' is replaced from this point onward by:\n\n";

function deltaRequest(...deltas: Array<[string, string | null]>) {
  return request([userPromptPart('hello', { timestamp: at(1) }), ...deltas.map(([id, c]) => instructionDeltaPart(id, c))], {
    timestamp: at(2),
  });
}

describe('instruction-delta rendering (§4.1, §9.26)', () => {
  test('a replacement renders as system text with the block id repr', () => {
    const m = parseMessage(deltaRequest(['agent:state', 'Be terse.']));
    assert.equal(searchText(renderMessage(m)), `User: hello\nSystem: ${HEAD}Be terse.`);
  });

  test('a null content renders as a withdrawal', () => {
    const m = parseMessage(deltaRequest(['agent:state', null]));
    assert.equal(
      searchText(renderMessage(m)),
      "User: hello\nSystem: Instruction block 'agent:state' is withdrawn. Its previous instructions no longer apply.",
    );
  });

  test("an id containing ' is quoted like Python repr", () => {
    const m = parseMessage(deltaRequest(["it's", null], ['a\'b"c', 'x'], ['say "x"', 'y']));
    const lines = searchText(renderMessage(m)).split('\n');
    assert.equal(lines[1], `System: Instruction block "it's" is withdrawn. Its previous instructions no longer apply.`);
    assert.equal(lines[2], `System: Instruction block 'a\\'b"c' is replaced from this point onward by:`);
    assert.equal(lines[5], `System: Instruction block 'say "x"' is replaced from this point onward by:`);
  });

  test('display: head clip at 200 code points without an ellipsis, index keeps everything', () => {
    const content = 'x'.repeat(300) + ' ZEBRA ' + 'y'.repeat(100);
    const fields = renderMessage(parseMessage(request([instructionDeltaPart('agent:state', content)])));
    const render = HEAD + content;
    assert.equal(searchText(fields), 'System: ' + render);
    assert.equal(displayText(fields, new Set()), 'System: ' + render.slice(0, 200));
    assert.equal(displayText(fields, new Set(['yyy'])), 'System: ' + render.slice(0, 200), 'no match: classic clip');
    // a query term past the cutoff windows the excerpt, with ellipses on both sides (§4.6)
    assert.equal(displayText(fields, new Set(['zebra'])), 'System: ...' + render.slice(276, 476) + '...');
  });
});

describe('instruction deltas in replay and attribution (§3.3, §3.4)', () => {
  // Step 1 calls a tool; its return request is saved unstamped; core stamps it and appends the delta
  // before step 2, so the next snapshot carries a different copy of the same request.
  const sim = simulateRun({
    runId: 'r1',
    conversationId: 'c1',
    startedAt: at(0),
    instructions: 'be nice',
    prompt: 'find the ledger',
    steps: [
      { parts: [toolCallPart('lookup', { q: 'ledger' }, 'call-1')], results: [{ content: 'ledger row 7' }] },
      { parts: [textPart('done')], instructionDeltas: [{ id: 'agent:state', content: 'Mention the PELICAN clause.' }] },
    ],
  });

  test('the loose key ignores deltas: the later copy (with the delta) is kept and searchable', () => {
    assert.equal(sim.snapshots.length, 2);
    const path = buildStore((w) => w.writeSimulatedRun(sim));
    const texts = recordTexts(path, 'r1');
    assert.equal(texts.length, 4, 'the stamped request with the delta overlaps its earlier copy');
    assert.equal(texts[2], `Tool [lookup]: ledger row 7\nSystem: ${HEAD}Mention the PELICAN clause.`);
    const reply = toolReply(path, { query: 'pelican', conversationId: 'c1', contextLines: 0 });
    assert.equal(
      reply,
      "Found 1 match(es) for 'pelican' in 4 persisted messages:\n\n" +
        `[score: 0.7 | run: r1 | conversation: c1]\n[2] Tool [lookup]: ledger row 7\nSystem: ${HEAD}Mention the PELICAN clause.`,
    );
  });

  test('loose keys are equal and strict keys differ for a request that gained a delta', () => {
    const before = parseMessage(sim.snapshots[0]!.messages[2]!);
    const after = parseMessage(sim.snapshots[1]!.messages[2]!);
    const kb = messageKeys(before);
    const ka = messageKeys(after);
    assert.equal(kb.loose, ka.loose);
    assert.notEqual(kb.strict, ka.strict);
    assert.equal(kb.strict, kb.loose, 'without deltas the strict key is the loose key');
  });

  test('an inherited request reused by a later run that gained a delta is indexed again under that run', () => {
    // Run A stops at a tool-return boundary; run B continues from its history (prompt null), so
    // pydantic-ai pops that request, reuses it and appends an instruction delta to it.
    const a = simulateRun({
      runId: 'ra',
      conversationId: 'c1',
      startedAt: at(0),
      prompt: 'look up the OSPREY file',
      steps: [{ parts: [toolCallPart('lookup', { q: 'osprey' }, 'call-1')], results: [{ content: 'osprey file: 42 pages' }] }],
    });
    const b = simulateRun({
      runId: 'rb',
      conversationId: 'c1',
      startedAt: at(100),
      history: a.messages,
      prompt: null,
      steps: [{ parts: [textPart('summarised')], instructionDeltas: [{ id: 'agent:mode', content: 'Answer as the HERON persona.' }] }],
    });
    const path = buildStore((w) => w.writeSimulatedRuns([a, b]));
    assert.equal(recordTexts(path, 'ra').length, 3);
    const rb = replayOf(path, 'rb').messages;
    assert.equal(rb.length, 4);
    assert.equal(rb[2]!.keys.loose, replayOf(path, 'ra').messages[2]!.keys.loose);

    // conversation scope: ra = 3 messages, rb = its reused request (now with the delta) + its response
    const heron = toolReply(path, { query: 'heron', conversationId: 'c1', contextLines: 0 });
    assert.match(
      heron,
      /^Found 1 match\(es\) for 'heron' in 5 persisted messages:\n\n\[score: [\d.]+ \| run: rb \| conversation: c1\]\n\[2\] Tool \[lookup\]: osprey file: 42 pages\nSystem: Instruction block 'agent:mode'/,
    );
    // the tool return is found twice: once per run, because the later copy changed
    const osprey = toolReply(path, { query: 'pages', conversationId: 'c1', contextLines: 0 });
    assert.match(osprey, /^Found 2 match\(es\) for 'pages' in 5 persisted messages:/);
    assert.match(osprey, /\| run: ra \| conversation: c1\]\n\[2\] Tool \[lookup\]: osprey file: 42 pages\n\n---\n\n/);
    assert.match(osprey, /\| run: rb \| conversation: c1\]\n\[2\] Tool \[lookup\]: osprey file: 42 pages\nSystem: /);
    // the unchanged inherited prefix is claimed by ra only
    const prompt = toolReply(path, { query: 'osprey', conversationId: 'c1', contextLines: 0 });
    assert.doesNotMatch(prompt, /run: rb[^\n]*\]\n\[0\]/);
    // --run shows the full record
    assert.match(toolReply(path, { query: 'osprey', runId: 'rb', scope: 'all', contextLines: 0 }), / in 4 persisted messages:/);
  });

  test('a threaded run whose history ends with a response re-indexes nothing it inherited', () => {
    const a = simulateRun({
      runId: 'ra',
      conversationId: 'c1',
      startedAt: at(0),
      prompt: 'the KESTREL plan',
      steps: [{ parts: [textPart('noted')] }],
    });
    const b = simulateRun({
      runId: 'rb',
      conversationId: 'c1',
      startedAt: at(100),
      history: a.messages,
      prompt: 'and then?',
      steps: [{ parts: [textPart('then KESTREL flies')] }],
    });
    const path = buildStore((w) => w.writeSimulatedRuns([a, b]));
    const reply = toolReply(path, { query: 'kestrel', conversationId: 'c1', contextLines: 0 });
    assert.match(reply, /^Found 2 match\(es\) for 'kestrel' in 4 persisted messages:/);
    assert.match(reply, /run: ra \| conversation: c1\]\n\[0\] User: the KESTREL plan/);
    assert.match(reply, /run: rb \| conversation: c1\]\n\[3\] Assistant: then KESTREL flies/);
  });
});
