/**
 * The reader's view of a RedisStepStore key space (reader.ts), read on the driver thread in one request:
 * the run sets, every run record (one `MGET`) with its snapshot index (`ZRANGE`), and how many indexed
 * payloads exist (`EXISTS`, 10,000 keys a command). Three pipelined round trips, as the main thread sent
 * them before, but the payload keys are made, sent and counted here, and the view's digest is taken over
 * the replies' bytes as they came: the main thread receives what it reads (run ids, records, index
 * members) and a digest, and spends nothing on the 25,000 keys of a 613 MB store.
 */
import { createHash, type Hash } from 'node:crypto';
import { pyInt } from '../py-int.js';
import { decode, type RedisReply } from './reply.js';

export interface ViewRequest {
  readonly op: 'view';
  readonly prefix: string;
}

/** Runs the commands as one pipeline, replies undecoded (buffers); a command's error rejects. */
export type RawPipeline = (commands: ReadonlyArray<readonly string[]>) => Promise<unknown[]>;

/** What the driver sends back for a `view` request. */
export interface ViewReply {
  /** Both layouts' run set members, deduplicated, in code point order. */
  readonly members: RedisReply[];
  /** Per member, its run record (`GET p:run:{id}`) and its snapshot index members (`ZRANGE 0 -1`); none when a member is not UTF-8. */
  readonly records: RedisReply[];
  readonly indexes: RedisReply[][];
  /** How many of the indexed payloads exist (every member of every index read, its seq read as the reader reads it). */
  readonly present: number;
  /** SHA-1 (base64) over the bytes of all of the above, each value with its length: the view's stamp. */
  readonly digest: string;
}

/** Keys per EXISTS (a few commands however many snapshots). */
const EXISTS_KEYS = 10_000;
/** An index member as upstream writes it (`f"{seq}:{state}"`): read without pyInt's Unicode rules. */
const WRITTEN_MEMBER = /^([0-9]{1,15}):(?:complete|interrupted)$/;

/** The seq a member names, as the reader parses it (reader.ts `entries`); null when it names none. */
export function memberSeq(m: string): number | null {
  const plain = WRITTEN_MEMBER.exec(m);
  if (plain !== null) return Number(plain[1]);
  const cut = m.lastIndexOf(':');
  if (cut < 0) return null;
  const state = m.slice(cut + 1);
  return state === 'complete' || state === 'interrupted' ? pyInt(m.slice(0, cut)) : null;
}

export const runKey = (prefix: string, runId: string): string => `${prefix}:run:{${runId}}`;
export const indexKey = (prefix: string, runId: string): string => `${prefix}:snapshots:{${runId}}`;
export const payloadKey = (prefix: string, runId: string, seq: number): string => `${prefix}:snapshot:{${runId}}:${seq}`;

/** A value and its length, so that no two different sequences of values digest alike. */
function cell(h: Hash, v: Buffer | null): void {
  if (v === null) h.update('n');
  else h.update(`${v.length}:`).update(v);
}

/** Code point order of UTF-8 bytes is their byte order. */
const byBytes = (a: Buffer, b: Buffer): number => Buffer.compare(a, b);

const buffers = (reply: unknown): Array<Buffer | null> => (Array.isArray(reply) ? (reply as Array<Buffer | null>) : []);

export async function readView(prefix: string, exec: RawPipeline): Promise<ViewReply> {
  const h = createHash('sha1');
  const [all, old] = await exec([
    ['SMEMBERS', `${prefix}:runs:all`],
    ['SMEMBERS', `${prefix}:runs`],
  ]);
  const seen = new Set<string>();
  const raw: Buffer[] = [];
  for (const m of [...buffers(all), ...buffers(old)]) {
    const key = m!.toString('latin1');
    if (seen.has(key)) continue;
    seen.add(key);
    raw.push(m!);
  }
  raw.sort(byBytes);
  h.update(`i${raw.length}`);
  for (const m of raw) cell(h, m);
  const members = raw.map(decode);
  // a member not UTF-8 fails the listing (the reader says so): nothing more is read
  if (members.length === 0 || members.some((m) => typeof m !== 'string'))
    return { members, records: [], indexes: [], present: 0, digest: h.digest('base64') };
  const ids = members as string[];
  const replies = await exec([
    ['MGET', ...ids.map((id) => runKey(prefix, id))],
    ...ids.map((id) => ['ZRANGE', indexKey(prefix, id), '0', '-1']),
  ]);
  const records = buffers(replies[0]);
  const keys: string[] = [];
  const indexes = ids.map((id, i) => {
    cell(h, records[i] ?? null);
    const index = buffers(replies[i + 1]);
    h.update(`z${index.length}`);
    return index.map((b) => {
      cell(h, b);
      const m = decode(b);
      const seq = typeof m === 'string' ? memberSeq(m) : null;
      if (seq !== null) keys.push(payloadKey(prefix, id, seq));
      return m;
    });
  });
  const chunks: string[][] = [];
  for (let i = 0; i < keys.length; i += EXISTS_KEYS) chunks.push(['EXISTS', ...keys.slice(i, i + EXISTS_KEYS)]);
  const present = (await exec(chunks)).reduce<number>((n, c) => n + Number(c), 0);
  h.update(`e${present}`);
  return { members, records: records.map(decode), indexes, present, digest: h.digest('base64') };
}
