import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJson } from '../../src/py/json-parse.js';
import { toMessage, type Message } from '../../src/history/messages.js';
import { displayText } from '../../src/render/clip.js';
import { renderMessage, searchText } from '../../src/render/message.js';

const TS = '"2026-01-02T03:04:05Z"';

/** A message from literal JSON text: numbers keep their lexemes (1.0, big ints, NaN) as json.loads sees them. */
function msg(kind: 'request' | 'response', partsJson: string): Message {
  return toMessage(parseJson(`{"parts": [${partsJson}], "kind": "${kind}"}`), 0);
}
const text = (m: Message) => searchText(renderMessage(m));
const display = (m: Message) => displayText(renderMessage(m), new Set());

const toolReturn = (content: string, name = 'lookup') =>
  msg(
    'request',
    `{"tool_name": "${name}", "content": ${content}, "tool_call_id": "c1", "tool_kind": null, "metadata": null, "timestamp": ${TS}, "outcome": "success", "part_kind": "tool-return"}`,
  );
const toolCall = (args: string, name = 'lookup') =>
  msg(
    'response',
    `{"tool_name": "${name}", "args": ${args}, "tool_call_id": "c1", "tool_kind": null, "id": null, "provider_name": null, "provider_details": null, "part_kind": "tool-call"}`,
  );
const retry = (content: string, name: string | null = 'lookup') =>
  msg(
    'request',
    `{"content": ${content}, "tool_name": ${name === null ? 'null' : `"${name}"`}, "tool_call_id": "c1", "timestamp": ${TS}, "part_kind": "retry-prompt"}`,
  );

describe('tool-return content: Python str()/repr() (§4.4, §9.21)', () => {
  const cases: Array<[string, string]> = [
    ['"plain text, raw"', 'plain text, raw'],
    ['null', 'None'],
    ['{"path": "/tmp/a b", "ok": true, "n": null, "x": 1.0}', "{'path': '/tmp/a b', 'ok': True, 'n': None, 'x': 1.0}"],
    [
      '[1, "a", null, false, 1e16, 1e-05, -0.0, 123456789012345678901, {"k": [1.5]}]',
      "[1, 'a', None, False, 1e+16, 1e-05, -0.0, 123456789012345678901, {'k': [1.5]}]",
    ],
    [
      '{"q": "it\'s", "r": "say \\"hi\\"", "s": "it\'s \\"x\\"", "t": "tab\\there\\nnl\\\\", "u": "\\u00e9\\u4e2d\\ud83d\\ude00\\u0000\\u007f\\u200b"}',
      `{'q': "it's", 'r': 'say "hi"', 's': 'it\\'s "x"', 't': 'tab\\there\\nnl\\\\', 'u': 'é中😀\\x00\\x7f\\u200b'}`,
    ],
    ['true', 'True'],
    ['42', '42'],
    ['1.0', '1.0'],
    ['NaN', 'nan'],
    ['[]', '[]'],
    ['{}', '{}'],
    ['{"content": "x", "metadata": null, "kind": "text-content"}', "{'content': 'x', 'metadata': None, 'kind': 'text-content'}"],
    ['{"kind": "binary"}', "{'kind': 'binary'}"],
    [
      '{"data": "AAEC", "media_type": "audio/wav", "vendor_metadata": null, "kind": "binary", "identifier": "abc123"}',
      "BinaryContent(data=b'\\x00\\x01\\x02', media_type='audio/wav', _identifier='abc123')",
    ],
    [
      '{"data": "-__-", "media_type": "image/png", "vendor_metadata": null, "kind": "binary", "identifier": "7a2f66"}',
      "BinaryImage(data=b'\\xfb\\xff\\xfe', media_type='image/png', _identifier='7a2f66')",
    ],
    [
      '{"data": "+//+", "media_type": "image/png", "vendor_metadata": null, "kind": "binary", "identifier": "7a2f66"}',
      "BinaryImage(data=b'\\xfb\\xff\\xfe', media_type='image/png', _identifier='7a2f66')",
    ],
    [
      '{"url": "https://x/i.png", "force_download": false, "vendor_metadata": null, "kind": "image-url", "media_type": null, "identifier": null}',
      "ImageUrl(url='https://x/i.png')",
    ],
    [
      '{"url": "https://x/d.pdf", "force_download": false, "vendor_metadata": null, "kind": "document-url", "media_type": "application/pdf", "identifier": "cdb4e7"}',
      "DocumentUrl(url='https://x/d.pdf', _media_type='application/pdf', _identifier='cdb4e7')",
    ],
    [
      '{"file_id": "f1", "provider_name": "openai", "vendor_metadata": null, "kind": "uploaded-file", "media_type": "application/pdf", "identifier": null}',
      "UploadedFile(file_id='f1', provider_name='openai', _media_type='application/pdf')",
    ],
    [
      '["see", {"data": "ImJ5dGVzIg==", "media_type": "text/plain", "vendor_metadata": null, "kind": "binary", "identifier": "000000"}]',
      `['see', BinaryContent(data=b'"bytes"', media_type='text/plain', _identifier='000000')]`,
    ],
  ];
  for (const [json, want] of cases) {
    test(`${json.slice(0, 60)} -> ${want.slice(0, 60)}`, () => {
      assert.equal(text(toolReturn(json)), `Tool [lookup]: ${want}`);
    });
  }

  test('typed return subclasses render like plain tool returns', () => {
    const m = msg(
      'request',
      `{"tool_name": "search_tools", "content": "found 3", "tool_call_id": "c1", "tool_kind": "tool-search", "metadata": null, "timestamp": ${TS}, "outcome": "success", "part_kind": "tool-return"}`,
    );
    assert.equal(text(m), 'Tool [search_tools]: found 3');
  });

  test('display clips at 500 code points plus "..."', () => {
    const m = toolReturn(JSON.stringify('z'.repeat(600)));
    assert.equal(display(m), 'Tool [lookup]: ' + 'z'.repeat(500) + '...');
    assert.equal(text(m), 'Tool [lookup]: ' + 'z'.repeat(600));
  });
});

