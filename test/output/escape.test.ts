import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeForTerminal, escapeInline } from '../../src/output/escape.js';

describe('output/escape', () => {
  test('ordinary text, newlines and tabs pass through the terminal escape unchanged', () => {
    for (const s of ['', 'plain', 'héllo 日本語 😀 e\u0301', 'two\nlines\tand a tab', '\u200b\ufeff']) {
      assert.equal(escapeForTerminal(s), s);
    }
  });

  test('C0 controls, DEL and C1 controls become visible escapes', () => {
    assert.equal(escapeForTerminal('\x1b[31mred\x1b[0m'), '\\e[31mred\\e[0m');
    assert.equal(escapeForTerminal('\x1b]0;title\x07'), '\\e]0;title\\x07');
    assert.equal(escapeForTerminal('over\rwrite'), 'over\\rwrite');
    assert.equal(escapeForTerminal('\x00\x01\x08\x0b\x0c\x1f'), '\\x00\\x01\\x08\\x0b\\x0c\\x1f');
    assert.equal(escapeForTerminal('\x7f\x80\x9b\x9f'), '\\x7f\\x80\\x9b\\x9f');
    // just past C1: NBSP is a printable character
    assert.equal(escapeForTerminal('\xa0'), '\xa0');
  });

  test('bidi embeddings, overrides and isolates are escaped: they reorder what is shown', () => {
    assert.equal(escapeForTerminal('a\u202eb'), 'a\\u202eb');
    assert.equal(
      escapeForTerminal('\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069'),
      '\\u202a\\u202b\\u202c\\u202d\\u2066\\u2067\\u2068\\u2069',
    );
    assert.equal(escapeForTerminal('\u2029\u206a'), '\u2029\u206a');
  });

  test('inline fields also escape newlines, tabs and invisible characters', () => {
    assert.equal(escapeInline('a\nb\tc'), 'a\\nb\\tc');
    assert.equal(escapeInline('conv-\u200b\u200bzw'), 'conv-\\u200b\\u200bzw');
    assert.equal(escapeInline('\ufeff\u200d\u200e\u200f\u00ad'), '\\ufeff\\u200d\\u200e\\u200f\\u00ad');
    assert.equal(escapeInline('line\u2028para\u2029'), 'line\\u2028para\\u2029');
    assert.equal(escapeInline('\u2764\ufe0f'), '\u2764\\ufe0f'); // variation selector
    assert.equal(escapeInline('\u3164'), '\\u3164'); // Hangul filler, default-ignorable
  });

  test('invisible astral characters are written as \\u{...}', () => {
    assert.equal(escapeInline('tag\u{e0001}\u{e0041}'), 'tag\\u{e0001}\\u{e0041}');
  });

  test('inline escaping still catches terminal controls and keeps visible text', () => {
    assert.equal(escapeInline('id\x1b[2J\r'), 'id\\e[2J\\r');
    assert.equal(escapeInline('日本 😀'), '日本 😀');
  });
});
