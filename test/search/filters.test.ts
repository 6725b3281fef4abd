/**
 * Hit filters of issue 12 §2: --agent, --parent, --since/--until, --phrase. Each is checked against the
 * unfiltered answer filtered here by hand (with -C 0 every matching message is a hit), on every path:
 * the index, --no-index, and the digests with one and two threads; with the scopes, --role/--tool,
 * --collapse and the counts.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cli } from '../helpers/cli.js';
import { utc } from '../../scripts/lib/messages.js';
import { parseTimeBound, messageTime } from '../../src/history/time.js';
import { containsPhrases } from '../../src/search/filters.js';
import { tokenize } from '../../src/text/tokenize.js';
import { buildCompactionStore, buildUndatedStore } from '../helpers/compaction-store.js';
import { checkShape, SEARCH_DOC } from '../helpers/shapes.js';

interface HitDoc {
  run_id: string;
  agent_name: string | null;
  message_index: number;
  score: number;
  timestamp: string | null;
  text: string;
  roles: string[];
}
interface Doc {
  hits: HitDoc[];
  summary: { total_matches: number };
  filters: Record<string, unknown>;
  error: { kind: string; id: string; suggestions: string[] } | null;
}

let db: string;
let undated: string;
before(() => {
  db = buildCompactionStore();
  undated = buildUndatedStore();
});

const WORDS = ['node', 'policy', 'cache', 'lru', 'runbook', 'eviction'];
/** A search over the compaction store on every path; the outputs must be the same bytes. */
async function run(store: string, args: string[]): Promise<{ stdout: string; stderr: string; status: number | null }> {
  const indexed = await cli(['search', ...args, '--db', store]);
  // the plain replay, and the digests (two threads: the main one digests its share too)
  for (const [extra, env] of [
    [['--no-index'], {}],
    [['--no-index'], { CONVSEARCH_THREADS: '2' }],
  ] as Array<[string[], Record<string, string>]>) {
    const other = await cli(['search', ...args, '--db', store, ...extra], { env });
    assert.equal(other.stdout, indexed.stdout, `${args.join(' ')} ${JSON.stringify(env)}`);
    assert.equal(other.status, indexed.status);
  }
  return indexed;
}
const doc = async (store: string, args: string[]): Promise<Doc> => {
  const r = await run(store, [...args, '-C', '0', '-m', '1000', '--json']);
  const d = JSON.parse(r.stdout) as Doc;
  checkShape(d, SEARCH_DOC);
  return d;
};
const key = (h: HitDoc): string => `${h.run_id}[${h.message_index}]`;

/** The unfiltered matches, filtered by `keep`; the filtered search must give exactly those, in rank order, and count them. */
const unfiltered = new Map<string, Promise<Doc>>();
async function agrees(args: string[], filterArgs: string[], keep: (h: HitDoc) => boolean, store = db): Promise<HitDoc[]> {
  const k = JSON.stringify([store, args]);
  if (!unfiltered.has(k)) unfiltered.set(k, doc(store, args));
  const all = await unfiltered.get(k)!;
  const want = all.hits.filter(keep);
  const got = await doc(store, [...args, ...filterArgs]);
  assert.deepEqual(got.hits.map(key), want.map(key), filterArgs.join(' '));
  assert.equal(got.summary.total_matches, want.length);
  assert.equal((await run(store, [...args, ...filterArgs, '--count'])).stdout, `${want.length}\n`);
  return want;
}

describe('time bounds and phrases (units)', () => {
  const now = utc('2026-03-01T12:00:00Z');
  test('ISO dates and times, durations back from now', () => {
    assert.equal(parseTimeBound('2026-03-01', false, now), utc('2026-03-01T00:00:00Z'));
    assert.equal(parseTimeBound('2026-03-01', true, now), utc('2026-03-01T23:59:59.999999Z'));
    assert.equal(parseTimeBound('2026-03-01T10:30+01:00', false, now), utc('2026-03-01T09:30:00Z'));
    assert.equal(parseTimeBound('90m', false, now), utc('2026-03-01T10:30:00Z'));
    assert.equal(parseTimeBound('1h30m', true, now), utc('2026-03-01T10:30:00Z'));
    assert.equal(parseTimeBound('7d', false, now), utc('2026-02-22T12:00:00Z'));
    assert.equal(parseTimeBound('2w', false, now), utc('2026-02-15T12:00:00Z'));
    assert.equal(parseTimeBound('45s', false, now), utc('2026-03-01T11:59:15Z'));
    for (const bad of ['yesterday', '7', '7x', '-3d', '2026-13-01', '']) assert.equal(parseTimeBound(bad, false, now), null, bad);
  });

  test('a message without a timestamp is dated by its snapshot', () => {
    assert.equal(
      messageTime('2026-03-01T09:00:01Z', () => assert.fail('not asked')),
      utc('2026-03-01T09:00:01Z'),
    );
    assert.equal(
      messageTime(null, () => '2026-03-01T15:00:00+00:00'),
      utc('2026-03-01T15:00:00Z'),
    );
    assert.equal(
      messageTime('garbled', () => null),
      null,
    );
  });

  test('phrases: consecutive tokens, case and punctuation as the tokenizer sees them', () => {
    assert.ok(containsPhrases('cachectl set-policy LRU --node 3', [['set', 'policy', 'lru']]));
    assert.ok(containsPhrases('a b c', [['a', 'b'], ['c']]));
    assert.ok(!containsPhrases('a b c', [['a', 'c']]));
    assert.ok(!containsPhrases('a b', [['a', 'b'], ['d']]), 'every phrase must be there');
    assert.ok(!containsPhrases('policy', [['policy', 'set']]));
  });
});

