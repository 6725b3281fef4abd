import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IndexDamagedError } from '../../../src/sidecar/errors.js';
import { decodeText, encodeText } from '../../../src/sidecar/shared/text-codec.js';

test('text without NUL, the escape character or surrogates is stored as it is', () => {
  for (const s of ['', 'run-1', 'héllo wörld', '全文検索', 'tab\tnewline\n\u0001'.repeat(3)]) {
    assert.equal(encodeText(s), s);
    assert.equal(decodeText(s), s);
  }
});

test('NUL, the escape character and lone surrogates round-trip; what Postgres TEXT refuses or alters is never written', () => {
  const odd = ['\u0000', '\ue000', '\ud800', '\udc00', '\ud83d\ude00', '\ue0000', 'a\u0000b\ue000c\ud800d\udfffe', '\udc00\ud800'];
  for (const s of odd) {
    const e = encodeText(s);
    assert.equal(decodeText(e), s, JSON.stringify(s));
    assert.ok(!e.includes('\u0000'), 'no NUL');
    // every surrogate left is half of a pair: valid UTF-8
    assert.equal(Buffer.from(e, 'utf8').toString('utf8'), e, JSON.stringify(s));
  }
  // equal text stays equal and different text different (lookups by id)
  const all = odd.map(encodeText);
  assert.equal(new Set(all).size, odd.length);
  // random strings over the troublesome code units
  const units = [0, 0x41, 0xe000, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0x30, 0x31, 0x32];
  for (let i = 0; i < 2000; i++) {
    const s = String.fromCharCode(...Array.from({ length: i % 12 }, (_, k) => units[(i * 7 + k * 13 + ((i * k) % 5)) % units.length]!));
    assert.equal(decodeText(encodeText(s)), s, JSON.stringify(s));
  }
});

test('a malformed escape is damage, never a guess', () => {
  for (const s of ['\ue000', '\ue0009', '\ue0002zz', '\ue0002d8']) assert.throws(() => decodeText(s), IndexDamagedError);
});
