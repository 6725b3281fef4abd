/**
 * The RESP2 reply parser of the Redis driver: replies come in reads cut anywhere (a header, a CRLF, a
 * multi-byte character, a long bulk string over many reads); each cut must give the replies of the
 * whole stream, strict UTF-8 included. The driver against a real server: test/store/server-readers.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { INVALID_UTF8, ReplyError, ReplyParser } from '../../../src/store/redis/resp.js';

type Parsed = ReturnType<typeof parseAll>;

function parseAll(chunks: Buffer[]): unknown[] {
  const out: unknown[] = [];
  const p = new ReplyParser((r) => out.push(r instanceof ReplyError ? { error: r.message } : r));
  for (const c of chunks) p.push(c);
  return out;
}

const STREAM = Buffer.concat([
  Buffer.from('+OK\r\n-WRONGPASS invalid username-password pair\r\n:42\r\n:-7\r\n$-1\r\n$0\r\n\r\n'),
  Buffer.from('$12\r\nline\r\nbreak!\r\n'), // a CRLF inside a bulk string is content
  Buffer.from(`$${Buffer.byteLength('Kü€🙂')}\r\n`),
  Buffer.from('Kü€🙂', 'utf8'),
  Buffer.from('\r\n$3\r\n'),
  Buffer.from([0x61, 0xff, 0x62]), // not UTF-8
  Buffer.from('\r\n*3\r\n$1\r\na\r\n*2\r\n:1\r\n*0\r\n$-1\r\n*-1\r\n*2\r\n$3\r\nend\r\n:0\r\n'),
]);

const WHOLE: Parsed = [
  'OK',
  { error: 'WRONGPASS invalid username-password pair' },
  42,
  -7,
  null,
  '',
  'line\r\nbreak!',
  'Kü€🙂',
  INVALID_UTF8,
  ['a', [1, []], null],
  null,
  ['end', 0],
];

describe('RESP reply parser', () => {
  it('reads a stream of every reply type whole', () => {
    assert.deepEqual(parseAll([STREAM]), WHOLE);
  });

  it('gives the same replies however the stream is cut in two', () => {
    for (let cut = 1; cut < STREAM.length; cut++) {
      assert.deepEqual(parseAll([STREAM.subarray(0, cut), STREAM.subarray(cut)]), WHOLE, `cut at ${cut}`);
    }
  });

  it('gives the same replies a byte at a time', () => {
    assert.deepEqual(parseAll([...STREAM].map((b) => Buffer.from([b]))), WHOLE);
  });

  it('joins a long bulk string from many reads, and goes on after it in the same read', () => {
    const big = 'x'.repeat(1 << 20) + 'é';
    const stream = Buffer.from(`*2\r\n$${Buffer.byteLength(big)}\r\n${big}\r\n:5\r\n+after\r\n`);
    const chunks: Buffer[] = [];
    for (let i = 0; i < stream.length; i += 65_536) chunks.push(stream.subarray(i, i + 65_536));
    assert.deepEqual(parseAll(chunks), [[big, 5], 'after']);
  });

  it('refuses what is not RESP2 rather than guessing', () => {
    assert.throws(() => parseAll([Buffer.from('%1\r\n')]), /unexpected reply/);
    assert.throws(() => parseAll([Buffer.from('$3x\r\nabc\r\n')]), /unexpected reply/);
    // a bulk string longer than its header says
    assert.throws(() => parseAll([Buffer.from('$2\r\nabc\r\n')]), /unexpected reply/);
    assert.throws(() => parseAll([Buffer.from('$2\r\nab'), Buffer.from('c\r\n')]), /unexpected reply/);
  });
});
