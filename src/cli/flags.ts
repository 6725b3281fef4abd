import { Option } from 'commander';
import {
  checkB,
  checkK1,
  checkNonNegative,
  DEFAULTS,
  noStoreMessage,
  parseTimeBound,
  RequestError,
  ROLES,
  resolveStores,
  type SessionOptions,
  type StoreResolution,
} from '../lib.js';
import { CommandError, UsageError } from './errors.js';

/** What a flag's value (or an argument) completes to in the shell scripts. */
export type ValueKind =
  | { readonly kind: 'none' }
  | { readonly kind: 'any' }
  | { readonly kind: 'file' }
  | { readonly kind: 'run' }
  | { readonly kind: 'conversation' }
  | { readonly kind: 'tool' }
  | { readonly kind: 'agent' }
  | { readonly kind: 'choices'; readonly choices: readonly string[] };

/**
 * One flag of the command line, declared once: commands compose these, the completion scripts are
 * generated from them, and defaults come from the library's {@link DEFAULTS}. Values are parsed by the
 * command (with `parse` functions below) in the reference's order, not by commander.
 */
export interface Flag {
  /** As commander takes it: `-m, --max-matches <n>`, `--json`, `--no-index`. */
  readonly spelling: string;
  readonly help: string;
  /** Shown in the help and used when the flag is absent. */
  readonly default?: string;
  /** Values commander accepts (and the scripts complete). */
  readonly choices?: readonly string[];
  /** May be given several times, each time a comma-separated list (`whole`: each time one value, commas and all). */
  readonly repeatable?: boolean | 'whole';
  /** What the value completes to when `choices` does not say. */
  readonly completes?: ValueKind;
}

const FILE: ValueKind = { kind: 'file' };
const RUN: ValueKind = { kind: 'run' };
const CONVERSATION: ValueKind = { kind: 'conversation' };
const AGENT: ValueKind = { kind: 'agent' };

const INDEX_PATH =
  "persistent index file, new or convsearch's own, or a postgres:// URL of a shared index kept by 'convsearch index sync' (default: $CONVSEARCH_INDEX, else one file per store under $XDG_CACHE_HOME/convsearch, else ~/.cache, else $TMPDIR)";

