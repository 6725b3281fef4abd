import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Chalk } from 'chalk';
import { clippedField, highlight, partsLabel } from '../../src/output/human.js';
import { clipFieldParts } from '../../src/render/clip.js';

const c = new Chalk({ level: 1 });
const plain = new Chalk({ level: 0 });
const marked = (s: string): string => c.bold.red(s);

describe('output/human', () => {
  test('highlights whole tokens case-insensitively, as the tokenizer sees them', () => {
    const terms = new Set(['refund', 'api']);
    assert.equal(
      highlight('Refund the billing-api; refunds and REFUND_ID stay plain', terms, c),
      `${marked('Refund')} the billing-${marked('api')}; refunds and REFUND_ID stay plain`,
    );
  });

  test('without colour, text is only escaped', () => {
    assert.equal(highlight('refund \x1b[2J now', new Set(['refund']), plain), 'refund \\e[2J now');
  });

  test('highlighting escapes store text first: no raw control reaches the terminal', () => {
    const out = highlight('x \x1b]0;pwned\x07 refund', new Set(['refund']), c);
    assert.ok(!out.includes('\x1b]'));
    assert.ok(!out.includes('\x07'));
    assert.ok(out.includes('\\e]0;pwned\\x07'));
  });

  test('a windowed field shows … on each clipped side and highlights only whole tokens of the full text', () => {
    const text = `${'a '.repeat(300)}prefund zeppelin ${'b '.repeat(300)}`;
    const f = clipFieldParts('Assistant: ', text, 'tail500', new Set(['zeppelin']));
    assert.ok(f.cutStart && f.cutEnd);
    const out = clippedField(f, new Set(['zeppelin', 'refund']), c);
    assert.ok(out.startsWith('Assistant: ' + c.dim('…')));
    assert.ok(out.endsWith(c.dim('…')));
    assert.ok(out.includes(marked('zeppelin')));
    assert.ok(!out.includes(marked('refund')), '"prefund" is not the token "refund"');
  });

  test('a query term cut by the window edge is highlighted for what shows of it', () => {
    // the window centres on the first zeppelin and ends 4 code points into the second one
    const text = `${'a '.repeat(300)}zeppelin ${'b '.repeat(120)} zeppelin ${'c '.repeat(100)}`;
    const f = clipFieldParts('User: ', text, 'tail500', new Set(['zeppelin']));
    assert.ok(f.body.endsWith(' zepp') && f.cutEnd, f.body.slice(-20));
    const out = clippedField(f, new Set(['zeppelin']), c);
    // tokenizing only the shown text would see "zepp", which is no query term
    assert.ok(out.endsWith(`${marked('zepp')}${c.dim('…')}`), JSON.stringify(out.slice(-40)));
    assert.equal(out.split(marked('zeppelin')).length, 2, 'the whole first occurrence is highlighted');
    assert.equal(clippedField(f, new Set(['zeppelin']), plain), `User: …${f.body}…`, 'without colour: only the clip marks');
  });

  test('the parts label names roles once, with tool names', () => {
    assert.equal(
      partsLabel([
        { role: 'assistant', toolName: null },
        { role: 'tool-call', toolName: 'a' },
        { role: 'tool-call', toolName: 'b' },
        { role: 'assistant', toolName: null },
      ]),
      'assistant, tool-call a, tool-call b',
    );
  });
});
