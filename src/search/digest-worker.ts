/**
 * Worker thread of a threaded `--no-index` replay (see digest-source.ts): digests the conversation
 * groups it takes from the shared queue and posts each group's digests as soon as they are made (parallel/pool.ts).
 */
import { HistorySource } from '../history/source.js';
import { runPoolWorker, type PoolWorkerData } from '../parallel/pool.js';
import { sharedQueue } from '../parallel/threads.js';
import type { CorpusNeeds } from './corpus.js';
import { digestGroups, type RunDigest } from './digest.js';

export interface DigestWorkerData extends PoolWorkerData {
  /** Run ids grouped by conversation, each group in corpus order; groups are taken from `queue`. */
  readonly groups: ReadonlyArray<readonly string[]>;
  readonly queue: SharedArrayBuffer;
  readonly terms: readonly string[];
  readonly needs: CorpusNeeds;
}

runPoolWorker<DigestWorkerData, RunDigest>((store, data, channel) => {
  const source = new HistorySource(store, { retain: false });
  digestGroups(
    source,
    data.groups,
    sharedQueue(data.queue),
    data.terms,
    (digests) =>
      channel.post(
        digests,
        digests.flatMap((d) => [
          d.lengths.buffer as ArrayBuffer,
          ...d.termCounts.map((c) => c.buffer as ArrayBuffer),
          ...[d.parts.starts, d.parts.roles, d.parts.tools].map((a) => a.buffer as ArrayBuffer),
          ...(d.times ? [d.times.firstSeqs.buffer as ArrayBuffer] : []),
          ...(d.phraseHits ? [d.phraseHits.buffer as ArrayBuffer] : []),
        ]),
      ),
    (done) => channel.progress(done),
    data.needs,
  );
});