describe('search filters agree with the unfiltered answer, on every path', () => {
  const all = [...WORDS, '--scope', 'all'];

  test('--agent: names, comma lists and globs', async () => {
    await agrees(all, ['--agent', 'auditor'], (h) => h.agent_name === 'auditor');
    await agrees(all, ['--agent', 'res*,nobody'], (h) => h.agent_name === 'researcher');
    await agrees(all, ['--agent', 'aud?tor', '--agent', 'researcher'], (h) => h.agent_name !== null);
    const none = await run(db, [...all, '--agent', 'nobody']);
    assert.equal(none.status, 1);
    assert.match(none.stderr, /no hits: \d+ matching messages, all removed by --agent nobody/);
  });

  test('--parent: the run and its delegate tree; an unknown run is an error with did-you-mean', async () => {
    await agrees(all, ['--parent', 'lx-2'], (h) => h.run_id === 'lx-2' || h.run_id === 'ly-1');
    await agrees(all, ['--parent', 'ly-1'], (h) => h.run_id === 'ly-1');
    const bad = await run(db, [...all, '--parent', 'lx-9']);
    assert.equal(bad.status, 2);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, /^convsearch: error: no run 'lx-9' in the store; did you mean lx-1, lx-2, ly-1\?\n$/);
    const json = await run(db, [...all, '--parent', 'lx-9', '--json']);
    assert.equal(json.status, 2);
    assert.equal((JSON.parse(json.stdout) as Doc).error!.id, 'lx-9');
  });

  test('--since/--until: inclusive bounds on the message time', async () => {
    const lo = '2026-02-03T08:00:14Z';
    const hi = '2026-02-03T08:00:34Z';
    const within = (h: HitDoc) =>
      h.timestamp !== null && Date.parse(h.timestamp) >= Date.parse(lo) && Date.parse(h.timestamp) <= Date.parse(hi);
    const kept = await agrees(all, ['--since', lo, '--until', hi], within);
    assert.ok(
      kept.some((h) => Date.parse(h.timestamp!) === Date.parse(lo)) && kept.some((h) => Date.parse(h.timestamp!) === Date.parse(hi)),
      'both ends included',
    );
    await agrees(all, ['--since', '2026-02-03T09:00:35+01:00'], (h) => Date.parse(h.timestamp!) >= Date.parse('2026-02-03T08:00:35Z'));
    await agrees(all, ['--until', '2026-02-02'], () => false);
    await agrees(all, ['--until', '2026-02-03'], () => true);
    const d = await doc(db, [...all, '--since', lo]);
    assert.equal(d.filters.since, '2026-02-03T08:00:14.000000Z');
    // durations count back from now (each process its own now): ten years back is every message, a second back is none
    const every = (await doc(db, all)).hits.map(key);
    for (const extra of [[], ['--no-index']]) {
      const ten = JSON.parse(
        (await cli(['search', ...all, '--db', db, '-C', '0', '-m', '1000', '--json', '--since', '3650d', ...extra])).stdout,
      ) as Doc;
      assert.deepEqual(ten.hits.map(key), every);
      const second = await cli(['search', ...all, '--db', db, '--count', '--since', '1s', ...extra]);
      assert.equal(second.stdout, '0\n');
      assert.equal(second.status, 1);
    }
  });

  test('a message without a timestamp is dated by the snapshot that first carried it', async () => {
    const args = ['zebra', '--scope', 'all'];
    const ts = (h: HitDoc) => h.timestamp;
    const everything = await doc(undated, args);
    assert.deepEqual(everything.hits.map(ts).filter((t) => t === null).length, 1);
    const undatedKey = key(everything.hits.find((h) => h.timestamp === null)!);
    const afternoon = await agrees(
      args,
      ['--since', '2026-03-01T14:59:59Z'],
      (h) => h.timestamp === null || h.timestamp >= '2026-03-01T15',
      undated,
    );
    assert.ok(afternoon.map(key).includes(undatedKey));
    const morning = await agrees(
      args,
      ['--until', '2026-03-01T14:59:59Z'],
      (h) => h.timestamp !== null && h.timestamp < '2026-03-01T15',
      undated,
    );
    assert.ok(!morning.map(key).includes(undatedKey));
  });

  test('--phrase: consecutive tokens; repeatable; alone it is the query', async () => {
    await agrees(all, ['--phrase', 'node 3'], (h) => containsPhrases(h.text, [['node', '3']]));
    await agrees(all, ['--phrase', 'SET-POLICY lru'], (h) => containsPhrases(h.text, [['set', 'policy', 'lru']]));
    await agrees(all, ['--phrase', 'node 3', '--phrase', 'policy set'], (h) =>
      containsPhrases(h.text, [
        ['node', '3'],
        ['policy', 'set'],
      ]),
    );
    const alone = await doc(db, ['--phrase', 'eviction runbook', '--scope', 'all']);
    assert.ok(alone.hits.length > 0);
    assert.ok(alone.hits.every((h) => tokenize(h.text).join(' ').includes('eviction runbook')));
    const explicit = await doc(db, ['eviction', 'runbook', '--phrase', 'eviction runbook', '--scope', 'all']);
    assert.deepEqual(alone.hits, explicit.hits);
  });

  test('with scopes, --role/--tool, --min-score, --collapse and the other filters', async () => {
    const conv = [...WORDS, '--conversation', 'conv-lx'];
    await agrees(
      conv,
      ['--role', 'tool-return', '--tool', 'run_*', '--since', '2026-02-03T08:00:20Z'],
      (h) => h.roles.includes('tool-return') && Date.parse(h.timestamp!) >= Date.parse('2026-02-03T08:00:20Z'),
    );
    await agrees(
      [...WORDS, '--run', 'lx-1'],
      ['--phrase', 'node 3', '--agent', 'researcher', '--min-score', '1'],
      (h) => h.score >= 1 && containsPhrases(h.text, [['node', '3']]),
    );
    // --collapse counts the distinct texts of what the filters keep
    const kept = (await doc(db, [...all, '--agent', 'researcher', '--phrase', 'node 3'])).hits;
    const folded = await doc(db, [...all, '--agent', 'researcher', '--phrase', 'node 3', '--collapse']);
    assert.equal(folded.summary.total_matches, new Set(kept.map((h) => h.text)).size);
    assert.deepEqual(
      folded.hits.map((h) => h.text),
      [...new Set(kept.map((h) => h.text))],
    );
    const byRun = await run(db, [...all, '--agent', 'researcher', '--phrase', 'node 3', '--count-by', 'run']);
    const perRun = new Map<string, number>();
    for (const h of kept) perRun.set(h.run_id, (perRun.get(h.run_id) ?? 0) + 1);
    assert.equal(byRun.stdout, [...perRun].map(([r, n]) => `${r}:${n}\n`).join(''));
    const check = await run(db, [...all, '--parent', 'lx-2', '--expect-none', '-q']);
    assert.equal(check.status, 1);
  });

  test('bad values are usage errors', async () => {
    for (const [args, message] of [
      [['--since', 'yesterday'], /--since expects an ISO 8601 date or time .* or a duration \(90m, 7d\), got "yesterday"/],
      [['--since', '2026-03-02', '--until', '2026-03-01'], /--since 2026-03-02 is after --until 2026-03-01: nothing can match/],
      [['--phrase', '!!'], /--phrase "!!" holds no word to search for/],
    ] as Array<[string[], RegExp]>) {
      const r = await cli(['search', 'x', '--db', db, '--scope', 'all', ...args]);
      assert.equal(r.status, 2);
      assert.match(r.stderr, message);
    }
    const nothing = await cli(['search', '--db', db, '--scope', 'all']);
    assert.equal(nothing.status, 2);
    assert.match(nothing.stderr, /search needs query words/);
  });

  test('runs --agent takes globs and --since a duration', async () => {
    const ids = async (...args: string[]) =>
      (JSON.parse((await cli(['runs', '--db', db, '--json', ...args])).stdout) as { runs: Array<{ run_id: string }> }).runs.map(
        (r) => r.run_id,
      );
    assert.deepEqual(await ids('--agent', 'res*'), ['lx-1', 'lx-2']);
    assert.deepEqual(await ids('--agent', 'auditor,researcher'), ['lx-1', 'lx-2', 'ly-1']);
    assert.deepEqual(await ids('--since', '3650d'), ['lx-1', 'lx-2', 'ly-1']);
    assert.deepEqual(await ids('--since', '1s'), []);
  });
});
