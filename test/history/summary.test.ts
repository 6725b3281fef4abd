import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  request,
  SUMMARY_METADATA_KEY,
  SUMMARY_PREFIX,
  summaryRequest,
  systemPart,
  textContent,
  userPromptPart,
  type SummaryShape,
} from '../../scripts/lib/messages.js';
import { isSummaryArtifact } from '../../src/history/summary.js';
import { renderMessage, searchText } from '../../src/render/message.js';
import { addRun, addSnapshot, assistantMsg, at, buildStore, parseMessage, recordTexts, toolReply, userMsg } from '../helpers/stores.js';

const SHAPES: SummaryShape[] = ['legacy-system', 'marked-user', 'flattened-user'];

describe('summary artifacts (§3.1, §9.16)', () => {
  for (const shape of SHAPES) {
    test(`${shape}: the whole request is dropped, copied system parts included`, () => {
      const artifact = summaryRequest('they discussed the OSPREY budget', {
        shape,
        partTimestamp: at(3),
        systemParts: [systemPart('COPIEDSYS: you are a helpful bird watcher', { timestamp: at(0) })],
        ...(shape === 'marked-user' ? { requestMetadata: { [SUMMARY_METADATA_KEY]: true } } : {}),
      });
      assert.equal(isSummaryArtifact(parseMessage(artifact)), true);
      const path = buildStore((w) => {
        addRun(w, 'r1', 'c1');
        addSnapshot(w, 'r1', [artifact, assistantMsg('fine', 4), userMsg('next question', 5)]);
      });
      assert.deepEqual(recordTexts(path, 'r1'), ['Assistant: fine', 'User: next question']);
      assert.equal(toolReply(path, { query: 'copiedsys', conversationId: 'c1' }), "No matches for 'copiedsys' in 2 persisted messages.");
      assert.equal(toolReply(path, { query: 'osprey', conversationId: 'c1' }), "No matches for 'osprey' in 2 persisted messages.");
    });
  }

  test('a user string that starts with the prefix stays searchable (users control user text)', () => {
    const m = userMsg(SUMMARY_PREFIX + 'my own notes about the HERON', 1);
    assert.equal(isSummaryArtifact(parseMessage(m)), false);
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [m, assistantMsg('ok', 2)]);
    });
    assert.equal(
      toolReply(path, { query: 'heron', conversationId: 'c1', contextLines: 0 }),
      "Found 1 match(es) for 'heron' in 2 persisted messages:\n\n[score: 0.5 | run: r1 | conversation: c1]\n" +
        '[0] User: Summary of previous conversation:\n\nmy own notes about the HERON',
    );
  });

  test('the flattened form (same string, request metadata marker) is dropped', () => {
    const m = request([userPromptPart(SUMMARY_PREFIX + 'notes about the HERON', { timestamp: at(1) })], {
      metadata: { [SUMMARY_METADATA_KEY]: true },
    });
    assert.equal(isSummaryArtifact(parseMessage(m)), true);
  });

  test('a system prompt starting with "Summary of previous conversation:" without the blank line stays', () => {
    const m = request([
      systemPart('Summary of previous conversation: the ONYX', { timestamp: at(0) }),
      userPromptPart('hi', { timestamp: at(0) }),
    ]);
    assert.equal(isSummaryArtifact(parseMessage(m)), false);
    const path = buildStore((w) => {
      addRun(w, 'r1', 'c1');
      addSnapshot(w, 'r1', [m, assistantMsg('hello', 1)]);
    });
    assert.match(
      toolReply(path, { query: 'onyx', conversationId: 'c1', contextLines: 0 }),
      /\n\[0\] System: Summary of previous conversation: the ONYX\nUser: hi$/,
    );
  });

  test('the marker must be exactly {key: true}: extra keys or a non-boolean value mean no artifact', () => {
    const extra = { [SUMMARY_METADATA_KEY]: true, origin: 'user' };
    const marked = (metadata: Record<string, unknown>) =>
      request([userPromptPart([textContent(SUMMARY_PREFIX + 'body', metadata)], { timestamp: at(1) })]);
    const flattened = (metadata: Record<string, unknown>) =>
      request([userPromptPart(SUMMARY_PREFIX + 'body', { timestamp: at(1) })], { metadata });
    assert.equal(isSummaryArtifact(parseMessage(marked({ [SUMMARY_METADATA_KEY]: true }))), true);
    assert.equal(isSummaryArtifact(parseMessage(marked(extra))), false);
    assert.equal(isSummaryArtifact(parseMessage(marked({ [SUMMARY_METADATA_KEY]: 'true' }))), false);
    assert.equal(isSummaryArtifact(parseMessage(marked({ [SUMMARY_METADATA_KEY]: 1 }))), false);
    // Decision (§3.1): the flattened form's request metadata is compared the same strict way
    assert.equal(isSummaryArtifact(parseMessage(flattened(extra))), false);
    assert.equal(isSummaryArtifact(parseMessage(flattened({ [SUMMARY_METADATA_KEY]: 'true' }))), false);
  });

  test('a marked text-content without the prefix is still an artifact; a flattened string without it is not', () => {
    const marked = request([userPromptPart([textContent('no prefix here', { [SUMMARY_METADATA_KEY]: true })], { timestamp: at(1) })]);
    assert.equal(isSummaryArtifact(parseMessage(marked)), true);
    const flattened = request([userPromptPart('no prefix here', { timestamp: at(1) })], { metadata: { [SUMMARY_METADATA_KEY]: true } });
    assert.equal(isSummaryArtifact(parseMessage(flattened)), false);
  });

  test('a dynamic system prompt with the prefix is not an artifact; it renders as the compaction placeholder', () => {
    const m = request([systemPart(SUMMARY_PREFIX + 'dynamic', { timestamp: at(0), dynamicRef: 'fn' })]);
    const parsed = parseMessage(m);
    assert.equal(isSummaryArtifact(parsed), false);
    assert.equal(searchText(renderMessage(parsed)), '[Compaction summary]');
  });

  test('responses are never artifacts', () => {
    assert.equal(isSummaryArtifact(parseMessage(assistantMsg(SUMMARY_PREFIX + 'x', 1))), false);
  });
});