/** Every flag of every command. A command may reword a flag's help for its own use, nothing else. */
export const FLAGS = {
  version: { spelling: '-V, --version', help: 'output the version number' },
  db: {
    spelling: '--db <path>',
    help: "step store to read (default: $CONVSEARCH_DB, else ./sessions.db, else CLAI 2's store: see 'convsearch where'); repeatable: several stores are read as one",
    completes: FILE,
    repeatable: 'whole',
  },
  index: { spelling: '--index <path|url>', help: INDEX_PATH, completes: FILE },
  rebuild: {
    spelling: '--rebuild',
    help: "lay each store's part of the shared index out anew and build it from the store (after a damage notice)",
  },
  noIndex: { spelling: '--no-index', help: 'replay the store for this search instead of using the index (same results, slower)' },
  verify: {
    spelling: '--verify',
    help: "re-read and digest the whole store before using the index, even when the store's stamp says nothing changed; exit 2 if rows the index read changed unseen",
  },
  fresh: {
    spelling: '--fresh',
    help: 'with a shared index (postgres://) that is behind a store: answer from the store instead, as --no-index would (one notice); a local index is always brought up to date first',
  },
  conversation: {
    spelling: '--conversation <id>',
    help: "search this conversation's runs (the reference's default scope)",
    completes: CONVERSATION,
  },
  scope: { spelling: '--scope <scope>', help: 'all: every run in the store', choices: ['all', 'conversation'] },
  run: { spelling: '--run <id>', help: "search only this run's full record", completes: RUN },
  queryFile: {
    spelling: '--query-file <path>',
    help: "read the query words from a file ('-': standard input), so that words starting with a dash or another program's output need no quoting",
    completes: FILE,
  },
  maxMatches: { spelling: '-m, --max-matches <n>', help: 'most hits to select', default: String(DEFAULTS.maxMatches) },
  context: { spelling: '-C, --context <n>', help: 'messages of context around each hit', default: String(DEFAULTS.contextLines) },
  bm25K1: { spelling: '--bm25-k1 <x>', help: 'BM25 term-frequency saturation', default: String(DEFAULTS.bm25.k1) },
  bm25B: { spelling: '--bm25-b <x>', help: 'BM25 length normalization, 0..1', default: String(DEFAULTS.bm25.b) },
  role: {
    spelling: '--role <role>',
    help: `only messages with a part of this role count as hits: ${ROLES.join(', ')} (repeatable, or comma-separated)`,
    repeatable: true,
    // comma-separated and repeatable, so not commander choices
    completes: { kind: 'choices', choices: ROLES },
  },
  tool: {
    spelling: '--tool <name>',
    help: "only messages with a tool call, tool return or retry of this tool count: repeatable, comma-separated, globs ('delete_*,drop_?')",
    repeatable: true,
    completes: { kind: 'tool' },
  },
  minScore: { spelling: '--min-score <x>', help: 'only hits scoring at least x count' },
  format: {
    spelling: '--format <format>',
    help: 'human (default), tool (the reference text, byte for byte), json, ndjson or plain',
    choices: ['human', 'tool', 'json', 'ndjson', 'plain'],
  },
  json: { spelling: '--json', help: 'one JSON document (schema_version 1)' },
  ndjson: { spelling: '--ndjson', help: 'one JSON event per line' },
  plain: { spelling: '--plain', help: 'one line per hit: run_id:message_index:score:text' },
  count: { spelling: '--count', help: 'print the number of matching messages: all of them, whatever -m and -C show (like grep -c)' },
  countBy: { spelling: '--count-by <key>', help: 'print run_id:count of matching messages per run (implies --count)', choices: ['run'] },
  color: {
    spelling: '--color <when>',
    help: 'colour: auto (a terminal whose TERM is not dumb), always or never; beats NO_COLOR and FORCE_COLOR',
    choices: ['auto', 'always', 'never'],
    default: DEFAULTS.color,
  },
  quiet: { spelling: '-q, --quiet', help: 'print nothing; only set the exit status' },
  expectNone: { spelling: '--expect-none', help: 'fail (exit 1) when any message matches; the hits go to stderr' },
  expectMin: { spelling: '--expect-min <n>', help: 'fail (exit 1) unless at least n messages match' },
  wide: { spelling: '--wide', help: 'on a terminal, every column at full width, even past its edge (default: columns left out to fit)' },
  agent: {
    spelling: '--agent <name>',
    help: "only runs of this agent: repeatable, comma-separated, globs ('deploy-*')",
    repeatable: true,
    completes: AGENT,
  },
  since: {
    spelling: '--since <when>',
    help: "only runs started at or after this ISO 8601 date or time (UTC unless it has an offset), or a duration back from now ('7d')",
  },
  until: { spelling: '--until <when>', help: 'only runs started at or before it (a bare date includes that whole day)' },
  tokenizer: {
    spelling: '--tokenizer <name>',
    help: "default (the reference's \\w+ words, parity) or cjk (Intl.Segmenter words, Hangul bigrams, Katakana width folded; off-parity)",
    choices: ['default', 'cjk'],
    default: 'default',
  },
  phrase: {
    spelling: '--phrase <words>',
    help: 'only messages holding these words as consecutive tokens count (repeatable; without query words, the phrases are the query)',
    repeatable: 'whole',
  },
  collapse: {
    spelling: '--collapse',
    help: 'fold hits whose text repeats a better hit (compaction re-indexes the kept tail) into that hit, listing every location; counts count distinct texts. Off by default so that the default answers like the reference; --format tool ignores it',
  },
  runsWithMatches: {
    spelling: '-l, --runs-with-matches',
    help: 'print the runs holding a matching message instead of hits: run id, conversation, agent, matching messages, best score, tab-separated, best first (--json, --ndjson too)',
  },
  explain: {
    spelling: '--explain',
    help: "under each hit, each query term's tf, df, idf and share of the score, with N, the lengths, k1 and b (human, --json, --ndjson)",
  },
  parent: {
    spelling: '--parent <run>',
    help: 'only this run and the runs it delegated to, transitively (its delegate tree)',
    completes: RUN,
  },
  limit: { spelling: '--limit <n>', help: 'at most n runs (after sorting)' },
  sort: {
    spelling: '--sort <key>',
    help: 'started (corpus order) or messages (most first)',
    choices: ['started', 'messages'],
    default: DEFAULTS.runSort,
  },
  reverse: { spelling: '--reverse', help: 'the opposite order (latest first, or fewest messages first), before --limit' },
  at: { spelling: '--at <n>', help: 'show only message [n] and its context (search hits name it: run_id:n)' },
  timeline: {
    spelling: '--timeline [by]',
    help: 'above the hits on a terminal, a sparkline of matching messages per day (a run counts on the day it started) or per run (--timeline run), with the date range; in --json and --ndjson, the same counts as data',
    choices: ['day', 'run'],
  },
  output: { spelling: '-o, --output <path>', help: "file to write ('-': standard output)", completes: FILE },
  includeInterrupted: {
    spelling: '--include-interrupted',
    help: 'also list what interrupted snapshots held beyond the record (never searchable)',
  },
} as const satisfies Record<string, Flag>;

/** A flag as one command uses it: in its own words, and without the default when the command has none. */
export function reworded(flag: Flag, help: string, options: { readonly withoutDefault?: boolean } = {}): Flag {
  const { default: _, ...rest } = flag;
  return options.withoutDefault ? { ...rest, help } : { ...flag, help };
}

/** The hit filters, in search's order, as report and export offer them (search words some of them its own way). */
export const HIT_FILTERS: readonly Flag[] = [
  FLAGS.role,
  FLAGS.tool,
  FLAGS.minScore,
  FLAGS.agent,
  FLAGS.parent,
  FLAGS.since,
  FLAGS.until,
  FLAGS.phrase,
];

