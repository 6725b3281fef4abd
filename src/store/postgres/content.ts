/**
 * A Postgres store's content digests (store/content.ts), computed by the server in one query: per run,
 * its snapshot count, last seq, and a SHA-256 over every snapshot's seq, step, state and the SHA-256 of
 * its timestamp and messages, in seq order, plus the same over the snapshots up to the index's cut (an
 * append leaves it equal to what the index saw). The messages never cross the network: a changed store
 * is compared in a fraction of the time a read costs. The digests are this backend's own (they are only
 * ever compared with digests taken by the same reader). Media: count and digest of (sha256, bytes) in
 * sha256 order (no insertion order is stored, so any media change counts as a rewrite).
 */
import { createHash } from 'node:crypto';
import { EMPTY_DIGEST, totalDigest, type RunContent, type RunCut, type StoreContent } from '../content.js';

type Select = (sql: string, values?: readonly unknown[]) => unknown[][];

/** The tables read, as SQL identifiers (media null when there is none). */
export interface Tables {
  readonly runs: string;
  readonly snapshots: string;
  readonly media: string | null;
}

/** One snapshot row as digested: every field a replay reads, unambiguously. */
const ROW = `concat_ws(':', seq, COALESCE(step_index::text, '~'), COALESCE(quote_literal(state), '~'),
  COALESCE(encode(sha256(convert_to(timestamp, 'UTF8')), 'hex'), '~'), COALESCE(encode(sha256(convert_to(messages, 'UTF8')), 'hex'), '~'))`;
const digestOf = (agg: string): string => `encode(sha256(convert_to(${agg}, 'UTF8')), 'base64')`;

export function postgresContent(select: Select, t: Tables, cuts: ReadonlyMap<string, RunCut>, runsTable: string): StoreContent {
  const ids = [...cuts.keys()];
  const rows = select(
    `SELECT r.run_id, count(s.seq), COALESCE(max(s.seq), 0),
       ${digestOf("string_agg(s.d, ',' ORDER BY s.seq)")},
       count(s.seq) FILTER (WHERE s.seq <= c.cut),
       ${digestOf("string_agg(s.d, ',' ORDER BY s.seq) FILTER (WHERE s.seq <= c.cut)")}
     FROM ${t.runs} r
     LEFT JOIN (SELECT run_id, seq, ${ROW} AS d FROM ${t.snapshots}) s ON s.run_id = r.run_id
     LEFT JOIN unnest($1::text[], $2::bigint[]) AS c(run_id, cut) ON c.run_id = r.run_id
     GROUP BY r.run_id`,
    [ids, ids.map((id) => cuts.get(id)!.maxSeq)],
  );
  const runs = new Map<string, RunContent>();
  for (const [runId, count, maxSeq, digest, cutCount, prefix] of rows) {
    const n = Number(count);
    const all = n === 0 ? EMPTY_DIGEST : `pg:${String(digest)}`;
    // nothing after the cut: the prefix is the whole (as ContentDigester gives it)
    const upTo = Number(cutCount) === n ? all : Number(cutCount) === 0 ? EMPTY_DIGEST : `pg:${String(prefix)}`;
    runs.set(String(runId), { count: n, maxSeq: Number(maxSeq), digest: all, prefix: upTo });
  }
  let media: RunContent = { count: 0, maxSeq: 0, digest: EMPTY_DIGEST, prefix: EMPTY_DIGEST };
  if (t.media !== null) {
    const [[count, digest]] = select(
      `SELECT count(*), encode(sha256(convert_to(COALESCE(string_agg(sha256 || ':' || encode(sha256(bytes), 'hex'), ',' ORDER BY sha256 COLLATE "C"), ''), 'UTF8')), 'base64') FROM ${t.media}`,
    ) as [[unknown, unknown]];
    media = { count: Number(count), maxSeq: 0, digest: `pg:${String(digest)}`, prefix: '' };
  }
  const table = createHash('sha256').update(runsTable).digest('base64');
  return { runs, media, runsTable: table, digest: totalDigest(runs, media, table) };
}
