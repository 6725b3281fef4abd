/**
 * The Redis driver session, run on the driver thread of a SyncBridge (never imported by the main
 * thread). Requests are pipelines of read commands only; replies are read as buffers and decoded as
 * strict UTF-8 here (ioredis' string replies would replace invalid bytes silently, where upstream's
 * `bytes.decode('utf-8')` fails): a value that is not UTF-8 comes back as {@link INVALID_UTF8}.
 */
import { Redis } from 'ioredis';
import type { DriverSession } from '../sync-bridge.js';

export interface RedisConnection {
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: boolean;
}

export interface PipelineRequest {
  readonly op: 'pipeline';
  readonly commands: ReadonlyArray<readonly string[]>;
}

/** A decoded reply: strings, integers, null, arrays of these, or the marker of bytes that are not UTF-8. */
export type RedisReply = string | number | null | { readonly invalidUtf8: true } | RedisReply[];

export const INVALID_UTF8 = { invalidUtf8: true } as const;

/** The only commands sent: all read-only (ACL category @read). */
const READ_COMMANDS = new Set(['get', 'mget', 'getrange', 'smembers', 'zrange', 'exists']);

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decode(reply: unknown): RedisReply {
  if (reply === null || reply === undefined) return null;
  if (typeof reply === 'number') return reply;
  if (Buffer.isBuffer(reply)) {
    try {
      return UTF8.decode(reply);
    } catch {
      return INVALID_UTF8;
    }
  }
  if (Array.isArray(reply)) return reply.map(decode);
  return String(reply);
}

export async function open(config: unknown): Promise<DriverSession> {
  const c = config as RedisConnection;
  const client = new Redis({
    host: c.host,
    port: c.port,
    username: c.username,
    password: c.password,
    tls: c.tls ? {} : undefined,
    lazyConnect: true,
    // RESP2: AUTH and SELECT only, on any server since Redis 2 (RESP3 would send HELLO and return sets as sets)
    protocol: 2,
    // no INFO ready check, no CLIENT SETINFO, no reconnects or retries: a failure is reported, not hidden
    enableReadyCheck: false,
    disableClientInfo: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: 10_000,
  });
  client.on('error', () => {
    // surfaced by the failing command
  });
  await client.connect();
  // ioredis' own SELECT (option `db`) only emits an error event when refused and reads db 0 instead
  if (c.db !== 0) await client.select(c.db);
  return {
    async handle(request: unknown) {
      const r = request as PipelineRequest;
      if (r.op !== 'pipeline') throw new Error(`unknown request ${String(r.op)}`);
      const p = client.pipeline();
      for (const [name, ...args] of r.commands) {
        if (!READ_COMMANDS.has(name!.toLowerCase())) throw new Error(`refusing to send ${name}: not a read command`);
        p.callBuffer(name!, ...args);
      }
      const results = (await p.exec()) ?? [];
      return results.map(([err, reply]) => {
        if (err) throw err;
        return decode(reply);
      });
    },
    async close() {
      client.disconnect();
    },
  };
}
