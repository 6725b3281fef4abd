/**
 * The Redis driver session, run on the driver thread of a SyncBridge (never imported by the main
 * thread). Requests are pipelines of read commands only, or a part of the reader's view (view.ts), read
 * here in one request; replies are read as buffers and decoded as strict UTF-8 (reply.ts).
 */
import { Redis } from 'ioredis';
import type { DriverSession } from '../sync-bridge.js';
import { decodeOnce } from './reply.js';
import { probeBasis, probeHolds, readIndexes, readListing, type ProbeBasis, type ProbeRequest, type ViewRequest } from './view.js';

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

/** Commands per pipeline sent to the server (see exec). */
const PIPELINE_COMMANDS = 1000;

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

export async function open(config: unknown): Promise<DriverSession> {
  const c = config as RedisConnection;
  // AUTH is sent here, not by the driver: it would print a warning of its own when the server needs none
  const client = new Redis({
    host: c.host,
    port: c.port,
    tls: c.tls ? {} : undefined,
    lazyConnect: true,
    // RESP2: AUTH and SELECT only, on any server since Redis 2 (RESP3 would send HELLO and return sets as sets)
    protocol: 2,
    // no INFO ready check, no CLIENT SETINFO, no reconnects or retries: a failure is reported, not hidden
    enableReadyCheck: false,
    disableClientInfo: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: c.timeoutSeconds * 1000,
    commandTimeout: c.timeoutSeconds * 1000,
  });
  // the socket's own error (refused, timed out) comes as an event; the rejection then only says "closed"
  let socketError: unknown = null;
  client.on('error', (e) => {
    socketError ??= e;
  });
  try {
    await client.connect();
    if (c.password !== undefined) {
      try {
        await (c.username !== undefined ? client.call('AUTH', c.username, c.password) : client.call('AUTH', c.password));
      } catch (e) {
        // a password the server does not ask for is no failure (redis-py and the driver both go on)
        if (!/without any password configured|no password is set/i.test(errorText(e))) throw e;
      }
    }
    // ioredis' own SELECT (option `db`) only emits an error event when refused and reads db 0 instead
    if (c.db !== 0) await client.select(c.db);
  } catch (e) {
    client.disconnect();
    throw redisFailure(socketError ?? e, c);
  }
  /** One pipeline of read commands, replies as the server sent them (buffers). */
  const pipeline = async (commands: ReadonlyArray<readonly string[]>): Promise<unknown[]> => {
    const p = client.pipeline();
    for (const [name, ...args] of commands) {
      if (!READ_COMMANDS.has(name!.toLowerCase())) throw new Error(`refusing to send ${name}: not a read command`);
      p.callBuffer(name!, ...args);
    }
    let results: Array<[Error | null, unknown]>;
    try {
      results = (await p.exec()) ?? [];
    } catch (e) {
      throw redisFailure(e, c);
    }
    return results.map(([err, reply]) => {
      if (err) throw redisFailure(err, c);
      return reply;
    });
  };
  /**
   * The commands in pipelines of at most PIPELINE_COMMANDS, one after the other, each reply passed
   * through `map` as its pipeline ends: ioredis' objects for a queued command cost ~2 KB, and one
   * pipeline of every payload's GETRANGE (a build; 25,000 on the 613 MB store) grew this thread's heap
   * by 60 MB (nothing is lost: a pipeline is no snapshot across commands either).
   */
  const exec = async <T = unknown>(commands: ReadonlyArray<readonly string[]>, map?: (reply: unknown) => T): Promise<T[]> => {
    const out: T[] = [];
    for (let i = 0; i < commands.length; i += PIPELINE_COMMANDS) {
      const replies = await pipeline(commands.slice(i, i + PIPELINE_COMMANDS));
      for (let k = 0; k < replies.length; k++) {
        out.push(map ? map(replies[k]) : (replies[k] as T));
        // mapped: its buffers can go (see decodeOnce)
        if (map) replies[k] = null;
      }
    }
    return out;
  };
  /** The run ids and digest of the listing read last, kept for a probe asked for after it (ProbeRequest). */
  let basis: ProbeBasis | null = null;
  return {
    async handle(request: unknown, waiting: readonly unknown[]) {
      const r = request as PipelineRequest | ViewRequest;
      if (r.op === 'view') {
        if (r.part === 'listing') {
          // a probe asked for right after it (the reader's stampAhead) is counted in its round trip
          const next = waiting[0] as Partial<ProbeRequest> | undefined;
          const probe = next?.op === 'view' && next.part === 'probe' && next.prefix === r.prefix ? next.probe! : null;
          const { listing, probed } = await readListing(r.prefix, exec, probe);
          basis = probeBasis(listing, probed);
          return listing;
        }
        if (r.part === 'probe') return probeHolds(r, basis, exec);
        return readIndexes(r.prefix, r.runIds, exec);
      }
      if (r.op !== 'pipeline') throw new Error(`unknown request ${String((r as { op?: unknown }).op)}`);
      return exec(r.commands, decodeOnce);
    },
    async close() {
      client.disconnect();
    },
  };
}
