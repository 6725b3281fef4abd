import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conversationSummaryJson } from '../../scripts/lib/store-writer.js';
import { parseConversationMeta } from '../../src/store/conversation-meta.js';

test('parseConversationMeta: a ConversationSummary as pydantic dumps it gives its title, tags and outcome', () => {
  const json = conversationSummaryJson('c1', '2026-01-12T10:00:00Z', {
    title: 'Fix the flaky test',
    tags: ['ci', 'flaky'],
    outcome: 'failed',
  });
  assert.deepEqual(parseConversationMeta(json), { title: 'Fix the flaky test', tags: ['ci', 'flaky'], outcome: 'failed' });
  // non-ASCII as pydantic writes it (raw UTF-8), and the column read as a BLOB
  const utf8 = conversationSummaryJson('c2', 0, { title: '返金の再試行', tags: ['übung'] });
  assert.deepEqual(parseConversationMeta(Buffer.from(utf8, 'utf8')), { title: '返金の再試行', tags: ['übung'], outcome: 'ready' });
});

test("parseConversationMeta: keys left out take ConversationSummary's defaults", () => {
  assert.deepEqual(parseConversationMeta('{}'), { title: 'New session', tags: [], outcome: 'ready' });
  assert.deepEqual(parseConversationMeta('{"title": "only a title"}'), { title: 'only a title', tags: [], outcome: 'ready' });
});

test('parseConversationMeta: what upstream would reject is a problem, never a guess', () => {
  const problems: Array<[unknown, RegExp]> = [
    [null, /NULL/],
    [42, /number/],
    ['{"title": 42', /not JSON/],
    ['[1, 2]', /not a JSON object/],
    ['"a string"', /not a JSON object/],
    ['{"title": null}', /title/],
    ['{"title": 7}', /title/],
    ['{"tags": "ci"}', /tags/],
    ['{"tags": ["ci", 3]}', /tags/],
    ['{"tags": null}', /tags/],
    ['{"outcome": "exploded"}', /outcome/],
    ['{"outcome": null}', /outcome/],
    [Buffer.from([0x7b, 0xff, 0x7d]), /UTF-8/],
  ];
  for (const [value, why] of problems) {
    const r = parseConversationMeta(value);
    assert.ok('problem' in r, `${String(value)} should be a problem`);
    assert.match(r.problem, why);
  }
});
