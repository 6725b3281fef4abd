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

  test('a token cut by the window edge is still highlighted for what shows of it', () => {
    const text = `${'x'.repeat(520)} zeppelin ${'y'.repeat(30)} ${'z'.repeat(600)}`;
    const f = clipFieldParts('User: ', text, 'tail500', new Set(['zeppelin']));
    const out = clippedField(f, new Set(['zeppelin']), plain);
    assert.equal(out, `User: …${f.body}…`);
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
