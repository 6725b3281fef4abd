import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeUtf8SurrogatePass } from '../../src/py/utf8.js';

const dec = (bytes: number[]): string | null => decodeUtf8SurrogatePass(Uint8Array.from(bytes));

describe('py/utf8 decodeUtf8SurrogatePass', () => {
  test('plain UTF-8 decodes as UTF-8, the empty input to the empty string', () => {
    assert.equal(dec([]), '');
    assert.equal(decodeUtf8SurrogatePass(Buffer.from('héllo 日本 😀')), 'héllo 日本 😀');
    // U+D7FF (ED 9F BF) is the last code point before the surrogates: an ordinary character
    assert.equal(dec([0xed, 0x9f, 0xbf]), '\ud7ff');
  });

  test('a leading BOM is kept, as Python keeps it for "utf-8"', () => {
    assert.equal(dec([0xef, 0xbb, 0xbf, 0x61]), '\ufeffa');
  });

  test('encoded lone surrogates become lone UTF-16 code units', () => {
    assert.equal(dec([0xed, 0xa0, 0x80]), '\ud800');
    assert.equal(dec([0xed, 0xbf, 0xbf]), '\udfff');
    assert.equal(dec([0x61, 0xed, 0xb0, 0x80, 0x62]), 'a\udc00b');
    assert.equal(dec([0xed, 0xa0, 0x80, 0xed, 0xa0, 0x81]), '\ud800\ud801');
  });

  test('an encoded surrogate pair (CESU-8 of U+1F600) joins into the astral character', () => {
    assert.equal(dec([0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]), '😀');
  });

  test('bytes that are not UTF-8 even with surrogatepass give null', () => {
    assert.equal(dec([0xff]), null);
    assert.equal(dec([0xc3]), null); // truncated sequence
    assert.equal(dec([0xc0, 0x80]), null); // overlong NUL
    assert.equal(dec([0xed, 0xa0]), null); // truncated surrogate
    assert.equal(dec([0xed, 0xa0, 0x41]), null); // third byte not a continuation
    assert.equal(dec([0x61, 0xed, 0xa0, 0x80, 0xff]), null); // bad after a surrogate
    assert.equal(dec([0xff, 0xed, 0xa0, 0x80]), null); // bad before a surrogate
  });
});
