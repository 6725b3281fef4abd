import {
  type ColorChoice,
  colorEnabled,
  countLines,
  escapeForTerminal,
  humanHits,
  humanNotice,
  makeChalk,
  matchNoun,
  outcomeStats,
  plainLines,
  plural,
  runMatchesJson,
  runMatchesNdjson,
  runMatchLines,
  searchJson,
  searchNdjson,
  type SearchOutcome,
  summaryLine,
  terminalWidth,
  timeline,
  timelineJson,
  timelineLine,
  timelineNdjson,
  type TimelineKey,
  toolText,
  wrapText,
  withIndexJson,
  type IndexStanding,
} from '../lib.js';
import { EXIT_FOUND, EXIT_NOT_FOUND, UsageError } from './errors.js';
import { parseCount } from './flags.js';
import type { Io, TextStream } from './io.js';

/** The output side of the search flags. */
export interface SearchOutputFlags {
  format?: string;
  json?: boolean;
  ndjson?: boolean;
  plain?: boolean;
  count?: boolean;
  countBy?: string;
  color: ColorChoice;
  quiet?: boolean;
  expectNone?: boolean;
  expectMin?: string;
  runsWithMatches?: boolean;
  /** `--timeline` alone is true; `--timeline run` names the key. */
  timeline?: string | boolean;
}

export type SearchFormat = 'human' | 'tool' | 'json' | 'ndjson' | 'plain' | 'count';

/** How the outcome is printed and judged. */
export interface OutputPlan {
  readonly format: SearchFormat;
  readonly countBy: 'run' | null;
  readonly quiet: boolean;
  /** `--expect-none`: hits are a failure, printed to stderr. */
  readonly expectNone: boolean;
  /** `--expect-min n`. */
  readonly expectMin: number | null;
  readonly color: ColorChoice;
  /** `-l`: the runs with matches instead of the hits (as lines, or in the JSON format chosen). */
  readonly runsWithMatches: boolean;
  /** `--timeline`: matches per day or per run, drawn above the hits on a terminal and carried by --json and --ndjson. */
  readonly timeline: TimelineKey | null;
}

/** Output flags → plan; conflicting formats and impossible expectations are usage errors. */
export function outputPlan(f: SearchOutputFlags, maxMatches: number): OutputPlan {
  const chosen: Array<[string, SearchFormat]> = [];
  if (f.format !== undefined) chosen.push([`--format ${f.format}`, f.format as SearchFormat]);
  if (f.json) chosen.push(['--json', 'json']);
  if (f.ndjson) chosen.push(['--ndjson', 'ndjson']);
  if (f.plain) chosen.push(['--plain', 'plain']);
  if (f.count || f.countBy !== undefined) chosen.push([f.countBy !== undefined ? '--count-by' : '--count', 'count']);
  const distinct = chosen.filter(([, fmt], i) => chosen.findIndex(([, g]) => g === fmt) === i);
  if (distinct.length > 1) {
    throw new UsageError(`${distinct[0]![0]} and ${distinct[1]![0]} ask for different outputs; pass one`);
  }
  if (f.expectNone && f.expectMin !== undefined) throw new UsageError('--expect-none and --expect-min contradict each other; pass one');
  const expectMin = f.expectMin === undefined ? null : parseCount('--expect-min', f.expectMin, '--expect-min');
  const format = distinct[0]?.[1] ?? 'human';
  const runsWithMatches = Boolean(f.runsWithMatches);
  if (runsWithMatches && (format === 'tool' || format === 'count')) {
    throw new UsageError(`-l and ${distinct[0]![0]} ask for different outputs; pass one`);
  }
  if (maxMatches === 0 && !f.quiet && !runsWithMatches && (format === 'human' || format === 'plain')) {
    // the reference accepts max_matches=0 (tool, json, ndjson answer it); these formats would print nothing
    throw new UsageError(
      `-m 0 selects no hit to print${format === 'plain' ? ' with --plain' : ''}: use --count for the number of matching messages, or -q for the exit status alone`,
    );
  }
  return {
    format,
    countBy: f.countBy === 'run' ? 'run' : null,
    quiet: Boolean(f.quiet),
    expectNone: Boolean(f.expectNone),
    expectMin,
    color: f.color,
    runsWithMatches,
    timeline: f.timeline === undefined || f.timeline === false ? null : f.timeline === 'run' ? 'run' : 'day',
  };
}

