/**
 * Every default of the library and the command line, in one place: the CLI's flags show and use these,
 * and a library call that leaves a field out gets the same.
 */
export const DEFAULTS = {
  /** The file name looked for when no store is named: the harness's documentation's and CLAI 2's (api/discover.ts). */
  db: 'sessions.db',
  /** `max_matches` of the reference tool: hits selected. */
  maxMatches: 10,
  /** `context_lines` of the reference tool: messages shown on each side of a hit. */
  contextLines: 5,
  /** The reference's BM25 parameters. */
  bm25: { k1: 1.5, b: 0.75 },
  /** Messages shown on each side of `show --at`. */
  showContext: 5,
  /** Order of `runs`: corpus order. */
  runSort: 'started',
  /** Order of `conversations`: by first start. */
  conversationSort: 'started',
  /** Order of the hits shown: rank. */
  hitSort: 'score',
  /** Colour on a terminal. */
  color: 'auto',
} as const;