describe('retry prompts (§4.1, §4.4)', () => {
  test("loc is a tuple: ('q',) and ('a', 0)", () => {
    assert.equal(
      text(retry('[{"type": "missing", "loc": ["q"], "msg": "Field required", "input": {}}]')),
      "Retry [lookup]: [{'type': 'missing', 'loc': ('q',), 'msg': 'Field required', 'input': {}}]",
    );
    assert.equal(
      text(retry('[{"type": "int_parsing", "loc": ["a", 0], "msg": "Input should be a valid integer", "input": "x", "ctx": {"k": 1}}]')),
      "Retry [lookup]: [{'type': 'int_parsing', 'loc': ('a', 0), 'msg': 'Input should be a valid integer', 'input': 'x', 'ctx': {'k': 1}}]",
    );
    assert.equal(
      text(retry('[{"type": "x", "loc": [], "msg": "m", "input": null}]')),
      "Retry [lookup]: [{'type': 'x', 'loc': (), 'msg': 'm', 'input': None}]",
    );
  });

  test('a string is raw, a null tool name is None, and retries are never clipped', () => {
    assert.equal(text(retry('"try again"', null)), 'Retry [None]: try again');
    const long = 'r'.repeat(1000);
    assert.equal(display(retry(JSON.stringify(long))), `Retry [lookup]: ${long}`);
  });
});

describe('tool-call arguments: args_as_dict() then json.dumps(ensure_ascii=False) (§4.3, §9.20)', () => {
  const cases: Array<[string, string]> = [
    [
      '"{\\"q\\": \\"caf\\u00e9\\", \\"n\\": 1.0, \\"big\\": 123456789012345678901, \\"z\\": NaN}"',
      '{"q": "café", "n": 1.0, "big": 123456789012345678901, "z": NaN}',
    ],
    [
      '{"q": "caf\\u00e9", "n": 1.0, "big": 123456789012345678901, "z": NaN}',
      '{"q": "café", "n": 1.0, "big": 123456789012345678901, "z": NaN}',
    ],
    ['{"b": 1, "a": [1, 2]}', '{"b": 1, "a": [1, 2]}'],
    ['"{\\"b\\":1,\\"a\\":[1,2]}"', '{"b": 1, "a": [1, 2]}'],
    ['"oops"', '{"INVALID_JSON": "oops"}'],
    ['"[1, 2]"', '{"INVALID_JSON": "[1, 2]"}'],
    ['"\\"just a string\\""', '{"INVALID_JSON": "\\"just a string\\""}'],
    ['"{\\"a\\": 1, \\"a\\": 2}"', '{"a": 2}'],
    ['"{\\"x\\": Infinity, \\"y\\": -Infinity, \\"e\\": 1e16, \\"f\\": 1E-5}"', '{"x": Infinity, "y": -Infinity, "e": 1e+16, "f": 1e-05}'],
    ['null', '{}'],
    ['""', '{}'],
    ['{}', '{}'],
    ['{"s": "a\\"b\\\\c\\n\\u0001/\\u00e9"}', '{"s": "a\\"b\\\\c\\n\\u0001/é"}'],
  ];
  for (const [json, want] of cases) {
    test(`${json} -> ${want}`, () => {
      assert.equal(text(toolCall(json)), `Tool Call [lookup]: ${want}`);
    });
  }

  test('display clips the JSON at 200 code points plus "..."', () => {
    const m = toolCall(`{"q": "${'y'.repeat(300)}"}`);
    assert.equal(display(m), 'Tool Call [lookup]: {"q": "' + 'y'.repeat(193) + '...');
  });
});