/** `--sort` as one command orders its output: its keys, its default, in its words. */
export function sortedBy(keys: readonly string[], byDefault: string, help: string): Flag {
  return { ...FLAGS.sort, help, choices: keys, default: byDefault };
}

/** Accumulates a repeatable flag; each use may also hold a comma-separated list. */
function collect(value: string, previous: string[] = []): string[] {
  return previous.concat(
    value
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== ''),
  );
}

/** The commander option for a flag. */
export function option(flag: Flag): Option {
  const o = new Option(flag.spelling, flag.help);
  if (flag.choices) o.choices(flag.choices);
  if (flag.default !== undefined) o.default(flag.default);
  if (flag.repeatable === 'whole') o.argParser((value: string, previous: string[] = []) => previous.concat(value));
  else if (flag.repeatable) o.argParser(collect);
  return o;
}

// ---- value parsers: syntax here, the library's own checks where it has them -------------------------

/** A library check failing on a flag's value is a usage error of that flag. */
function asUsage<T>(check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (e instanceof RequestError) throw new UsageError(e.message);
    throw e;
  }
}

function integer(flag: string, raw: string): number {
  if (!/^[+-]?\d+$/.test(raw.trim())) throw new UsageError(`${flag} expects an integer, got ${JSON.stringify(raw)}`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new UsageError(`${flag} is out of range: ${raw}`);
  return n;
}

/** An integer that must not be negative; `name` is what the reference calls it in its message. */
export function parseCount(flag: string, raw: string, name: string): number {
  const n = integer(flag, raw);
  return asUsage(() => checkNonNegative(name, n));
}

function parseNumber(flag: string, raw: string): number {
  const t = raw.trim().toLowerCase();
  // Python float() spellings: nan/inf/infinity with optional sign
  const special: Record<string, number> = {
    nan: NaN,
    '+nan': NaN,
    '-nan': NaN,
    inf: Infinity,
    '+inf': Infinity,
    infinity: Infinity,
    '+infinity': Infinity,
    '-inf': -Infinity,
    '-infinity': -Infinity,
  };
  if (Object.hasOwn(special, t)) return special[t]!; // not `in`: 'constructor' would be found on Object.prototype
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) throw new UsageError(`${flag} expects a number, got ${JSON.stringify(raw)}`);
  return Number(t);
}

export function parseK1(raw: string): number {
  const k1 = parseNumber('--bm25-k1', raw);
  return asUsage(() => checkK1(k1));
}

export function parseB(raw: string): number {
  const b = parseNumber('--bm25-b', raw);
  return asUsage(() => checkB(b));
}

export function parseScore(flag: string, raw: string): number {
  const x = parseNumber(flag, raw);
  if (!Number.isFinite(x)) throw new UsageError(`${flag} expects a finite number, got ${JSON.stringify(raw)}`);
  return x;
}

/** A non-negative integer written without a sign. */
export function parseLimit(flag: string, raw: string): number {
  if (!/^\d+$/.test(raw.trim())) throw new UsageError(`${flag} expects a non-negative integer, got ${JSON.stringify(raw)}`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new UsageError(`${flag} is out of range: ${raw}`);
  return n;
}

/** `--since`/`--until` as microseconds (null when not given); a bound that does not parse, or an empty range, is a usage error. */
export function timeBounds(
  f: { readonly since?: string; readonly until?: string },
  now: number = Date.now() * 1000,
): { since: number | null; until: number | null } {
  const bound = (flag: string, raw: string | undefined, end: boolean): number | null => {
    if (raw === undefined) return null;
    const t = parseTimeBound(raw, end, now);
    if (t === null) {
      throw new UsageError(
        `${flag} expects an ISO 8601 date or time (2025-03-01, 2025-03-01T09:30Z) or a duration (90m, 7d), got ${JSON.stringify(raw)}`,
      );
    }
    return t;
  };
  const since = bound('--since', f.since, false);
  const until = bound('--until', f.until, true);
  if (since !== null && until !== null && since > until)
    throw new UsageError(`--since ${f.since} is after --until ${f.until}: nothing can match`);
  return { since, until };
}

/**
 * `--db` (each use), else `$CONVSEARCH_DB` when non-empty, else the first default place holding a step
 * store (`./sessions.db`, then CLAI 2's; see resolveStores); with none of them, how to name one and
 * every place looked at.
 */
export function resolveDb(flag: readonly string[] | undefined, env: NodeJS.ProcessEnv, cwd: string): StoreResolution {
  const r = resolveStores(flag, env, cwd);
  if (r.source === 'none') throw new CommandError(noStoreMessage(r.looked));
  return r;
}

/** `--index <path|url>` (else `$CONVSEARCH_INDEX`) / `--no-index` → which sidecar index the session reads through. */
export function indexChoice(
  flags: { readonly index?: string | false; readonly verify?: boolean; readonly fresh?: boolean },
  env: NodeJS.ProcessEnv,
): NonNullable<SessionOptions['index']> {
  if (flags.index === false) return false;
  return { path: flags.index ?? (env.CONVSEARCH_INDEX || undefined), verify: flags.verify === true, fresh: flags.fresh === true };
}
