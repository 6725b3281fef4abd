import { claimInherited } from '../history/attribution.js';
import type { SkippedSnapshot } from '../history/replay.js';
import type { HistorySource } from '../history/source.js';
import { renderMessage, searchText } from '../render/message.js';
import { QueryTermCounter } from '../text/tokenize.js';

/**
 * What a search needs of one replayed run, compact enough to cross threads: the strict keys of its
 * record (for attribution across the whole scope), and the BM25 counts of the messages that may be
 * its own: those from `localStart` on, where attribution among the earlier runs digested together
 * (the run's conversation, in corpus order) puts its section. Attribution over the whole scope only
 * adds earlier runs, so it can start the section later, never earlier.
 */
export interface RunDigest {
  readonly runId: string;
  readonly strictKeys: string[];
  readonly localStart: number;
  /** Token count of each message from `localStart` on. */
  readonly lengths: Int32Array;
  /** Per query term: `[position, tf, position, tf, ...]`, positions ascending, `>= localStart`. */
  readonly termCounts: Int32Array[];
  readonly skipped: SkippedSnapshot[];
  readonly unknownPartKinds: Array<[string, number]>;
}

/**
 * Replays `runIds` (in corpus order; one conversation's, or a subset closed under "earlier in corpus
 * order") and digests each run as soon as it is replayed, so records do not pile up. `onRun` is told
 * after each run.
 */
export function digestRuns(source: HistorySource, runIds: readonly string[], terms: readonly string[], onRun?: (done: number) => void): RunDigest[] {
  const counter = new QueryTermCounter(terms);
  const counts = counter.counts;
  const claimed = new Set<string>();
  const out: RunDigest[] = [];
  source.plan(runIds);
  for (const runId of runIds) {
    const replay = source.replay(runId);
    const record = replay.messages;
    const strictKeys = record.map((m) => m.keys.strict);
    const localStart = claimInherited(claimed, strictKeys);
    const lengths = new Int32Array(record.length - localStart);
    const perTerm: number[][] = terms.map(() => []);
    for (let pos = localStart; pos < record.length; pos++) {
      lengths[pos - localStart] = counter.count(searchText(renderMessage(record[pos]!.message)));
      for (let k = 0; k < terms.length; k++) if (counts[k]! > 0) perTerm[k]!.push(pos, counts[k]!);
    }
    out.push({
      runId,
      strictKeys,
      localStart,
      lengths,
      termCounts: perTerm.map((a) => Int32Array.from(a)),
      skipped: replay.skipped,
      unknownPartKinds: [...replay.unknownPartKinds],
    });
    onRun?.(out.length);
  }
  return out;
}

/**
 * Digests groups of runs (see `conversationGroups`) taken one at a time from a queue that other threads
 * share, so that the threads finish together. `take` hands out a group index (past the end: done).
 */
export function digestGroups(
  source: HistorySource,
  groups: ReadonlyArray<readonly string[]>,
  take: () => number,
  terms: readonly string[],
  onRun?: (done: number) => void,
): RunDigest[] {
  const out: RunDigest[] = [];
  for (let g = take(); g < groups.length; g = take()) {
    const before = out.length;
    for (const d of digestRuns(source, groups[g]!, terms, (done) => onRun?.(before + done))) out.push(d);
  }
  return out;
}
