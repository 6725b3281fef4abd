import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { TermIds } from '../../src/text/term-ids.js';
import { forEachToken, tokenize } from '../../src/text/tokenize.js';

/** The tokens of `texts` as TermIds names them (each id's term), and the counts it returns. */
function viaIds(ids: TermIds, texts: readonly string[]): { tokens: string[]; counts: number[] } {
  const tokens: string[] = [];
  const counts = texts.map((t) => ids.forEachId(t, (id) => tokens.push(ids.terms[id]!)));
  return { tokens, counts };
}

test("ids name exactly forEachToken's tokens, in order, ASCII (capitals lowercased in place) and not", () => {
  const texts = [
    'Hello hello HELLO hElLo_World x_y 3.14 a-b',
    'Grüße aus München İstanbul ΟΔΟΣ naïve ½ ²',
    'e\u0301 हिन्दी Ⅰ 〇 ٣ 𝟘 ẞ',
    'lone \ud800 surrogate \udc00x and 😀emoji😀',
    '',
    '... --- !!!',
    'ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz',
    'münchen MÜNCHEN hello', // not ASCII: the same terms as the ASCII texts above, found by string
  ];
  const ids = new TermIds();
  const { tokens, counts } = viaIds(ids, texts);
  assert.deepEqual(
    tokens,
    texts.flatMap((t) => tokenize(t)),
  );
  assert.deepEqual(
    counts,
    texts.map((t) => forEachToken(t, () => {})),
  );
  // one id per distinct term, whichever path found it
  assert.deepEqual(ids.terms, [...new Set(tokens)]);
  assert.equal(ids.idOf('hello'), ids.terms.indexOf('hello'));
  assert.equal(ids.idOf('münchen'), ids.terms.indexOf('münchen'));
});

test('many terms (the table grows many times), same-length neighbours and shared prefixes keep their ids', () => {
  const random = rng(7);
  const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_';
  const words = Array.from({ length: 60_000 }, () => {
    let w = '';
    for (let n = 1 + Math.floor(random() * 9); n > 0; n--) w += letters[Math.floor(random() * letters.length)];
    return w;
  });
  const texts: string[] = [];
  for (let k = 0; k < words.length; k += 50) texts.push(words.slice(k, k + 50).join(random() < 0.5 ? ' ' : ', '));
  texts.push(words.slice(0, 2000).reverse().join(' é ')); // some again, through the Unicode path
  const ids = new TermIds();
  const { tokens } = viaIds(ids, texts);
  assert.deepEqual(
    tokens,
    texts.flatMap((t) => tokenize(t)),
  );
  assert.deepEqual(ids.terms, [...new Set(tokens)]);
  for (const [id, term] of ids.terms.entries()) assert.equal(ids.idOf(term), id);
  assert.ok(ids.terms.length > 30_000, 'the table grew past its first size many times');
});
