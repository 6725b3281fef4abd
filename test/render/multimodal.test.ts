import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJson } from '../../src/py/json-parse.js';
import type { JsonObject } from '../../src/py/json-value.js';
import { isMultimodal, pyBytesRepr, toolContentRepr, toolContentStr } from '../../src/render/multimodal.js';

const obj = (json: string) => parseJson(json) as JsonObject;
const repr = (json: string) => toolContentRepr(parseJson(json));

describe('render/multimodal', () => {
  test('bytes repr picks quotes and escapes like Python (checked with CPython repr)', () => {
    assert.equal(pyBytesRepr(new Uint8Array()), "b''");
    assert.equal(pyBytesRepr(Buffer.from("'")), `b"'"`);
    assert.equal(pyBytesRepr(Buffer.from('"')), `b'"'`);
    assert.equal(pyBytesRepr(Buffer.from('\'"')), `b'\\'"'`);
    assert.equal(pyBytesRepr(Buffer.from('\\')), "b'\\\\'");
    assert.equal(pyBytesRepr(Uint8Array.from([0x00, 0x7f, 0x80, 0xff, 0x09, 0x0a, 0x0d])), "b'\\x00\\x7f\\x80\\xff\\t\\n\\r'");
    assert.equal(pyBytesRepr(Buffer.from('ok ~')), "b'ok ~'");
  });

  test('a multimodal dict needs a known kind and one of url, media_type, file_id', () => {
    assert.equal(isMultimodal(obj('{"kind":"image-url","url":"u"}')), true);
    assert.equal(isMultimodal(obj('{"kind":"binary","media_type":"audio/wav"}')), true);
    assert.equal(isMultimodal(obj('{"kind":"uploaded-file","file_id":"f"}')), true);
    assert.equal(isMultimodal(obj('{"kind":"image-url"}')), false);
    assert.equal(isMultimodal(obj('{"kind":"text-content","url":"u"}')), false);
    assert.equal(isMultimodal(obj('{"kind":1,"url":"u"}')), false);
    assert.equal(isMultimodal(obj('{"url":"u"}')), false);
  });

  test('kinds named like Object.prototype members are plain dicts, not multimodal objects', () => {
    for (const kind of ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf']) {
      assert.equal(isMultimodal(obj(`{"kind":"${kind}","url":"u"}`)), false, kind);
      assert.equal(repr(`{"kind":"${kind}","url":"u"}`), `{'kind': '${kind}', 'url': 'u'}`);
    }
  });

  test('the spec examples render in the dataclass no-defaults repr', () => {
    assert.equal(
      repr('{"kind":"binary","data":"AAEC","media_type":"audio/wav","identifier":"abc123"}'),
      "BinaryContent(data=b'\\x00\\x01\\x02', media_type='audio/wav', _identifier='abc123')",
    );
    // URL-safe base64 (-_) decodes as well as the standard alphabet (+/)
    for (const data of ['+//+', '-__-']) {
      assert.equal(
        repr(`{"kind":"binary","data":"${data}","media_type":"image/png","identifier":"7a2f66"}`),
        "BinaryImage(data=b'\\xfb\\xff\\xfe', media_type='image/png', _identifier='7a2f66')",
      );
    }
    assert.equal(
      repr('{"kind":"document-url","url":"https://x/d.pdf","media_type":"application/pdf","identifier":"cdb4e7"}'),
      "DocumentUrl(url='https://x/d.pdf', _media_type='application/pdf', _identifier='cdb4e7')",
    );
    assert.equal(repr('{"kind":"image-url","url":"https://x/i.png"}'), "ImageUrl(url='https://x/i.png')");
    assert.equal(
      repr('{"kind":"uploaded-file","file_id":"f1","provider_name":"openai","media_type":"application/pdf"}'),
      "UploadedFile(file_id='f1', provider_name='openai', _media_type='application/pdf')",
    );
  });

  test('defaults are left out, force_download shows only when true, and objects nest inside containers', () => {
    assert.equal(
      repr('{"kind":"video-url","url":"v","force_download":true,"vendor_metadata":null}'),
      "VideoUrl(url='v', force_download=True)",
    );
    assert.equal(repr('{"kind":"audio-url","url":"a","force_download":false}'), "AudioUrl(url='a')");
    assert.equal(repr('{"kind":"binary","media_type":"text/plain"}'), "BinaryContent(data=b'', media_type='text/plain')");
    assert.equal(
      repr('[1, {"kind":"image-url","url":"i"}, {"kind":"text-content","content":"t"}]'),
      "[1, ImageUrl(url='i'), {'kind': 'text-content', 'content': 't'}]",
    );
  });

  test('str() of a string is the string itself; of anything else its repr', () => {
    assert.equal(toolContentStr("plain 'text'"), "plain 'text'");
    assert.equal(toolContentStr(parseJson('{"a": 1.0, "b": null}')), "{'a': 1.0, 'b': None}");
  });
});
