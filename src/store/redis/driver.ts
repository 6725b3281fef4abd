/**
 * The Redis driver session, run on the driver thread of a SyncBridge (never imported by the main
 * thread), over resp.ts. Requests are pipelines of read commands only; replies come decoded as strict
 * UTF-8 (a value that is not UTF-8 comes back as {@link INVALID_UTF8}).
 */
import type { DriverSession } from '../sync-bridge.js';
import { ReplyError, RespConnection, type RedisReply } from './resp.js';

export { INVALID_UTF8, type RedisReply } from './resp.js';

export interface RedisConnection {
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: boolean;
  /** How long the connection, and then each reply, may take. */
  readonly timeoutSeconds: number;
}

export interface PipelineRequest {
  readonly op: 'pipeline';
  readonly commands: ReadonlyArray<readonly string[]>;
}

/** The only commands sent: all read-only (ACL category @read). */
const READ_COMMANDS = new Set(['get', 'mget', 'getrange', 'smembers', 'zrange', 'exists']);

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const codeOf = (e: unknown): string => String((e as { code?: unknown } | null)?.code ?? '');

/**
 * What went wrong, in words a user can act on, one line, never the password: a refused port, a
 * server that does not answer, and a refused password are three different things (the driver says
 * "Connection is closed." for all of them).
 */
export function redisFailure(e: unknown, c: RedisConnection): Error {
  const where = `${c.host}:${c.port}`;
  const text = errorText(e);
  if (codeOf(e) === 'ECONNREFUSED' || /ECONNREFUSED/.test(text))
    return new Error(`connection refused at ${where}: is a Redis server listening there?`);
  if (codeOf(e) === 'ETIMEDOUT' || /ETIMEDOUT|timed out/i.test(text))
    return new Error(`no answer from ${where} within ${c.timeoutSeconds} s (set ?connect_timeout= to wait longer)`);
  if (/^WRONGPASS|invalid username-password|invalid password/i.test(text))
    return new Error('authentication failed: wrong user name or password');
  if (/^NOAUTH/.test(text))
    return new Error('the server requires a password: give it in the URL (redis://:<password>@host/ or redis://<user>:<password>@host/)');
  if (codeOf(e) === 'ENOTFOUND' || codeOf(e) === 'EAI_AGAIN') return new Error(`no such host: ${c.host}`);
  return e instanceof Error ? e : new Error(text);
}

/** One command's reply; an error reply is thrown. */
async function one(client: RespConnection, command: string[]): Promise<RedisReply> {
  const [reply] = await client.pipeline([command]);
  if (reply instanceof ReplyError) throw reply;
  return reply!;
}

export async function open(config: unknown): Promise<DriverSession> {
  const c = config as RedisConnection;
  let client: RespConnection | null = null;
  try {
    client = await RespConnection.open({ host: c.host, port: c.port, tls: c.tls, timeoutMs: c.timeoutSeconds * 1000 });
    // RESP2: AUTH and SELECT only, on any server since Redis 2 (no HELLO, no CLIENT SETINFO)
    if (c.password !== undefined) {
      try {
        await one(client, c.username !== undefined ? ['AUTH', c.username, c.password] : ['AUTH', c.password]);
      } catch (e) {
        // a password the server does not ask for is no failure (redis-py goes on)
        if (!(e instanceof ReplyError) || !/without any password configured|no password is set/i.test(e.message)) throw e;
      }
    }
    if (c.db !== 0) await one(client, ['SELECT', String(c.db)]);
  } catch (e) {
    client?.close();
    throw redisFailure(e, c);
  }
  const session = client;
  return {
    async handle(request: unknown) {
      const r = request as PipelineRequest;
      if (r.op !== 'pipeline') throw new Error(`unknown request ${String(r.op)}`);
      for (const [name] of r.commands) {
        if (!READ_COMMANDS.has(name!.toLowerCase())) throw new Error(`refusing to send ${name}: not a read command`);
      }
      let results: Array<RedisReply | ReplyError>;
      try {
        results = await session.pipeline(r.commands);
      } catch (e) {
        throw redisFailure(e, c);
      }
      for (const reply of results) if (reply instanceof ReplyError) throw redisFailure(reply, c);
      return results;
    },
    async close() {
      session.close();
    },
  };
}
