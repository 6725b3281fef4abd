/**
 * A Redis connection speaking RESP2 over one socket (TLS for `rediss://`), for the driver thread: commands
 * are written as arrays of bulk strings, a pipeline in one write, and replies parsed as they arrive. What
 * the reader needs and nothing more: it loads in a millisecond where a general client took 40–115 ms on
 * every search, and a pipeline of thousands of small commands costs the bytes, not an object per command.
 * Bulk replies are decoded as strict UTF-8 (upstream's `bytes.decode('utf-8')` fails where a lenient
 * decoder would replace bytes silently): a value that is not UTF-8 comes back as {@link INVALID_UTF8}.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** A decoded reply: strings, integers, null, arrays of these, or the marker of bytes that are not UTF-8. */
export type RedisReply = string | number | null | { readonly invalidUtf8: true } | RedisReply[];

export const INVALID_UTF8 = { invalidUtf8: true } as const;

/** An error reply (`-ERR …`, `-WRONGPASS …`): the server's text as the message. */
export class ReplyError extends Error {}

type Reply = RedisReply | ReplyError;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function text(b: Buffer): RedisReply {
  try {
    return UTF8.decode(b);
  } catch {
    return INVALID_UTF8;
  }
}

const CRLF = Buffer.from('\r\n');

/** `*N` then each argument as `$len` and its UTF-8 bytes. */
function encode(commands: ReadonlyArray<readonly string[]>): Buffer {
  const parts: string[] = [];
  for (const args of commands) {
    parts.push(`*${args.length}\r\n`);
    for (const a of args) parts.push(`$${Buffer.byteLength(a)}\r\n`, a, '\r\n');
  }
  return Buffer.from(parts.join(''));
}

/** Parses replies from the bytes as they come; a reply split over reads resumes where it stopped. */
export class ReplyParser {
  private buf: Buffer = Buffer.alloc(0);
  private pos = 0;
  /** A bulk string longer than what arrived: its chunks are kept until it is whole (one copy). */
  private bulk: { readonly len: number; readonly chunks: Buffer[]; have: number } | null = null;
  /** Arrays being filled, innermost last. */
  private readonly open: Array<{ readonly items: RedisReply[]; left: number }> = [];

  constructor(private readonly onReply: (r: Reply) => void) {}

  push(chunk: Buffer): void {
    const b = this.bulk;
    if (b !== null) {
      b.chunks.push(chunk);
      b.have += chunk.length;
      if (b.have < b.len + 2) return;
      const all = Buffer.concat(b.chunks, b.have);
      this.bulk = null;
      if (all[b.len] !== 0x0d || all[b.len + 1] !== 0x0a)
        throw new Error('unexpected reply from the server (a bulk string longer than said)');
      this.buf = all;
      this.pos = b.len + 2;
      this.emit(text(all.subarray(0, b.len)));
    } else {
      this.buf = this.pos < this.buf.length ? Buffer.concat([this.buf.subarray(this.pos), chunk]) : chunk;
      this.pos = 0;
    }
    this.parse();
  }

  private parse(): void {
    const buf = this.buf;
    const end = buf.length;
    for (;;) {
      // the header line: a type byte, then a text (+, -) or an integer (*, $, :) up to CRLF
      const at = this.pos;
      if (at >= end) return;
      const type = buf[at]!;
      let eol: number;
      let n = 0;
      if (type === 0x2b /* + */ || type === 0x2d /* - */) {
        eol = buf.indexOf(CRLF, at + 1);
        if (eol < 0) return;
      } else {
        let i = at + 1;
        const negative = buf[i] === 0x2d;
        if (negative) i++;
        for (; i < end; i++) {
          const c = buf[i]!;
          if (c < 0x30 || c > 0x39) break;
          n = n * 10 + (c - 0x30);
        }
        if (i + 1 >= end) return;
        if (buf[i] !== 0x0d || buf[i + 1] !== 0x0a) throw new Error(`unexpected reply from the server (type byte ${type})`);
        if (negative) n = -n;
        eol = i;
      }
      const start = eol + 2;
      if (type === 0x2a /* * */) {
        this.pos = start;
        if (n > 0) this.open.push({ items: [], left: n });
        else this.emit(n === 0 ? [] : null);
      } else if (type === 0x24 /* $ */) {
        if (n < 0) {
          this.pos = start;
          this.emit(null);
        } else if (start + n + 2 > end) {
          const rest = buf.subarray(start);
          this.bulk = { len: n, chunks: [rest], have: rest.length };
          this.buf = Buffer.alloc(0);
          this.pos = 0;
          return;
        } else {
          if (buf[start + n] !== 0x0d || buf[start + n + 1] !== 0x0a)
            throw new Error('unexpected reply from the server (a bulk string longer than said)');
          this.pos = start + n + 2;
          this.emit(text(buf.subarray(start, start + n)));
        }
      } else if (type === 0x3a /* : */) {
        this.pos = start;
        this.emit(n);
      } else if (type === 0x2b || type === 0x2d) {
        this.pos = start;
        const line = buf.toString('utf8', at + 1, eol);
        this.emit(type === 0x2b ? line : new ReplyError(line));
      } else throw new Error(`unexpected reply from the server (type byte ${type})`);
    }
  }

