import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clipFieldParts } from '../../src/render/clip.js';
import { tokenizerNamed } from '../../src/text/tokenizer.js';

test('the match window finds the term with the tokenizer that ranked it', () => {
  const text = `${'ああ、'.repeat(100)}ここにデータベースがある`;
  const terms = new Set(['データベース']);
  // the default tokenizer sees one long word, not the term: the classic head clip
  assert.equal(clipFieldParts('', text, 'tail200', terms).start, 0);
  const f = clipFieldParts('', text, 'tail200', terms, tokenizerNamed('cjk'));
  assert.ok(f.start > 0 && f.body.includes('データベース'), `window at ${f.start}: ${f.body}`);
});
