/**
 * Issue 21's table of targets, every row measured in this one bench run against the floors of the same
 * run: what each measure is now, what it should be, and whether it holds. A row whose phase did not
 * run (the servers with --no-backends) says so instead of a figure.
 */
import { fmt } from './phase.js';

export interface TargetInputs {
  /** The read + JSON.parse floor of the store (ms). */
  floor: number;
  /** In-process search with nothing changed (stamp only), the "warm" of the rows. */
  warm: number;
  afterAppend: number;
  afterEdit: number;
  /** Whole-process medians, and `node -e 0`'s. */
  node: number;
  cliSearch: number;
  cliRuns: number;
  cliConversations: number;
  noIndex: number;
  build: number;
  /** `noIndex` and `build` over the floor: the median of the ratios taken in each round (bench.ts inRounds). */
  ratios: { readonly noIndex: number; readonly build: number };
  /** Peak RSS of the build per scaling store. */
  buildRss: ReadonlyArray<{ label: string; mb: number }>;
  huge: { messageMb: number; buildRssMb: number; noIndexRssMb: number } | null;
  /** Whole-process warm search medians per backend (sqlite included); null with --no-backends. */
  backends: ReadonlyMap<string, number> | null;
}

interface Row {
  measure: string;
  now: string;
  target: string;
  holds: boolean | null;
}

export function targetsTable(m: TargetInputs): string[] {
  const rows: Row[] = [];
  const within = (measure: string, value: number, limit: number, now: string, target: string): void => {
    rows.push({ measure, now, target, holds: value <= limit });
  };
  within('search after one appended run', m.afterAppend, m.warm + 100, `${fmt(m.afterAppend)} (warm ${fmt(m.warm)})`, '≤ warm + 100 ms');
  within(
    'search after an in-place edit of one old snapshot',
    m.afterEdit,
    m.warm + 0.25 * m.floor,
    `${fmt(m.afterEdit)} = warm + ${((m.afterEdit - m.warm) / m.floor).toFixed(2)} × floor`,
    '≤ warm + 0.25 × floor',
  );
  within('search, nothing changed, whole process', m.cliSearch - m.node, 50, `node + ${fmt(m.cliSearch - m.node)}`, '≤ node + 50 ms');
  within('`runs` from the index, whole process', m.cliRuns - m.node, 60, `node + ${fmt(m.cliRuns - m.node)}`, '≤ node + 60 ms');
  within(
    '`conversations` from the index, whole process',
    m.cliConversations - m.node,
    60,
    `node + ${fmt(m.cliConversations - m.node)}`,
    '≤ node + 60 ms',
  );
  within('search with no index', m.ratios.noIndex, 0.5, `${m.ratios.noIndex.toFixed(2)} × floor (${fmt(m.noIndex)})`, '≤ 0.5 × floor');
  within('index build', m.ratios.build, 1.5, `${m.ratios.build.toFixed(2)} × floor (${fmt(m.build)})`, '≤ 1.5 × floor (aim 1.25)');
  for (const r of m.buildRss) within(`peak RSS of a build: ${r.label}`, r.mb, 300, `${r.mb.toFixed(0)} MB`, '≤ 300 MB');
  if (m.huge) {
    const limit = 3 * m.huge.messageMb + 150;
    for (const [what, rss] of [
      ['index build', m.huge.buildRssMb],
      ['--no-index search', m.huge.noIndexRssMb],
    ] as const)
      within(
        `one ${m.huge.messageMb.toFixed(0)} MB message: ${what} peak RSS`,
        rss,
        limit,
        `${rss.toFixed(0)} MB`,
        `≤ 3 × size + 150 MB = ${limit.toFixed(0)} MB`,
      );
  }
  const sqlite = m.backends?.get('sqlite');
  for (const kind of ['postgres', 'redis']) {
    const ms = m.backends?.get(kind);
    if (ms === undefined || sqlite === undefined)
      rows.push({
        measure: `${kind} search, nothing changed`,
        now: 'not run (--no-backends)',
        target: '≤ SQLite warm + 100 ms',
        holds: null,
      });
    else within(`${kind} search, nothing changed`, ms, sqlite + 100, `${fmt(ms)} (SQLite ${fmt(sqlite)})`, '≤ SQLite warm + 100 ms');
  }
  const mark = (h: boolean | null): string => (h === null ? '–' : h ? 'holds' : 'misses');
  return [
    '| issue 21 target | now | target | |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.measure} | ${r.now} | ${r.target} | ${mark(r.holds)} |`),
  ];
}
