import { hash } from 'node:crypto';
import { objectArray } from '../history/arrays.js';
import { claimInherited } from '../history/attribution.js';
import type { SkippedSnapshot } from '../history/replay.js';
import type { HistorySource } from '../history/source.js';
import { messageTimestamp } from '../history/timestamps.js';
import { renderMessage, searchText } from '../render/message.js';
import { ROLES, type PartRole } from '../render/roles.js';
import { QueryTermCounter } from '../text/tokenize.js';
import { tokenizerNamed } from '../text/tokenizer.js';
import type { CorpusNeeds } from './corpus.js';
import { containsPhrases } from './filters.js';

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
  /** The parts' roles and tools of each message from `localStart` on: what hit filters test, without a replay. */
  readonly parts: DigestParts;
  /** With `needs.textKeys`: a digest of each message's index text from `localStart` on (equal texts, equal keys). */
  readonly textKeys: string[] | null;
  /** With `needs.times`: each message's timestamp and first snapshot (`seq`) from `localStart` on. */
  readonly times: { readonly timestamps: Array<string | null>; readonly firstSeqs: Int32Array } | null;
  /** With `needs.phrases`: 1 for each message from `localStart` on that holds every phrase. */
  readonly phraseHits: Uint8Array | null;
  readonly skipped: SkippedSnapshot[];
  readonly unknownPartKinds: Array<[string, number]>;
}

/**
 * Message parts, flat: message `i` (from `localStart`) has the parts `starts[i] .. starts[i+1]-1`, each a
 * role (index into ROLES) and a tool (index into `toolNames`, -1 for none).
 */
export interface DigestParts {
  readonly starts: Int32Array;
  readonly roles: Uint8Array;
  readonly tools: Int32Array;
  readonly toolNames: string[];
}

class PartsBuilder {
  private readonly starts: number[] = [0];
  private readonly roles: number[] = [];
  private readonly tools: number[] = [];
  private readonly toolIds = new Map<string, number>();

  add(parts: readonly PartRole[]): void {
    for (const p of parts) {
      this.roles.push(ROLES.indexOf(p.role));
      let t = -1;
      if (p.toolName !== null) {
        t = this.toolIds.get(p.toolName) ?? this.toolIds.size;
        this.toolIds.set(p.toolName, t);
      }
      this.tools.push(t);
    }
    this.starts.push(this.roles.length);
  }

  finish(): DigestParts {
    return {
      starts: Int32Array.from(this.starts),
      roles: Uint8Array.from(this.roles),
      tools: Int32Array.from(this.tools),
      toolNames: [...this.toolIds.keys()],
    };
  }
}

/** The parts of message `position` of a digested run (`position >= localStart`). */
export function digestPartsAt(d: RunDigest, position: number): PartRole[] {
  const { starts, roles, tools, toolNames } = d.parts;
  const i = position - d.localStart;
  const out: PartRole[] = [];
  for (let k = starts[i]!; k < starts[i + 1]!; k++)
    out.push({ role: ROLES[roles[k]!]!, toolName: tools[k]! < 0 ? null : toolNames[tools[k]!]! });
  return out;
}

/**
 * Replays `runIds` (in corpus order; one conversation's, or a subset closed under "earlier in corpus
 * order") and digests each run as soon as it is replayed, so records do not pile up. `onRun` is told
 * after each run.
 */
export function digestRuns(
  source: HistorySource,
  runIds: readonly string[],
  terms: readonly string[],
  onRun?: (done: number) => void,
  needs: CorpusNeeds = {},
): RunDigest[] {
  const tok = tokenizerNamed(needs.tokenizer);
  const counter = new QueryTermCounter(terms, tok.forEachToken);
  const counts = counter.counts;
  const claimed = new Set<string>();
  const out: RunDigest[] = objectArray();
  source.plan(runIds);
  for (const runId of runIds) {
    const replay = source.replay(runId);
    const record = replay.messages;
    const strictKeys: string[] = new Array(record.length);
    for (let i = 0; i < record.length; i++) strictKeys[i] = record[i]!.keys.strict;
    const localStart = claimInherited(claimed, strictKeys);
    const lengths = new Int32Array(record.length - localStart);
    // built by hand, as arrays V8 holds alike whatever they hold (see objectArray): Array.prototype.map's
    // results deoptimized the optimized loop over runs
    const perTerm: number[][] = objectArray();
    for (let k = 0; k < terms.length; k++) perTerm.push(objectArray());
    const parts = new PartsBuilder();
    const textKeys = needs.textKeys ? ([] as string[]) : null;
    const times = needs.times ? { timestamps: [] as Array<string | null>, firstSeqs: new Int32Array(record.length - localStart) } : null;
    const phraseHits = needs.phrases?.length ? new Uint8Array(record.length - localStart) : null;
    for (let pos = localStart; pos < record.length; pos++) {
      const m = record[pos]!;
      const rendered = renderMessage(m.message);
      const text = searchText(rendered);
      lengths[pos - localStart] = counter.count(text);
      textKeys?.push(textKey(text));
      if (times) {
        times.timestamps.push(messageTimestamp(m.message));
        times.firstSeqs[pos - localStart] = m.firstSeq;
      }
      if (phraseHits && containsPhrases(text, needs.phrases!, tok)) phraseHits[pos - localStart] = 1;
      parts.add(rendered);
      for (let k = 0; k < terms.length; k++) if (counts[k]! > 0) perTerm[k]!.push(pos, counts[k]!);
    }
    out.push({
      runId,
      strictKeys,
      localStart,
      lengths,
      termCounts: int32Arrays(perTerm),
      parts: parts.finish(),
      textKeys,
      times,
      phraseHits,
      skipped: replay.skipped,
      unknownPartKinds: [...replay.unknownPartKinds],
    });
    onRun?.(out.length);
  }
  return out;
}

function int32Arrays(lists: readonly number[][]): Int32Array[] {
  const out: Int32Array[] = objectArray();
  for (const a of lists) out.push(Int32Array.from(a));
  return out;
}

/** The text key of an index text: sha-256, so that text crafted into a store cannot pass for another. */
export function textKey(text: string): string {
  return hash('sha256', text, 'base64');
}

/**
 * Digests groups of runs (see `conversationGroups`) taken one at a time from a queue that other threads
 * share, so that the threads finish together. `take` hands out a group index (past the end: done);
 * `onGroup` gets each group's digests as soon as they are made (a worker posts them then, so that the
 * main thread takes them in while it still works, not all at the end).
 */
export function digestGroups(
  source: HistorySource,
  groups: ReadonlyArray<readonly string[]>,
  take: () => number,
  terms: readonly string[],
  onGroup: (digests: RunDigest[]) => void,
  onRun?: (done: number) => void,
  needs: CorpusNeeds = {},
): void {
  let done = 0;
  for (let g = take(); g < groups.length; g = take()) {
    const before = done;
    const digests = digestRuns(source, groups[g]!, terms, (n) => onRun?.(before + n), needs);
    done += digests.length;
    onGroup(digests);
  }
}