describe('user prompts, speech and parts that render nothing (§4.1, §4.2, §9.23, §9.24)', () => {
  test('list content joins strings and TextContent with one space; media contribute nothing', () => {
    const m = msg(
      'request',
      `{"content": ["hello", {"content": "world", "metadata": null, "kind": "text-content"},
        {"data": "AAEC", "media_type": "audio/wav", "vendor_metadata": null, "kind": "binary", "identifier": "abc123"},
        {"url": "https://x/i.png", "force_download": false, "vendor_metadata": null, "kind": "image-url", "media_type": null, "identifier": null},
        {"file_id": "f1", "provider_name": "openai", "vendor_metadata": null, "kind": "uploaded-file", "media_type": null, "identifier": null},
        {"kind": "cache-point", "ttl": "5m"}, "again"], "timestamp": ${TS}, "part_kind": "user-prompt"}`,
    );
    assert.equal(text(m), 'User: hello world again');
    assert.doesNotMatch(text(m), /x00|abc123|i\.png|f1/);
    assert.equal(text(msg('request', `{"content": [], "timestamp": ${TS}, "part_kind": "user-prompt"}`)), 'User: ');
  });

  test('speech renders only a non-empty transcript', () => {
    const speech = (transcript: string) =>
      msg(
        'response',
        `{"speaker": "assistant", "transcript": ${transcript}, "audio": null, "interrupted_at_ms": null, "id": null, "provider_name": null, "provider_details": null, "part_kind": "speech"}`,
      );
    assert.equal(text(speech('"hello there"')), 'Speech [assistant]: hello there');
    assert.equal(text(speech('null')), '');
    assert.equal(text(speech('""')), '');
    assert.equal(display(speech(JSON.stringify('s'.repeat(501)))), 'Speech [assistant]: ' + 's'.repeat(500) + '...');
  });

  test('thinking, file, compaction and built-in tool parts, and availability deltas, render nothing', () => {
    const resp = msg(
      'response',
      `{"content": "secret thoughts", "id": null, "signature": null, "provider_name": null, "provider_details": null, "part_kind": "thinking"},
       {"content": "provider summary", "id": null, "provider_name": null, "provider_details": null, "part_kind": "compaction"},
       {"content": {"data": "AAEC", "media_type": "image/png", "vendor_metadata": null, "kind": "binary", "identifier": "abc123"}, "id": null, "provider_name": null, "provider_details": null, "part_kind": "file"},
       {"tool_name": "web_search", "args": {"q": "x"}, "tool_call_id": "b1", "tool_kind": null, "id": null, "provider_name": null, "provider_details": null, "part_kind": "builtin-tool-call"},
       {"tool_name": "web_search", "content": "results", "tool_call_id": "b1", "tool_kind": null, "metadata": null, "timestamp": ${TS}, "outcome": "success", "provider_name": null, "provider_details": null, "part_kind": "builtin-tool-return"}`,
    );
    assert.deepEqual(renderMessage(resp), []);
    const req = msg('request', `{"tools_added": ["a"], "tool_call_id": null, "part_kind": "tool-availability-delta"}`);
    assert.deepEqual(renderMessage(req), []);
  });

  test('a system prompt renders as System:, cut at 200 without an ellipsis', () => {
    const m = msg(
      'request',
      `{"content": ${JSON.stringify('s'.repeat(250))}, "timestamp": ${TS}, "dynamic_ref": null, "part_kind": "system-prompt"}`,
    );
    assert.equal(display(m), 'System: ' + 's'.repeat(200));
  });

  test('parts of one message are joined by newlines in order', () => {
    const m = msg(
      'response',
      `{"content": "first", "id": null, "provider_name": null, "provider_details": null, "part_kind": "text"},
       {"tool_name": "t", "args": {"a": 1}, "tool_call_id": "c", "tool_kind": null, "id": null, "provider_name": null, "provider_details": null, "part_kind": "tool-call"}`,
    );
    assert.equal(text(m), 'Assistant: first\nTool Call [t]: {"a": 1}');
  });
});
