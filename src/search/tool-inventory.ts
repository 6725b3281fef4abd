/**
 * `tools`: which tools the runs in scope called, from their searchable records (each message once,
 * under the run that first persisted it, as a search of the same scope sees it).
 */
import { messageTime } from '../history/time.js';
import type { GlobSet } from '../text/glob.js';
import type { Corpus, DocumentFacts } from './corpus.js';
import { factsOf, type SearchContext } from './filters.js';
import { collapseKey } from './collapse.js';

export interface ToolUse {
  readonly name: string;
  /** Tool-call, tool-return and retry parts naming the tool. */
  readonly calls: number;
  readonly returns: number;
  readonly retries: number;
  /** Runs whose messages hold any of them. */
  readonly runs: number;
  /** The earliest and latest time (see `messageTime`) of a message holding one; null when none has a time. */
  readonly firstSeen: number | null;
  readonly lastSeen: number | null;
}

export interface InventoryFilter {
  /** The run's agent name matches one of these patterns. */
  readonly agents?: GlobSet;
  /** Only messages made within these bounds (microseconds; a message without a time is left out). */
  readonly since?: number | null;
  readonly until?: number | null;
  /** Count a message whose text repeats an earlier one of its run (a copy compaction left) once. */
  readonly collapse?: boolean;
}

interface Tally {
  calls: number;
  returns: number;
  retries: number;
  runs: Set<string>;
  first: number | null;
  last: number | null;
}

/** The tools of the corpus's messages, by name. */
export function toolInventory(corpus: Corpus, filter: InventoryFilter, ctx: SearchContext): ToolUse[] {
  const tallies = new Map<string, Tally>();
  const bounded = (filter.since ?? null) !== null || (filter.until ?? null) !== null;
  corpus.sections.forEach((section, si) => {
    const agent = section.run.agentName;
    if (filter.agents?.size && (agent === null || !filter.agents.has(agent))) return;
    const facts: readonly DocumentFacts[] = corpus.sectionFacts
      ? corpus.sectionFacts(si)
      : Array.from({ length: section.end - section.start }, (_, k) => factsOf(corpus, si, section.start + k));
    const seen = new Set<string>();
    facts.forEach((f, k) => {
      const named = f.parts.filter(
        (p) => p.toolName !== null && (p.role === 'tool-call' || p.role === 'tool-return' || p.role === 'retry'),
      );
      if (named.length === 0) return;
      const time = messageTime(f.timestamp, () => ctx.snapshotTime?.(section.run.runId, f.firstSeq) ?? null);
      if (bounded && (time === null || (filter.since != null && time < filter.since) || (filter.until != null && time > filter.until)))
        return;
      if (filter.collapse) {
        const key = collapseKey(corpus, si, section.start + k);
        if (seen.has(key)) return;
        seen.add(key);
      }
      for (const p of named) {
        let t = tallies.get(p.toolName!);
        if (!t) tallies.set(p.toolName!, (t = { calls: 0, returns: 0, retries: 0, runs: new Set(), first: null, last: null }));
        if (p.role === 'tool-call') t.calls++;
        else if (p.role === 'tool-return') t.returns++;
        else t.retries++;
        t.runs.add(section.run.runId);
        if (time !== null) {
          if (t.first === null || time < t.first) t.first = time;
          if (t.last === null || time > t.last) t.last = time;
        }
      }
    });
  });
  return [...tallies]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, t]) => ({
      name,
      calls: t.calls,
      returns: t.returns,
      retries: t.retries,
      runs: t.runs.size,
      firstSeen: t.first,
      lastSeen: t.last,
    }));
}
