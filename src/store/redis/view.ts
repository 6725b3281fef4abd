/**
 * The reader's view of a RedisStepStore key space (reader.ts), read on the driver thread: the payload
 * keys are made, sent and counted here, and each part's digest is taken over the replies' bytes as they
 * came, so the main thread receives only what it reads and a digest. Two parts:
 *
 * - the listing (two round trips): the run sets, then every run record and every run's `INCR` seq
 *   counter (two `MGET`s). Cheap: a handful of commands however many runs;
 * - the indexes (two round trips): every run's snapshot index (`ZRANGE`, one command a run), then how
 *   many indexed payloads exist (`EXISTS`, 10,000 keys a command). The costly part (1,860 commands and
 *   25,000 keys on a 613 MB store), read only when something needs the entries or the listing moved.
 */
import { createHash, type Hash } from 'node:crypto';
import { pyInt } from '../py-int.js';
import type { SnapshotState } from '../records.js';
import { decode, type RedisReply } from './reply.js';

export type ViewRequest =
  | { readonly op: 'view'; readonly part: 'listing'; readonly prefix: string }
  | { readonly op: 'view'; readonly part: 'indexes'; readonly prefix: string; readonly runIds: readonly string[] }
  | ProbeRequest;

/**
 * Whether a recorded probe (reader.ts, stamp()) holds against the listing this thread read last: asked
 * for as soon as the index's recorded stamp is known, answered right after the listing.
 */
export interface ProbeRequest {
  readonly op: 'view';
  readonly part: 'probe';
  readonly prefix: string;
  /** The listing digest the probe was recorded with: another listing proves nothing. */
  readonly digest: string;
  readonly probe: string;
}

/** Runs the commands as one pipeline, replies undecoded (buffers); a command's error rejects. */
export type RawPipeline = (commands: ReadonlyArray<readonly string[]>) => Promise<unknown[]>;

export interface ListingReply {
  /** Both layouts' run set members, deduplicated, in code point order. */
  readonly members: RedisReply[];
  /** Per member, its run record (`GET p:run:{id}`) and its seq counter (`GET p:snapshots:seq:{id}`); none when a member is not UTF-8. */
  readonly records: RedisReply[];
  readonly counters: RedisReply[];
  /** SHA-1 (base64) over the bytes of all of the above, each value with its length. */
  readonly digest: string;
}

export interface IndexesReply {
  /** Per run asked for, its snapshot index members (`ZRANGE 0 -1`). */
  readonly indexes: RedisReply[][];
  /** How many of the indexed payloads exist (every member read, its seq read as the reader reads it). */
  readonly present: number;
  /** SHA-1 (base64) over the runs asked for, their indexes' bytes and `present`. */
  readonly digest: string;
}

/** Keys per EXISTS (a few commands however many snapshots). */
const EXISTS_KEYS = 10_000;
/** An index member as upstream writes it (`f"{seq}:{state}"`): ASCII digits, read as `int()` reads them. */
const WRITTEN_MEMBER = /^([0-9]{1,15}):(complete|interrupted)$/;

/**
 * Upstream `_parse_member`: `<seq>:<state>` split at the last colon, seq a Python int, state `complete`
 * or `interrupted`; null for anything else (which upstream skips).
 */
export function parseMember(m: string): { seq: number; state: SnapshotState } | null {
  // what the writer writes, read without pyInt's Unicode rules (its first use alone costs a search ~10 ms)
  const plain = WRITTEN_MEMBER.exec(m);
  if (plain !== null) return { seq: Number(plain[1]), state: plain[2] as SnapshotState };
  const cut = m.lastIndexOf(':');
  const state = m.slice(cut + 1);
  const seq = cut < 0 ? null : pyInt(m.slice(0, cut));
  return seq === null || (state !== 'complete' && state !== 'interrupted') ? null : { seq, state };
}

export const runKey = (prefix: string, runId: string): string => `${prefix}:run:{${runId}}`;
export const indexKey = (prefix: string, runId: string): string => `${prefix}:snapshots:{${runId}}`;
export const counterKey = (prefix: string, runId: string): string => `${prefix}:snapshots:seq:{${runId}}`;
export const payloadKey = (prefix: string, runId: string, seq: number): string => `${prefix}:snapshot:{${runId}}:${seq}`;

/** A value and its length, so that no two different sequences of values digest alike. */
function cell(h: Hash, v: Buffer | null): void {
  if (v === null) h.update('n');
  else h.update(`${v.length}:`).update(v);
}

const buffers = (reply: unknown): Array<Buffer | null> => (Array.isArray(reply) ? (reply as Array<Buffer | null>) : []);

/** EXISTS commands of at most EXISTS_KEYS keys each, over `keys`. */
export function existsCommands(keys: readonly string[]): string[][] {
  const chunks: string[][] = [];
  for (let i = 0; i < keys.length; i += EXISTS_KEYS) chunks.push(['EXISTS', ...keys.slice(i, i + EXISTS_KEYS)]);
  return chunks;
}

/** How many keys existsCommands' replies say exist. */
export const existing = (replies: readonly unknown[]): number => replies.reduce<number>((n, c) => n + Number(c), 0);

/** Keys for EXISTS in commands of at most EXISTS_KEYS, and how many of them exist. */
export async function countExisting(keys: readonly string[], exec: RawPipeline): Promise<number> {
  return existing(await exec(existsCommands(keys)));
}

/**
 * The run ids of a listing reply as it came, before any record is parsed: its members whose record is
 * there, in member order. When no record is under another run's key (a settled view), these are the
 * runs of the listing, each once: a probe is recorded in this order.
 */
export function listedRuns(raw: ListingReply): string[] {
  return (raw.members as string[]).filter((_, i) => raw.records[i] !== null);
}

