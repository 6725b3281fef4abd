import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseJson } from '../../src/history/json-parse.js';
import { toMessage } from '../../src/history/messages.js';
import { classifyParts, messageRoles, partsMatch, type PartFilter, type Role } from '../../src/history/roles.js';
import { HistorySource } from '../../src/history/source.js';
import { GlobSet } from '../../src/text/glob.js';
import { renderMessage } from '../../src/render/message.js';
import { openStore } from '../../src/store/open.js';
import { FIXTURES } from '../helpers/cli.js';

const message = (o: unknown) => toMessage(parseJson(JSON.stringify(o)), 0);
const filter = (roles: Role[], tools: string[] = []): PartFilter => ({ roles: new Set(roles), tools: new GlobSet(tools) });

describe('history/roles', () => {
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
    assert.deepEqual(messageRoles(m), ['system', 'user', 'tool-return', 'retry']);
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

  test('one role per rendered line group, for every message of the parity stores', () => {
    const dir = join(FIXTURES, 'parity');
    let checked = 0;
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.db'))) {
      const store = openStore(join(dir, name));
      try {
        const source = new HistorySource(store);
        for (const run of source.runs()) {
          for (const m of source.replay(run.runId).messages) {
            assert.equal(classifyParts(m.message).length, renderMessage(m.message).length, `${name} ${run.runId}`);
            checked++;
          }
        }
      } finally {
        store.close();
      }
    }
    assert.ok(checked > 50);
  });
});