/** The reference text and its newline: byte-exact for pipes and files (the parity format); a terminal still never gets raw controls. */
function toolPrintable(outcome: SearchOutcome, out: TextStream): string {
  const text = toolText(outcome);
  return (out.isTTY ? escapeForTerminal(text) : text) + '\n';
}

/** Prints the outcome in the planned format (nothing with `-q`). */
export function printOutcome(io: Io, outcome: SearchOutcome, plan: OutputPlan, standings: readonly IndexStanding[] = []): void {
  if (plan.quiet) return;
  const out: TextStream = plan.expectNone ? io.stderr : io.stdout;
  const write = (text: string): void => out.write(text);
  const lines = (ls: string[]): void => {
    if (ls.length) write(ls.join('\n') + '\n');
  };
  if (plan.runsWithMatches) {
    if (plan.format === 'json') write(JSON.stringify(withIndexJson(runMatchesJson(outcome), standings), null, 2) + '\n');
    else if (plan.format === 'ndjson') lines(runMatchesNdjson(outcome, standings));
    else lines(runMatchLines(outcome));
    io.reportWarnings(outcome.warnings);
    return;
  }
  switch (plan.format) {
    case 'tool':
      write(toolPrintable(outcome, out));
      break;
    case 'json': {
      const doc = searchJson(outcome);
      const full = plan.timeline ? { ...doc, timeline: timelineJson(timeline(outcome, plan.timeline)) } : doc;
      write(JSON.stringify(withIndexJson(full, standings), null, 2) + '\n');
      break;
    }
    case 'ndjson': {
      const events = searchNdjson(outcome, standings);
      // the timeline event goes before the closing summary
      if (plan.timeline) events.splice(events.length - 1, 0, timelineNdjson(timeline(outcome, plan.timeline)));
      lines(events);
      break;
    }
    case 'plain':
      lines(plainLines(outcome));
      break;
    case 'count':
      lines(countLines(outcome, plan.countBy));
      break;
    case 'human': {
      if (plan.timeline && out.isTTY) write(timelineLine(timeline(outcome, plan.timeline), terminalWidth(out, io.env) ?? 80) + '\n');
      const text = humanHits(outcome, { chalk: makeChalk(colorEnabled(plan.color, out, io.env)), width: terminalWidth(out, io.env) });
      if (text) write(text + '\n');
      const notice = humanNotice(outcome);
      if (notice !== null) io.err(wrapText(notice, terminalWidth(io.stderr, io.env), '  ') + '\n');
      break;
    }
  }
  io.reportWarnings(outcome.warnings);
  if (plan.format === 'human') io.err(wrapText(summaryLine(outcome), terminalWidth(io.stderr, io.env), '  ') + '\n');
}

/**
 * The exit status of a search under the plan: the checks judge every matching message (`matches`, like
 * `grep -c`); without one, 0 when a hit is shown and 1 otherwise, as the reference's parity answers say.
 */
export function exitStatus(shown: number, matches: number, plan: OutputPlan): number {
  if (plan.expectNone) return matches === 0 ? EXIT_FOUND : EXIT_NOT_FOUND;
  if (plan.expectMin !== null) return matches >= plan.expectMin ? EXIT_FOUND : EXIT_NOT_FOUND;
  return shown > 0 ? EXIT_FOUND : EXIT_NOT_FOUND;
}

/** Sets the exit status, saying on stderr which expectation failed. */
export function judge(io: Io, outcome: SearchOutcome, plan: OutputPlan): void {
  const stats = outcomeStats(outcome);
  const { matches } = stats;
  // with -l, what is shown is the runs
  const hits = plan.runsWithMatches ? stats.matchingRuns : stats.hits;
  const status = exitStatus(hits, matches, plan);
  if (status !== EXIT_FOUND && !plan.quiet) {
    const found = `${plural(matches, matchNoun(outcome))} found${matches > hits ? ` (${hits} shown)` : ''}`;
    if (plan.expectNone) io.err(`convsearch: --expect-none failed: ${found}\n`);
    else if (plan.expectMin !== null) io.err(`convsearch: --expect-min ${plan.expectMin} failed: ${found}\n`);
  }
  io.status = status;
}
