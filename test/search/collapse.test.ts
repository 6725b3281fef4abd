/**
 * `--collapse` (issue 15) on a store whose compactions leave repeats: without it the answer is the
 * reference's (every copy a hit of its own, the same on the index, without it and in a library replay);
 * with it every text is one hit listing all its locations, the freed slots go to the next texts, and
 * the counts count distinct texts. Both paths print the same bytes.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cli } from '../helpers/cli.js';
import { buildCompactionStore, LX1_REPEATS, PIN_TEXT } from '../helpers/compaction-store.js';
import { searchStore } from '../helpers/stores.js';
import { checkEvents, checkShape, LOCATION, SEARCH_DOC, SEARCH_EVENTS } from '../helpers/shapes.js';

let db: string;
before(() => {
  db = buildCompactionStore();
});

interface Loc {
  run_id: string;
  message_index: number;
  timestamp: string | null;
}
interface HitDoc {
  rank: number;
  score: number;
  run_id: string;
  message_index: number;
  text: string;
  locations: Loc[] | null;
}
interface Doc {
  hits: HitDoc[];
  summary: { total_matches: number; hits: number };
}

const QUERY = ['runbook', 'eviction', 'node', 'lru', 'policy'];
const args = (...extra: string[]) => ['search', ...QUERY, '--db', db, '--scope', 'all', ...extra];
/** The same command through the index, without it, and without it on the digest path (one thread and two, no size threshold). */
async function bothPaths(extra: string[]): Promise<string> {
  const indexed = await cli(args(...extra));
  const replayed = await cli(args(...extra, '--no-index'));
  const digested = await cli(args(...extra, '--no-index'), { env: { CONVSEARCH_THREADS: '1' } });
  const threaded = await cli(args(...extra, '--no-index'), { env: { CONVSEARCH_THREADS: '2' } });
  assert.equal(replayed.stdout, indexed.stdout, `--no-index: ${extra.join(' ')}`);
  assert.equal(digested.stdout, indexed.stdout, `digests: ${extra.join(' ')}`);
  assert.equal(threaded.stdout, indexed.stdout, `threads: ${extra.join(' ')}`);
  assert.equal(replayed.status, indexed.status);
  return indexed.stdout;
}
const doc = async (...extra: string[]): Promise<Doc> => JSON.parse(await bothPaths([...extra, '--json'])) as Doc;
const where = (h: { run_id: string; message_index: number }): string => `${h.run_id}[${h.message_index}]`;

describe('the store repeats what compaction kept', () => {
  test('replay indexes the kept tail again: the pin three times in lx-1', () => {
    const { outcome } = searchStore(db, { query: 'pinned', runId: 'lx-1', contextLines: 0 });
    assert.ok(outcome.kind === 'found');
    assert.deepEqual(
      outcome.hits.map((h) => h.position),
      [...LX1_REPEATS.pin],
    );
    assert.ok(outcome.hits.every((h) => h.text === `User: ${PIN_TEXT}`));
  });

  test('without --collapse the answer is the reference replay, on both paths and every format', async () => {
    const { outcome, text } = searchStore(db, { query: QUERY.join(' '), contextLines: 0, maxMatches: 100 });
    assert.ok(outcome.kind === 'found');
    const plain = await doc('-C', '0', '-m', '100');
    assert.deepEqual(
      plain.hits.map((h) => [where(h), h.score]),
      outcome.hits.map((h) => [`${h.run.runId}[${h.position}]`, h.score]),
    );
    assert.ok(plain.hits.every((h) => h.locations === null));
    assert.equal(await bothPaths(['-C', '0', '-m', '100', '--format', 'tool']), text + '\n');
    for (const f of [['--plain'], ['--ndjson'], ['--count'], ['--count-by', 'run'], ['--color', 'never']]) await bothPaths(f);
  });
});

