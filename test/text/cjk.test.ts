import { test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachCjkSpan } from '../../src/text/cjk.js';
import { tokenPattern, tokenize } from '../../src/text/tokenize.js';
import { queryTokensWith, tokenizeWith, tokenizerNamed } from '../../src/text/tokenizer.js';

const cjk = tokenizerNamed('cjk');
const spans = (text: string): string[] => {
  const out: string[] = [];
  forEachCjkSpan(text, (t, s, e) => void out.push(`${t}@${text.slice(s, e)}`));
  return out;
};

test("this Node's Intl.Segmenter has full ICU: Japanese and Chinese dictionaries", () => {
  assert.deepEqual(Intl.Segmenter.supportedLocalesOf(['ja', 'zh']), ['ja', 'zh']);
});

test('Chinese and Japanese: words from the segmenter dictionary', () => {
  assert.deepEqual(tokenizeWith(cjk, '我们的数据库连接池经常超时'), ['我们', '的', '数据', '库', '连接', '池', '经常', '超', '时']);
  assert.deepEqual(tokenizeWith(cjk, '全文検索エンジンの設定'), ['全文', '検索', 'エンジン', 'の', '設定']);
});

test('half-width Katakana folds to full-width (voicing marks included); full-width Latin to ASCII, lowercased', () => {
  assert.deepEqual(tokenizeWith(cjk, 'ﾃﾞｰﾀﾍﾞｰｽ'), ['データベース']);
  assert.deepEqual(tokenizeWith(cjk, 'ｶﾞｷﾞ'), tokenizeWith(cjk, 'ガギ'));
  assert.deepEqual(tokenizeWith(cjk, 'ＡＰＩ Hello'), ['api', 'hello']);
});

test('Hangul runs, which ICU leaves whole, become overlapping bigrams; a short run stays whole', () => {
  assert.deepEqual(tokenizeWith(cjk, '데이터베이스를 다시'), ['데이', '이터', '터베', '베이', '이스', '스를', '다시']);
  assert.deepEqual(tokenizeWith(cjk, '를 API를'), ['를', 'api', '를']);
});

test('term frequency is kept: a repeated word is counted each time; the query is deduplicated', () => {
  assert.equal(tokenizeWith(cjk, 'データベース、データベース。データベース').filter((t) => t === 'データベース').length, 3);
  assert.deepEqual(queryTokensWith(cjk, 'データベース データベース'), ['データベース']);
});

test('spans are of the original text: a folded token highlights its half-width source, bigrams overlap', () => {
  assert.deepEqual(spans('はいﾃﾞｰﾀﾍﾞｰｽ'), ['はい@はい', 'データベース@ﾃﾞｰﾀﾍﾞｰｽ']);
  assert.deepEqual(spans('환불은'), ['환불@환불', '불은@불은']);
});

test('scripts the segmenter does not break (Tibetan) stay one word; punctuation is no token', () => {
  assert.deepEqual(tokenizeWith(cjk, 'ཀཁག、。！'), ['ཀཁག']);
});

test('the default tokenizer through the interface is the reference tokenizer, spans included', () => {
  const def = tokenizerNamed('default');
  const text = 'Grüße aus München İstanbul x_y 3.14 데이터베이스를 データベース ﾃﾞｰﾀ';
  assert.equal(def.parity, true);
  assert.deepEqual(tokenizeWith(def, text), tokenize(text));
  const got: string[] = [];
  def.forEachSpan(text, (t, s, e) => void got.push(`${t}@${s}-${e}`));
  assert.deepEqual(
    got,
    [...text.matchAll(tokenPattern())].map((m) => `${m[0].toLowerCase()}@${m.index}-${m.index! + m[0].length}`),
  );
});
