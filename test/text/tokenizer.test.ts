import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isTokenizer, queryTokensWith, type Tokenizer, tokenizerNamed, tokenizeWith } from '../../src/text/tokenizer.js';

const spans = (tok: Tokenizer, text: string): Array<[string, number, number]> => {
  const out: Array<[string, number, number]> = [];
  tok.forEachSpan(text, (t, s, e) => {
    out.push([t, s, e]);
  });
  return out;
};

const DEFAULT = tokenizerNamed('default');
const CJK = tokenizerNamed('cjk');

describe('text/tokenizer', () => {
  test('names: default (the reference ranking) and cjk; nothing else', () => {
    assert.equal(isTokenizer('default'), true);
    assert.equal(isTokenizer('cjk'), true);
    for (const s of ['', 'CJK', 'Default', 'constructor', 'toString']) assert.equal(isTokenizer(s), false, s);
    assert.equal(tokenizerNamed(undefined), DEFAULT);
    assert.deepEqual([DEFAULT.name, DEFAULT.parity, CJK.name, CJK.parity], ['default', true, 'cjk', false]);
  });

  test('default tokens are \\w+ runs, lowercased', () => {
    assert.deepEqual(tokenizeWith(DEFAULT, 'Hello, World_2 — héllo ÉCOLE x²'), ['hello', 'world_2', 'héllo', 'école', 'x²']);
    assert.deepEqual(tokenizeWith(DEFAULT, ''), []);
    assert.deepEqual(tokenizeWith(DEFAULT, '... !!! 😀'), []);
  });

  test('query tokens are deduplicated after lowercasing, first occurrence kept', () => {
    assert.deepEqual(queryTokensWith(DEFAULT, 'b A a c B'), ['b', 'a', 'c']);
    assert.deepEqual(queryTokensWith(DEFAULT, ''), []);
  });

  test('default spans are UTF-16 offsets into the original text, astral characters counted as two', () => {
    assert.deepEqual(spans(DEFAULT, 'Ab cd'), [
      ['ab', 0, 2],
      ['cd', 3, 5],
    ]);
    assert.deepEqual(spans(DEFAULT, '😀x y'), [
      ['x', 2, 3],
      ['y', 4, 5],
    ]);
    // U+0130 lowercases to two code units; the span still covers the one original character
    assert.deepEqual(spans(DEFAULT, 'İx'), [['i\u0307x', 0, 2]]);
  });

  test('a span visitor returning true stops the scan', () => {
    const seen: string[] = [];
    DEFAULT.forEachSpan('one two three', (t) => {
      seen.push(t);
      return t === 'two';
    });
    assert.deepEqual(seen, ['one', 'two']);
  });

  test('both tokenizers count exactly the tokens they show as spans', () => {
    const texts = ['Hello 日本語のテキストです world', 'mixed ÉCOLE 東京タワー 123 x_y', '', '😀 한국어 텍스트', 'İstanbul İİ'];
    for (const tok of [DEFAULT, CJK]) {
      for (const text of texts) {
        const counted: string[] = [];
        const n = tok.forEachToken(text, (t) => counted.push(t));
        assert.equal(n, counted.length);
        assert.deepEqual(
          spans(tok, text).map(([t]) => t),
          counted,
          `${tok.name}: ${text}`,
        );
      }
    }
  });

  test('default span text lowercases to its token', () => {
    const text = 'Mixed CASE Ünïcödé ΣΊΣΥΦΟΣ x_1';
    for (const [t, s, e] of spans(DEFAULT, text)) assert.equal(text.slice(s, e).toLowerCase(), t);
  });
});
