/**
 * A Redis store's content digests (store/content.ts) from the payloads' raw text: every indexed payload
 * of every run, in seq order, digested as stored (seq, state, the payload bytes as text) without parsing
 * it, so a changed store is compared at the cost of moving the bytes only. The digests are this
 * backend's own: they are only compared with digests taken by the same reader. A payload gone is left
 * out, as a read leaves it out.
 */
import { createHash } from 'node:crypto';
import { EMPTY_DIGEST, ContentDigester, totalDigest, type RunContent, type RunCut, type StoreContent } from '../content.js';
import type { RedisReply } from './reply.js';

export interface RunIndex {
  readonly runId: string;
  /** Index entries in seq order. */
  readonly entries: ReadonlyArray<{ readonly seq: number; readonly state: string; readonly key: string }>;
}

/** Keys per round trip: one MGET of a few MB at most for typical payloads. */
const KEYS_PER_CALL = 128;

export function redisContent(
  runs: readonly RunIndex[],
  mget: (keys: string[]) => RedisReply[],
  cuts: ReadonlyMap<string, RunCut>,
  runsTable: string,
): StoreContent {
  const out = new Map<string, RunContent>();
  for (const run of runs) {
    const d = new ContentDigester(cuts.get(run.runId)?.maxSeq ?? 0);
    for (let i = 0; i < run.entries.length; i += KEYS_PER_CALL) {
      const page = run.entries.slice(i, i + KEYS_PER_CALL);
      const values = mget(page.map((e) => e.key));
      page.forEach((e, k) => {
        const v = values[k];
        if (v === null || v === undefined) return;
        d.add(e.seq, [e.seq, e.state, typeof v === 'string' ? v : { invalid: true }]);
      });
    }
    out.set(run.runId, d.finish());
  }
  const media: RunContent = { count: 0, maxSeq: 0, digest: EMPTY_DIGEST, prefix: EMPTY_DIGEST };
  const table = createHash('sha256').update(runsTable).digest('base64');
  return { runs: out, media, runsTable: table, digest: totalDigest(out, media, table) };
}