/** The keys `probe` names: each run's first and last payload, '' for a run without any; null when it cannot be the probe of `runs`. */
export function probeKeys(prefix: string, runs: readonly string[], probe: string): string[] | null {
  const marks = probe === '' ? [] : probe.split(',');
  if (marks.length !== runs.length && !(runs.length === 0 && probe === '')) return null;
  const keys: string[] = [];
  for (let i = 0; i < marks.length; i++) {
    if (marks[i] === '') continue;
    const m = /^([0-9]+):([0-9]+)$/.exec(marks[i]!);
    if (m === null) return null;
    keys.push(payloadKey(prefix, runs[i]!, Number(m[1])), payloadKey(prefix, runs[i]!, Number(m[2])));
  }
  return keys;
}

/**
 * What a probe is checked against: a listing's digest and its runs (null when a member is not text),
 * and a probe already checked against them in the listing's own round trip (readListing).
 */
export interface ProbeBasis {
  readonly digest: string;
  readonly runs: readonly string[] | null;
  readonly probed: ProbedAhead | null;
}

/** A probe whose keys were counted with the listing's records: whether they all exist. */
export interface ProbedAhead {
  readonly probe: string;
  readonly holds: boolean;
}

/** The probe basis of a listing reply (its run ids only: the records are not kept for it). */
export function probeBasis(raw: ListingReply, probed: ProbedAhead | null = null): ProbeBasis {
  return { digest: raw.digest, runs: raw.members.every((m) => typeof m === 'string') ? listedRuns(raw) : null, probed };
}

/** ProbeRequest's answer, given the basis of the listing read last (null: none read). */
export async function probeHolds(r: ProbeRequest, last: ProbeBasis | null, exec: RawPipeline): Promise<boolean> {
  if (last === null || last.digest !== r.digest || last.runs === null) return false;
  if (last.probed?.probe === r.probe) return last.probed.holds;
  const keys = probeKeys(r.prefix, last.runs, r.probe);
  return keys !== null && (keys.length === 0 || (await countExisting(keys, exec)) === keys.length);
}

/**
 * The listing (see ListingReply). With `probe`, a recorded probe asked for next (ProbeRequest), its keys
 * are counted in the same round trip as the records, taken to be those of every member (as they are
 * when every member's record is there: then `probed` says whether they all exist, else it is null and
 * the probe is read on its own).
 */
export async function readListing(
  prefix: string,
  exec: RawPipeline,
  probe: string | null = null,
): Promise<{ listing: ListingReply; probed: ProbedAhead | null }> {
  const h = createHash('sha1');
  const [all, old] = await exec([
    ['SMEMBERS', `${prefix}:runs:all`],
    ['SMEMBERS', `${prefix}:runs`],
  ]);
  // each member once, in byte order, hashed in one call: read as Latin-1 a member is one code unit a
  // byte, so its text is its bytes and the texts' own order their bytes' (a comparator call per pair,
  // a Buffer each, and two hash calls a member took ~12 ms of a fresh driver thread at 1,860 runs)
  const parts = [...buffers(all), ...buffers(old)] as Buffer[];
  const joined = Buffer.concat(parts).toString('latin1');
  const seen = new Map<string, Buffer>();
  let at = 0;
  for (const m of parts) {
    const key = joined.slice(at, (at += m.length));
    if (!seen.has(key)) seen.set(key, m);
  }
  const keys = [...seen.keys()].sort();
  let cells = `i${keys.length}`;
  for (const k of keys) cells += `${k.length}:${k}`;
  h.update(cells, 'latin1');
  const raw = keys.map((k) => seen.get(k)!);
  const members = raw.map(decode);
  // a member not UTF-8 fails the listing (the reader says so): nothing more is read
  if (members.length === 0 || members.some((m) => typeof m !== 'string'))
    return { listing: { members, records: [], counters: [], digest: h.digest('base64') }, probed: null };
  const ids = members as string[];
  const asked = probe === null ? null : probeKeys(prefix, ids, probe);
  const [recorded, counted, ...found] = await exec([
    ['MGET', ...ids.map((id) => runKey(prefix, id))],
    ['MGET', ...ids.map((id) => counterKey(prefix, id))],
    ...(asked === null ? [] : existsCommands(asked)),
  ]);
  const records = buffers(recorded);
  const counters = buffers(counted);
  for (const r of records) cell(h, r ?? null);
  for (const c of counters) cell(h, c ?? null);
  const listing = { members, records: records.map(decode), counters: counters.map(decode), digest: h.digest('base64') };
  // the keys were made from every member: they are the probe's only when every record is there (listedRuns)
  const probed = asked !== null && records.every((r) => r !== null) ? { probe: probe!, holds: existing(found) === asked.length } : null;
  return { listing, probed };
}

export async function readIndexes(prefix: string, runIds: readonly string[], exec: RawPipeline): Promise<IndexesReply> {
  const h = createHash('sha1');
  const replies = runIds.length === 0 ? [] : await exec(runIds.map((id) => ['ZRANGE', indexKey(prefix, id), '0', '-1']));
  const keys: string[] = [];
  const indexes = runIds.map((id, i) => {
    h.update(`r${id.length}:${id}`);
    const index = buffers(replies[i]);
    h.update(`z${index.length}`);
    return index.map((b) => {
      cell(h, b);
      const m = decode(b);
      const member = typeof m === 'string' ? parseMember(m) : null;
      if (member !== null) keys.push(payloadKey(prefix, id, member.seq));
      return m;
    });
  });
  const present = await countExisting(keys, exec);
  h.update(`e${present}`);
  return { indexes, present, digest: h.digest('base64') };
}
