import { test } from 'node:test';
import assert from 'node:assert/strict';
import { queryTokens, tokenize } from '../../src/search/tokenize.js';

test('the spec example (§5.1)', () => {
  assert.deepEqual(tokenize('Grüße aus München İstanbul ΟΔΟΣ x_y 3.14 naïve ½ ²'), [
    'grüße',
    'aus',
    'münchen',
    'i̇stanbul',
    'οδος',
    'x_y',
    '3',
    '14',
    'naïve',
    '½',
    '²',
  ]);
});

test('combining marks split words like Python \\w; numbers of every kind are word characters', () => {
  assert.deepEqual(tokenize('e\u0301'), ['e']);
  assert.deepEqual(tokenize('हिन्दी'), ['ह', 'न', 'द']);
  assert.deepEqual(tokenize('Ⅰ 〇 ٣ 𝟘'), ['ⅰ', '〇', '٣', '𝟘']);
  assert.deepEqual(tokenize('a-b c.d e/f'), ['a', 'b', 'c', 'd', 'e', 'f']);
  assert.deepEqual(tokenize('ẞ'), ['ß']);
});

test('punctuation-only text has no tokens; query tokens are deduplicated in order', () => {
  assert.deepEqual(tokenize('!!! ... ---'), []);
  assert.deepEqual(queryTokens('Zebra zebra ZEBRA lion zebra'), ['zebra', 'lion']);
  assert.deepEqual(queryTokens(''), []);
});
