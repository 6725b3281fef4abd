import type { SearchOutcome } from '../search/search.js';

export interface OutcomeStats {
  /** Hits selected for display (under `-m` and `-C`). */
  readonly hits: number;
  /** Every matching message in scope, shown or not (see MatchCounts). */
  readonly matches: number;
  /** Runs holding at least one matching message. */
  readonly matchingRuns: number;
  /** Messages searched (the reference's "persisted messages"). */
  readonly messages: number;
  /** Runs whose sections were searched. */
  readonly runs: number;
  readonly skippedSnapshots: number;
}

export function outcomeStats(outcome: SearchOutcome): OutcomeStats {
  return {
    hits: outcome.kind === 'found' ? outcome.hits.length : 0,
    matches: outcome.matches.total,
    matchingRuns: outcome.matches.byRun.length,
    messages: outcome.kind === 'found' || outcome.kind === 'no-matches' ? outcome.searched : 0,
    runs: outcome.runCount,
    skippedSnapshots: outcome.warnings.filter((w) => w.kind === 'unreadable-snapshot').length,
  };
}

/** What the counts count: matching messages, or with `--collapse` their distinct texts. */
export function matchNoun(outcome: SearchOutcome): string {
  return outcome.options.collapse ? 'distinct matching text' : 'matching message';
}

export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/**
 * The human summary on stderr: `showing 10 of 147 matching messages in 12 runs (searched 1200 messages
 * in 40 runs)`, with skipped snapshots named when there are any.
 */
export function summaryLine(outcome: SearchOutcome): string {
  const s = outcomeStats(outcome);
  const where = s.matchingRuns > 0 ? ` in ${plural(s.matchingRuns, 'run')}` : '';
  const skipped = s.skippedSnapshots > 0 ? `; ${plural(s.skippedSnapshots, 'unreadable snapshot')} skipped` : '';
  const shown = s.matches > 0 ? `showing ${s.hits} of ` : '';
  // said once per search: a ranking other than the reference's must not pass for it
  const tokenizer = outcome.options.tokenizer === 'cjk' ? '; tokenizer cjk: ranking is off-parity with the reference' : '';
  return `${shown}${plural(s.matches, matchNoun(outcome))}${where} (searched ${plural(s.messages, 'message')} in ${plural(s.runs, 'run')}${skipped}${tokenizer})`;
}
