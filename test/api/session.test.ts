import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULTS } from '../../src/api/defaults.js';
import { NotFoundError, PastEndError, RequestError, StoreError } from '../../src/api/errors.js';
import { openSession, Session, withSession } from '../../src/api/session.js';
import { openStoreReader } from '../../src/store/open-reader.js';
import type { IndexChoice } from '../../src/sidecar/with-index.js';
import type { StoreReader } from '../../src/store/reader.js';
import { warningNotices } from '../../src/api/warnings.js';
import { toolText } from '../../src/output/tool-text.js';
import { cli as runInProcess, FIXTURES, TEST_CACHE } from '../helpers/cli.js';
import { addRawSnapshot, addRun, addSnapshot, assistantMsg, buildStore, tempDir, userMsg } from '../helpers/stores.js';

const SMALL = join(FIXTURES, 'parity', 'small.db');

/** A session over `db` whose index (when it has one) is current, and how often its store's runs() is called from then on. */
function countingSession(db: string, index: IndexChoice, cache: string): { session: Session; reads: () => number } {
  const open = (): Session => openSession(db, { index, env: { ...process.env, XDG_CACHE_HOME: cache } });
  // a build or an update reads the runs for itself: the calls after it find the index current
  const first = open();
  first.listRuns();
  first.close();
  const session = open();
  const store = session.stores[0]!.store;
  const read = store.runs.bind(store);
  let reads = 0;
  store.runs = () => {
    reads++;
    return read();
  };
  return { session, reads: () => reads };
}

