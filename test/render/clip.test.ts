import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clipField, displayText } from '../../src/render/clip.js';
import type { Clippable } from '../../src/render/clip.js';

const none = new Set<string>();
const cp = (s: string) => Array.from(s);

describe('code-point clipping (§4.5, §9.1)', () => {
  test("500-limit fields: 'a'*499 + emoji + 'bc' keeps the emoji whole, then '...'", () => {
    const t = 'a'.repeat(499) + '😀bc';
    assert.equal(clipField(t, 'tail500', none), 'a'.repeat(499) + '😀...');
  });

  test('exactly 500 code points is not clipped even though the UTF-16 length is 501', () => {
    const t = 'a'.repeat(499) + '😀';
    assert.equal(t.length, 501);
    assert.equal(clipField(t, 'tail500', none), t);
  });

  test('a string of emoji clips to 500 emoji', () => {
    const t = '😀'.repeat(600);
    assert.equal(clipField(t, 'tail500', none), '😀'.repeat(500) + '...');
  });

  test('system text: 200 code points, no ellipsis; tool-call arguments: 200 plus "..."', () => {
    const t = 'x'.repeat(199) + '😀yz';
    assert.equal(clipField(t, 'head200', none), 'x'.repeat(199) + '😀');
    assert.equal(clipField(t, 'tail200', none), 'x'.repeat(199) + '😀...');
    assert.equal(clipField('x'.repeat(200), 'head200', none), 'x'.repeat(200));
  });

  test('retry text is never clipped', () => {
    const t = 'r'.repeat(5000);
    assert.equal(clipField(t, 'none', new Set(['r'])), t);
  });
});

describe('windowing around a match past the cutoff (§4.6, §9.27)', () => {
  test('a term in the middle: window of C centred on it, "..." on both sides', () => {
    const t = 'x'.repeat(700) + ' zebra ' + 'y'.repeat(300);
    assert.equal(clipField(t, 'tail500', new Set(['zebra'])), '...' + t.slice(454, 954) + '...');
  });

  test('a term at the end: the window is clamped, only a leading "..."', () => {
    const t = 'x'.repeat(900) + ' zebra';
    const out = clipField(t, 'tail500', new Set(['zebra']));
    assert.equal(out, '...' + t.slice(406));
    assert.ok(out.endsWith(' zebra'));
  });

  test('code points, not UTF-16 units', () => {
    const t = '😀'.repeat(600) + ' zebra ' + '😀'.repeat(300);
    const out = clipField(t, 'tail500', new Set(['zebra']));
    assert.equal(out, '...' + cp(t).slice(354, 854).join('') + '...');
    assert.equal(cp(out).length, 506);
  });

  test('system text and instruction deltas get ellipses on both sides too', () => {
    const t = 'x'.repeat(300) + ' zebra ' + 'y'.repeat(100);
    assert.equal(clipField(t, 'head200', new Set(['zebra'])), '...' + t.slice(204, 404) + '...');
  });

  test('tool-call arguments window at 200', () => {
    const t = '{"q": "' + 'x'.repeat(400) + ' zebra"}';
    const out = clipField(t, 'tail200', new Set(['zebra']));
    assert.ok(out.startsWith('...') && !out.endsWith('...') && out.includes('zebra"}'));
    assert.equal(cp(out).length, 203);
  });

  test('a term inside the head, or present in the head and the tail, keeps the classic clip', () => {
    const t = 'zebra ' + 'x'.repeat(700) + ' zebra';
    assert.equal(clipField(t, 'tail500', new Set(['zebra'])), t.slice(0, 500) + '...');
    const u = 'x'.repeat(490) + ' zebra ' + 'y'.repeat(100);
    assert.equal(clipField(u, 'tail500', new Set(['zebra'])), u.slice(0, 500) + '...');
  });

  test('matching is case-insensitive and by whole token', () => {
    const t = 'x'.repeat(700) + ' ZEBRA ' + 'y'.repeat(300);
    assert.equal(clipField(t, 'tail500', new Set(['zebra'])), '...' + t.slice(454, 954) + '...');
    const u = 'x'.repeat(700) + ' zebras ' + 'y'.repeat(300);
    assert.equal(clipField(u, 'tail500', new Set(['zebra'])), u.slice(0, 500) + '...');
  });

  test('a matched token longer than the cutoff starts the window at the token', () => {
    const long = 'z'.repeat(600);
    const t = 'q'.repeat(100) + ' ' + long + ' end';
    assert.equal(clipField(t, 'tail500', new Set([long])), '...' + 'z'.repeat(500) + '...');
  });

  test('every field of a message is windowed independently, labels untouched', () => {
    const fields: Clippable[] = [
      { label: 'Assistant: ', text: 'short', clip: 'tail500' },
      { label: 'Tool Call [t]: ', text: '{"a": "' + 'x'.repeat(300) + ' zebra"}', clip: 'tail200' },
    ];
    const out = displayText(fields, new Set(['zebra'])).split('\n');
    assert.equal(out[0], 'Assistant: short');
    assert.ok(out[1]!.startsWith('Tool Call [t]: ...') && out[1]!.endsWith(' zebra"}'));
  });
});
