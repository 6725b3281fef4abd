import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { ASCII_WORD, forEachToken, QueryTermCounter, queryTokens, tokenize, tokenPattern } from '../../src/text/tokenize.js';

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

test('the ASCII word table is what the Unicode pattern matches below 0x80', () => {
  for (let c = 0; c < 128; c++) assert.equal(ASCII_WORD[c], /[\p{L}\p{N}_]/u.test(String.fromCharCode(c)) ? 1 : 0, `U+${c.toString(16)}`);
});

test('the ASCII scan finds exactly the tokens of the Unicode pattern, and a length filter only skips visits', () => {
  const random = rng(11);
  const alphabet = 'aZ_09 .,-\n\t"\'{}[]:\\/xyQ7@A`é';
  for (let k = 0; k < 2000; k++) {
    const len = Math.floor(random() * 40);
    let text = '';
    for (let i = 0; i < len; i++) text += alphabet[Math.floor(random() * (k % 2 ? alphabet.length - 1 : alphabet.length))]!;
    const want = [...text.matchAll(tokenPattern())].map((m) => m[0].toLowerCase());
    const got: string[] = [];
    assert.equal(
      forEachToken(text, (t) => got.push(t)),
      want.length,
      JSON.stringify(text),
    );
    assert.deepEqual(got, want, JSON.stringify(text));
    const lengths = new Set([1, 3]);
    const some: string[] = [];
    assert.equal(
      forEachToken(text, (t) => some.push(t), lengths),
      want.length,
    );
    // every wanted length is visited; on non-ASCII text everything may be
    assert.deepEqual(
      some.filter((t) => lengths.has(t.length)),
      want.filter((t) => lengths.has(t.length)),
    );
    if (/^[\x00-\x7f]*$/.test(text))
      assert.deepEqual(
        some,
        want.filter((t) => lengths.has(t.length)),
      );
  }
});

test('QueryTermCounter counts what the Unicode pattern finds, also when a non-ASCII character comes late', () => {
  const random = rng(23);
  const alphabet = 'aZ_09 .,-\n"{}:Q7Ab';
  const odd = ['é', 'İ', 'ß', '\u00a0', '½', '😀', '\ud800', 'ǅ'];
  const terms = ['a', 'ab', 'zz', 'q7', 'é', 'i̇', 'aé', 'ss', '_', '0'];
  const counter = new QueryTermCounter(terms);
  for (let k = 0; k < 3000; k++) {
    const len = Math.floor(random() * 40);
    let text = '';
    for (let i = 0; i < len; i++) text += alphabet[Math.floor(random() * alphabet.length)]!;
    // a third of the texts get one odd character at a random place (start, middle, end, inside a token)
    if (k % 3 === 0) {
      const at = Math.floor(random() * (text.length + 1));
      text = text.slice(0, at) + odd[Math.floor(random() * odd.length)]! + text.slice(at);
    }
    const want = [...text.matchAll(tokenPattern())].map((m) => m[0].toLowerCase());
    assert.equal(counter.count(text), want.length, JSON.stringify(text));
    assert.deepEqual(
      [...counter.counts],
      terms.map((t) => want.filter((w) => w === t).length),
      JSON.stringify(text),
    );
  }
});