  private emit(value: Reply): void {
    let v = value;
    for (;;) {
      const top = this.open.at(-1);
      if (top === undefined) break;
      // only a transaction's EXEC nests errors: never sent here
      if (v instanceof ReplyError) throw new Error(`an error inside an array reply: ${v.message}`);
      top.items.push(v);
      if (--top.left > 0) return;
      this.open.pop();
      v = top.items;
    }
    this.onReply(v);
  }
}

export interface RespOptions {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** How long the connection, and then each pipeline's replies, may take. */
  readonly timeoutMs: number;
}

/** A socket-level failure with its code (ECONNREFUSED, ETIMEDOUT, …), as net reports them. */
function failure(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

interface Waiting {
  readonly replies: Reply[];
  readonly count: number;
  readonly resolve: (r: Reply[]) => void;
  readonly reject: (e: unknown) => void;
}

export class RespConnection {
  private readonly waiting: Waiting[] = [];
  private broken: Error | null = null;
  private timer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly socket: Socket,
    private readonly timeoutMs: number,
  ) {
    const parser = new ReplyParser((r) => {
      const w = this.waiting[0];
      if (w === undefined) return this.fail(new Error('a reply nobody asked for'));
      w.replies.push(r);
      if (w.replies.length < w.count) return;
      this.waiting.shift();
      this.arm();
      w.resolve(w.replies);
    });
    socket.on('data', (chunk: Buffer) => {
      try {
        parser.push(chunk);
      } catch (e) {
        this.fail(e as Error);
      }
    });
    socket.on('error', (e) => this.fail(e));
    socket.on('close', () => this.fail(failure('Connection is closed.', 'ECONNRESET')));
  }

  /** Connects (TLS when asked) within `timeoutMs`; fails with the socket's own error (its code kept). */
  static open(o: RespOptions): Promise<RespConnection> {
    return new Promise((resolve, reject) => {
      const socket = o.tls ? tlsConnect({ host: o.host, port: o.port }) : netConnect({ host: o.host, port: o.port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(failure('connect ETIMEDOUT', 'ETIMEDOUT'));
      }, o.timeoutMs);
      const failed = (e: Error): void => {
        clearTimeout(timer);
        socket.destroy();
        reject(e);
      };
      socket.once('error', failed);
      socket.once(o.tls ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        socket.off('error', failed);
        socket.setNoDelay(true);
        resolve(new RespConnection(socket, o.timeoutMs));
      });
    });
  }

  /** Sends the commands in one write; resolves with their replies in order (error replies as ReplyError). */
  pipeline(commands: ReadonlyArray<readonly string[]>): Promise<Reply[]> {
    if (this.broken) return Promise.reject(this.broken);
    if (commands.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.waiting.push({ replies: [], count: commands.length, resolve, reject });
      this.arm();
      this.socket.write(encode(commands));
    });
  }

  /** A timer for the oldest pipeline still waiting: a server that stops answering fails it. */
  private arm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = this.waiting.length === 0 ? null : setTimeout(() => this.fail(failure('Command timed out', 'ETIMEDOUT')), this.timeoutMs);
  }

  private fail(e: Error): void {
    this.broken ??= e;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.socket.destroy();
    for (const w of this.waiting.splice(0)) w.reject(this.broken);
  }

  close(): void {
    this.broken ??= failure('Connection is closed.', 'ECONNRESET');
    if (this.timer !== null) clearTimeout(this.timer);
    this.socket.destroy();
  }
}