describe('--collapse', () => {
  test('every text is one hit listing all its locations; scores and order are the reference’s, copies removed', async () => {
    const all = await doc('-C', '0', '-m', '100');
    const folded = await doc('-C', '0', '-m', '100', '--collapse');
    checkShape(folded, SEARCH_DOC);
    // the reference's hits, each text kept at its first (best-ranked) occurrence
    const firsts = new Map<string, HitDoc[]>();
    for (const h of all.hits) firsts.set(h.text, [...(firsts.get(h.text) ?? []), h]);
    assert.deepEqual(
      folded.hits.map((h) => [where(h), h.score, h.rank]),
      [...firsts.values()].map((copies, i) => [where(copies[0]!), copies[0]!.score, i + 1]),
    );
    for (const h of folded.hits) {
      for (const l of h.locations!) checkShape(l, LOCATION);
      assert.deepEqual(h.locations!.map(where), firsts.get(h.text)!.map(where), h.text);
      assert.equal(h.locations![0]!.message_index, h.message_index, 'the hit is its first location');
    }
    const pin = folded.hits.find((h) => h.text === `User: ${PIN_TEXT}`)!;
    assert.deepEqual(pin.locations!.map(where), [...LX1_REPEATS.pin.map((i) => `lx-1[${i}]`), 'lx-2[0]', 'ly-1[0]']);
    assert.ok(pin.locations!.every((l) => typeof l.timestamp === 'string'));
    assert.equal(folded.summary.total_matches, firsts.size, 'total_matches counts distinct texts');
    assert.equal(new Set(folded.hits.map((h) => h.text)).size, folded.hits.length);
  });

  test('the freed slots go to the next distinct texts', async () => {
    const all = await doc('-C', '0', '-m', '100');
    const distinct = all.hits.filter((h, i) => all.hits.findIndex((g) => g.text === h.text) === i);
    const three = await doc('-C', '0', '-m', '3', '--collapse');
    assert.deepEqual(three.hits.map(where), distinct.slice(0, 3).map(where));
    // the last hit still lists its copies ranked after it
    const last = three.hits[2]!;
    assert.deepEqual(last.locations!.map(where), all.hits.filter((h) => h.text === last.text).map(where));
  });

  test('with context windows: each text one hit, listing every copy, shown as context or not', async () => {
    const all = await doc('-C', '0', '-m', '100');
    const reference = await doc('-C', '2', '-m', '100');
    assert.ok(new Set(reference.hits.map((h) => h.text)).size < reference.hits.length, 'the reference repeats texts here');
    const folded = await doc('-C', '2', '-m', '100', '--collapse');
    assert.equal(new Set(folded.hits.map((h) => h.text)).size, folded.hits.length);
    folded.hits.forEach((h, i) => {
      assert.equal(h.rank, i + 1);
      if (i > 0) assert.ok(h.score <= folded.hits[i - 1]!.score, 'rank order');
      assert.deepEqual(h.locations!.map(where), all.hits.filter((g) => g.text === h.text).map(where));
      assert.ok(h.locations!.some((l) => where(l) === where(h)));
    });
    // [5] is context of [4]'s window, so its copy [10] is the hit, and lists [5] first
    const check = folded.hits.find((h) => h.text === 'User: Check the eviction settings on node 3.')!;
    assert.equal(where(check), 'lx-1[10]');
    assert.deepEqual(check.locations!.map(where), ['lx-1[5]', 'lx-1[10]']);
  });

  test('human header: also at run … [n]; the copies take no slot', async () => {
    const out = (
      await cli(['search', 'pinned', 'runbook', '--db', db, '--scope', 'all', '--collapse', '-C', '0', '-m', '2', '--color', 'never'])
    ).stdout;
    assert.match(
      out,
      /^#1 · score \d\.\d · run lx-1 · .*\[0\] user · .* · also at run lx-1 \[9\], \[20\]; run lx-2 \[0\]; run ly-1 \[0\]\n> \[0\] User: Pinned/,
    );
    assert.equal(out.match(/^#\d/gm)!.length, 2);
    assert.equal(out.match(/Pinned/g)!.length, 1);
  });

  test('--plain and --ndjson: one line per distinct text', async () => {
    const plain = (await bothPaths(['--collapse', '-C', '0', '-m', '100', '--plain'])).trimEnd().split('\n');
    const folded = await doc('--collapse', '-C', '0', '-m', '100');
    assert.deepEqual(
      plain.map((l) => l.split(':').slice(0, 2).join(':')),
      folded.hits.map((h) => `${h.run_id}:${h.message_index}`),
    );
    const events = checkEvents(await bothPaths(['--collapse', '-C', '0', '-m', '100', '--ndjson']), SEARCH_EVENTS);
    assert.deepEqual(
      events.filter((e) => e.type === 'hit').map((e) => e.data),
      folded.hits,
    );
    assert.equal(events[0]!.data.collapse, true);
  });

  test('--count, --count-by run and the checks count distinct texts', async () => {
    const all = await doc('-C', '0', '-m', '100');
    const texts = new Set(all.hits.map((h) => h.text));
    assert.equal(await bothPaths(['--collapse', '--count']), `${texts.size}\n`);
    const perRun = new Map<string, Set<string>>();
    for (const h of all.hits) perRun.set(h.run_id, (perRun.get(h.run_id) ?? new Set()).add(h.text));
    assert.equal(await bothPaths(['--collapse', '--count-by', 'run']), [...perRun].map(([r, t]) => `${r}:${t.size}\n`).join(''));
    const pass = await cli(args('--collapse', '--expect-min', String(texts.size), '-q'));
    assert.equal(pass.status, 0);
    const fail = await cli(args('--collapse', '--expect-min', String(texts.size + 1)));
    assert.equal(fail.status, 1);
    assert.match(fail.stderr, new RegExp(`--expect-min ${texts.size + 1} failed: ${texts.size} distinct matching texts found`));
    assert.equal((await cli(args('--count'))).stdout, `${all.hits.length}\n`, 'without --collapse every copy counts');
  });

  test('with filters: --role, --tool and --min-score pick which copies count', async () => {
    const calls = await doc('--collapse', '-C', '0', '-m', '100', '--role', 'tool-call', '--tool', 'run_*');
    assert.ok(calls.hits.length > 0);
    for (const h of calls.hits) assert.match(h.text, /^Tool Call \[run_shell\]/);
    const cat = calls.hits.find((h) => h.text.includes('cat /etc/cache'))!;
    assert.deepEqual(
      cat.locations!.map(where),
      LX1_REPEATS.catEviction.map((i) => `lx-1[${i}]`),
    );
    const users = await doc('--collapse', '-C', '0', '-m', '100', '--role', 'user', '--conversation', 'conv-lx', '--scope', 'conversation');
    const pin = users.hits.find((h) => h.text === `User: ${PIN_TEXT}`)!;
    assert.deepEqual(pin.locations!.map(where), [...LX1_REPEATS.pin.map((i) => `lx-1[${i}]`), 'lx-2[0]'], 'the conversation scope');
  });

  test('--format tool ignores --collapse: the reference text, byte for byte', async () => {
    assert.equal(await bothPaths(['--collapse', '--format', 'tool']), await bothPaths(['--format', 'tool']));
  });

  test('a scope where nothing repeats answers as without --collapse, locations aside', async () => {
    const a = await doc('--run', 'lx-2', '-C', '0');
    const b = await doc('--run', 'lx-2', '-C', '0', '--collapse');
    assert.deepEqual(
      b.hits.map((h) => ({ ...h, locations: null })),
      a.hits,
    );
    assert.ok(b.hits.every((h) => h.locations!.length === 1));
  });
});
