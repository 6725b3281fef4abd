import type { SearchOutcome } from '../search/search.js';

export interface OutcomeStats {
  readonly hits: number;
  /** Messages searched (the reference's "persisted messages"). */
  readonly messages: number;
  /** Runs whose sections were searched. */
  readonly runs: number;
  readonly skippedSnapshots: number;
}

export function outcomeStats(outcome: SearchOutcome): OutcomeStats {
  return {
    hits: outcome.kind === 'found' ? outcome.hits.length : 0,
    messages: outcome.kind === 'found' || outcome.kind === 'no-matches' ? outcome.total : 0,
    runs: outcome.runs.length,
    skippedSnapshots: outcome.warnings.filter((w) => w.kind === 'unreadable-snapshot').length,
  };
}

const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? '' : 's'}`;

/** `3 hits in 120 messages across 4 runs (0 skipped snapshots)`: the human summary on stderr. */
export function summaryLine(outcome: SearchOutcome): string {
  const s = outcomeStats(outcome);
  return `${plural(s.hits, 'hit')} in ${plural(s.messages, 'message')} across ${plural(s.runs, 'run')} (${plural(s.skippedSnapshots, 'skipped snapshot')})`;
}
