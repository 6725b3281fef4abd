import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJson } from '../../src/py/json-parse.js';
import { toMessage } from '../../src/history/messages.js';
import { partsMatch, type PartFilter, type PartRole, type Role } from '../../src/render/roles.js';
import { GlobSet } from '../../src/text/glob.js';
import { renderMessage } from '../../src/render/message.js';
import type { Message } from '../../src/history/messages.js';

const message = (o: unknown) => toMessage(parseJson(JSON.stringify(o)), 0);
/** Who speaks in each rendered part, in part order. */
const classifyParts = (m: Message): PartRole[] => renderMessage(m).map((p) => ({ role: p.role, toolName: p.toolName }));
const filter = (roles: Role[], tools: string[] = []): PartFilter => ({ roles: new Set(roles), tools: new GlobSet(tools) });

describe('render/roles', () => {
  test('request parts: user prompt, system prompt, instruction delta, tool return, retry, speech', () => {
    const m = message({
      kind: 'request',
      parts: [
        { part_kind: 'system-prompt', content: 'be nice' },
        { part_kind: 'user-prompt', content: 'hi' },
        { part_kind: 'instruction-delta', id: 'x', content: null },
        { part_kind: 'tool-return', tool_name: 'lookup', content: 'ok' },
        { part_kind: 'retry-prompt', tool_name: null, content: 'again' },
        { part_kind: 'retry-prompt', tool_name: 'charge', content: 'again' },
        { part_kind: 'speech', speaker: 'user', transcript: 'hello' },
        { part_kind: 'speech', speaker: 'user', transcript: '' },
        { part_kind: 'tool-availability-delta' },
        { part_kind: 'from-the-future' },
      ],
    });
    assert.deepEqual(classifyParts(m), [
      { role: 'system', toolName: null },
      { role: 'user', toolName: null },
      { role: 'system', toolName: null },
      { role: 'tool-return', toolName: 'lookup' },
      { role: 'retry', toolName: null },
      { role: 'retry', toolName: 'charge' },
      { role: 'user', toolName: null },
    ]);
    assert.deepEqual([...new Set(classifyParts(m).map((p) => p.role))], ['system', 'user', 'tool-return', 'retry']);
  });

  test('response parts: text, tool call, speech; thinking and built-in tools render nothing', () => {
    const m = message({
      kind: 'response',
      parts: [
        { part_kind: 'thinking', content: 'hmm' },
        { part_kind: 'text', content: 'sure' },
        { part_kind: 'tool-call', tool_name: 'delete_user', args: { id: 1 } },
        { part_kind: 'builtin-tool-call', tool_name: 'web', args: {} },
        { part_kind: 'speech', speaker: 'assistant', transcript: 'spoken' },
      ],
    });
    assert.deepEqual(classifyParts(m), [
      { role: 'assistant', toolName: null },
      { role: 'tool-call', toolName: 'delete_user' },
      { role: 'assistant', toolName: null },
    ]);
  });

  test('a message matches when one part satisfies role and tool together', () => {
    const parts = classifyParts(
      message({
        kind: 'response',
        parts: [
          { part_kind: 'text', content: 'deleting' },
          { part_kind: 'tool-call', tool_name: 'delete_user', args: {} },
        ],
      }),
    );
    assert.ok(partsMatch(parts, filter([])));
    assert.ok(partsMatch(parts, filter(['assistant'])));
    assert.ok(partsMatch(parts, filter(['tool-call'], ['delete_user'])));
    assert.ok(partsMatch(parts, filter([], ['delete_user'])));
    assert.ok(!partsMatch(parts, filter(['assistant'], ['delete_user'])), 'the text part has no tool');
    assert.ok(!partsMatch(parts, filter(['tool-return'])));
    assert.ok(!partsMatch(parts, filter([], ['create_user'])));
    assert.ok(partsMatch(parts, filter(['user', 'tool-call'])), 'several roles: any of them');
  });
});