/** The library and the CLI over one store: the CLI is only a caller of the API. */
describe('api/session', () => {
  test('a search with left-out fields takes DEFAULTS and answers as the CLI does, through the index or not', async () => {
    for (const index of [false, {}] as const) {
      // the default index place, read from the session's environment (the process's is left alone)
      const session = openSession(SMALL, { index, env: { ...process.env, XDG_CACHE_HOME: TEST_CACHE } });
      try {
        const outcome = session.search({ query: 'billing', scope: 'all' });
        assert.equal(outcome.options.maxMatches, DEFAULTS.maxMatches);
        assert.deepEqual(outcome.options.bm25, DEFAULTS.bm25);
        const cli = await runInProcess(['search', 'billing', '--scope', 'all', '--format', 'tool', '--db', SMALL]);
        assert.equal(toolText(outcome) + '\n', cli.stdout);
      } finally {
        session.close();
      }
    }
  });

  test("a conversation listing keeps the warnings of the conversations it shows, through the index or not, and reads the store's runs only without it", () => {
    const db = buildStore((w) => {
      addRun(w, 'quiet', 'c-quiet', 0);
      addSnapshot(w, 'quiet', [userMsg('a question', 1), assistantMsg('an answer', 2)]);
      addRun(w, 'broken', 'c-broken', 10);
      addSnapshot(w, 'broken', [userMsg('first', 11)]);
      addRawSnapshot(w, 'broken', '[{"not json', { stepIndex: 2 });
    });
    const cache = tempDir();
    for (const index of [false, {}] as const) {
      const { session, reads } = countingSession(db, index, cache);
      try {
        const what = `index ${JSON.stringify(index)}`;
        const warned = (l: ReturnType<Session['listConversations']>): string[] => l.warnings.map((w) => `${w.kind}:${w.runId}`);
        const all = session.listConversations();
        assert.deepEqual(
          all.conversations.map((c) => c.conversationId),
          ['c-quiet', 'c-broken'],
          what,
        );
        assert.deepEqual(warned(all), ['unreadable-snapshot:broken'], what);
        assert.deepEqual(warned(session.listConversations({ limit: 1 })), [], `${what}: c-broken not shown`);
        assert.deepEqual(warned(session.listConversations({ reverse: true, limit: 1 })), ['unreadable-snapshot:broken'], what);
        assert.equal(reads(), index === false ? 1 : 0, what);
      } finally {
        session.close();
      }
    }
  });

  test("a search through a current index lists no store runs (the index has them); one naming a run does, and the answers are the replay's", () => {
    const stores = ['a', 'b'].map((name) =>
      buildStore((w) => {
        addRun(w, `${name}-1`, 'c1', 0);
        addSnapshot(w, `${name}-1`, [userMsg(`where is the zyxwvut key of ${name}`, 1), assistantMsg('under the mat', 2)]);
        addRun(w, 'shared-id', 'c2', 10);
        addSnapshot(w, 'shared-id', [userMsg('zyxwvut again', 11)]);
      }),
    );
    const cache = tempDir();
    const env = { ...process.env, XDG_CACHE_HOME: cache };
    const listed: string[] = [];
    /** The stores opened read-only, each counting its runs listings in `listed`. */
    const counted = (): Array<{ label: string; store: StoreReader }> =>
      stores.map((label) => {
        const reader = openStoreReader(label, { env });
        return {
          label,
          store: new Proxy(reader, {
            get: (target, key) => {
              if (key === 'runs') listed.push(label);
              const v = Reflect.get(target, key) as unknown;
              return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
            },
          }),
        };
      });
    const ask = (index: false | object, request: { runId?: string }): unknown => {
      const named = counted();
      try {
        const outcome = new Session(named, { index: index as false, env }).search({ query: 'zyxwvut', scope: 'all', ...request });
        assert.equal(outcome.kind, 'found');
        return outcome;
      } finally {
        for (const s of named) s.store.close();
      }
    };
    ask({}, {}); // builds both indexes
    listed.length = 0;
    const indexed = ask({}, {});
    assert.deepEqual(listed, [], 'no runs listing read');
    assert.deepEqual(indexed, ask(false, {}), 'the replay answers the same');
    listed.length = 0;
    const one = ask({}, { runId: `${stores[0]}:shared-id` });
    assert.deepEqual(listed, stores, 'a request naming a run reads the runs of every store, to resolve it');
    assert.deepEqual(one, ask(false, { runId: `${stores[0]}:shared-id` }));
  });

  test("the reference's parameter checks reject what the reference rejects, before reading anything", () => {
    const session = openSession(SMALL);
    try {
      assert.throws(
        () => session.search({ query: 'x', scope: 'all', maxMatches: -1 }),
        new RequestError('max_matches must be non-negative, got -1.'),
      );
      assert.throws(
        () => session.search({ query: 'x', scope: 'all', bm25: { k1: Number.NaN } }),
        /bm25_k1 must be a non-negative finite number, got nan\./,
      );
      assert.throws(
        () => session.search({ query: 'x', scope: 'all', bm25: { b: 1.5 } }),
        /bm25_b must be between 0\.0 and 1\.0, got 1\.5\./,
      );
    } finally {
      session.close();
    }
  });

  test('ids the store lacks are a NotFoundError with the closest ids (a search carries the reference reply), never an empty answer', () => {
    const session = openSession(SMALL, { index: false });
    const notFound =
      (kind: string, suggestion: string) =>
      (e: unknown): boolean =>
        e instanceof NotFoundError && e.missing.kind === kind && e.missing.suggestions.includes(suggestion);
    try {
      assert.throws(() => session.listRuns({ conversationId: 'conv-alph' }), notFound('conversation', 'conv-alpha'));
      assert.throws(() => session.listRuns({ parent: 'run-alpha-9' }), notFound('run', 'run-alpha-1'));
      assert.throws(() => session.listTools({ runId: 'run-alpha-9' }), notFound('run', 'run-alpha-1'));
      assert.throws(
        () => session.search({ query: 'billing', scope: 'conversation', conversationId: 'conv-alph' }),
        (e: unknown) => notFound('conversation', 'conv-alpha')(e) && (e as NotFoundError).outcome?.kind === 'no-history',
      );
      const all = session.listRuns();
      assert.deepEqual(
        all.runs.map((r) => r.run.runId),
        session.runs().map((r) => r.runId),
      );
      // the limit cuts corpus order before anything is replayed, and sorting by messages after counting
      assert.deepEqual(
        session.listRuns({ limit: 2 }).runs.map((r) => r.run.runId),
        all.runs.slice(0, 2).map((r) => r.run.runId),
      );
      const most = session.listRuns({ sort: 'messages', limit: 1 }).runs[0]!;
      assert.equal(most.messages, Math.max(...all.runs.map((r) => r.messages)));
      assert.throws(() => session.showRun('run-alpha-9'), notFound('run', 'run-alpha-1'));
      const first = all.runs[0]!;
      assert.throws(
        () => session.showRun(first.run.runId, { at: first.messages }),
        (e: unknown) => e instanceof PastEndError && e.length === first.messages && e.runId === first.run.runId,
      );
      const window = session.showRun(first.run.runId, { at: 1, context: 1 });
      assert.deepEqual(window.window, { at: 1, context: 1, first: 0, last: 2 });
      assert.deepEqual(
        window.messages.map((m) => m.position),
        [0, 1, 2],
      );
    } finally {
      session.close();
    }
  });

  test('warnings group per run as data: unreadable snapshots together, unknown part kinds summed', () => {
    const notices = warningNotices([
      { kind: 'unreadable-snapshot', runId: 'r1', seq: 3, reason: 'x' },
      { kind: 'unknown-part-kind', runId: 'r1', partKind: 'future', count: 2 },
      { kind: 'unreadable-snapshot', runId: 'r1', seq: 7, reason: 'y' },
      { kind: 'unknown-part-kind', runId: 'r1', partKind: 'future', count: 1 },
    ]);
    assert.deepEqual(notices, [
      { kind: 'unreadable-snapshots', runId: 'r1', seqs: [3, 7] },
      { kind: 'unknown-part-kind', runId: 'r1', partKind: 'future', count: 3 },
    ]);
  });

  test('withSession closes the store and names it in errors', async () => {
    const db = join(tempDir(), 'sessions.db');
    copyFileSync(SMALL, db);
    let seen: ReturnType<typeof openSession> | null = null;
    const n = await withSession(db, {}, (s) => {
      seen = s;
      return s.runCount();
    });
    assert.ok(n > 0);
    assert.throws(() => seen!.runs(), /not open|closed/i);
    await assert.rejects(
      withSession(join(tempDir(), 'missing.db'), {}, () => 0),
      (e: unknown) => e instanceof StoreError && /missing\.db: no such file/.test(e.message),
    );
  });

  test('every result is plain data: JSON gives it back unchanged (no Maps, no Python-int wrappers, no class instances)', () => {
    const plain = (x: unknown): void => assert.deepStrictEqual(JSON.parse(JSON.stringify(x)), x);
    const media = join(FIXTURES, 'parity', 'media.db');
    const session = openSession([SMALL, media], { index: false });
    try {
      for (const run of session.runs()) {
        plain(session.showRun(run.runId, { includeInterrupted: true }));
      }
      plain(session.listRuns());
      plain(session.listConversations());
      plain(session.listTools());
      const { options, ...outcome } = session.search({ query: 'billing refund image', scope: 'all' });
      plain(outcome);
    } finally {
      session.close();
    }
  });

  test("a listing or a show reads the store's runs at most once (the session's list serves the replay too); a listing through the index reads none", () => {
    for (const index of [false, {}] as const) {
      const { session, reads } = countingSession(SMALL, index, TEST_CACHE);
      try {
        const runs = session.listRuns().runs;
        assert.ok(runs.length > 1);
        session.listRuns({ sort: 'messages', limit: 1 });
        assert.ok(session.listConversations().conversations.length > 0);
        session.listRuns({ conversationId: runs[0]!.run.conversationId! });
        // the index lists the runs as of its sync with the store: the store's runs table is not read again
        assert.equal(reads(), index === false ? 1 : 0, `index ${JSON.stringify(index)}`);
        session.showRun(runs[0]!.run.runId);
        assert.equal(reads(), 1, `index ${JSON.stringify(index)}`);
      } finally {
        session.close();
      }
    }
  });
});
