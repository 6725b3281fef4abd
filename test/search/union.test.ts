/**
 * Several stores searched as one corpus (issue 13, "several stores at once"). Each store keeps its own
 * attribution: a run of one store never loses messages to a run of another, even when both start with
 * the same system prompt and user prompt, or share a run id.
 *
 * Method: three stores whose runs share no history across stores; the union's scores, totals and hit
 * order must equal those of one store holding all the runs (score for score, to the bit). Then stores
 * whose runs start alike (same id, same first messages): the union must keep every store's own
 * sections whole, where one merged store would attribute them away.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';

import { simulateRun, type JsonObject, type SimResult } from '../../scripts/lib/messages.js';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { searchOptions, searchStores, type NamedStore } from '../../src/api/search.js';
import type { SearchOutcome } from '../../src/search/search.js';
import { openStoreReader } from '../../src/store/open-reader.js';
import { listTools } from '../../src/api/tools.js';
import type { IndexChoice } from '../../src/sidecar/with-index.js';
import { StoreError } from '../../src/store/errors.js';
import { addRun, addSnapshot, buildStore, searchReader, tempDir, userMsg } from '../helpers/stores.js';

const dir = tempDir('union');
/** The default index place of these searches: a cache of this file's own (the process's environment is left alone). */
const HOOKS = { env: { ...process.env, XDG_CACHE_HOME: tempDir('union-cache') } };

const T0 = Date.UTC(2025, 4, 1, 9, 0, 0) * 1000;
const text = (content: string): JsonObject => ({ content, id: null, provider_name: null, provider_details: null, part_kind: 'text' });

function sim(
  runId: string,
  conversationId: string,
  minutes: number,
  systemPrompt: string,
  prompt: string,
  reply: string,
  history?: SimResult,
): SimResult {
  return simulateRun({
    runId,
    conversationId,
    startedAt: T0 + minutes * 60_000_000,
    ...(history ? { history: history.messages as JsonObject[] } : { systemPrompt }),
    prompt,
    steps: [{ parts: [text(reply)] }],
  });
}

function write(name: string, runs: SimResult[]): string {
  const path = join(dir, name);
  const w = new StepStoreWriter(path);
  w.writeSimulatedRuns(runs);
  w.close();
  return path;
}

const open = (paths: Record<string, string>): NamedStore[] =>
  Object.entries(paths).map(([label, path]) => ({ label, store: openStoreReader(path) }));

function close(stores: readonly NamedStore[]): void {
  for (const s of stores) s.store.close();
}

/** What a search answered, as comparable data: totals, every ranked message with its score, the hits' texts. */
function summary(o: SearchOutcome, name: (runId: string, store?: string) => string = (r) => r): unknown {
  if (o.kind !== 'found') return { kind: o.kind };
  return {
    total: o.searched,
    matches: o.matches.total,
    ranking: o.ranking.map((r) => [name(r.run.runId, r.run.store), r.position, r.score, r.shown]),
    hits: o.hits.map((h) => [name(h.run.runId, h.run.store), h.position, h.score, h.excerpt.map((l) => [l.position, l.text])]),
  };
}

const QUERIES = ['zebrafish', 'gazelle sharedword', 'kestrel ocelot sharedword', 'alphaword betaword gamma', 'reply'];
const MODES: Array<[string, IndexChoice]> = [
  ['index', {}],
  ['no-index', false],
];

// ---------------------------------------------------------------------------------------------
// stores whose runs share no history across stores

const a1 = sim('a1', 'conv-a', 0, 'You answer zebrafish questions.', 'alphaword zebrafish sharedword', 'zebrafish reply alphaword');
const a2 = sim('a2', 'conv-a', 5, '', 'kestrel follow-up sharedword', 'kestrel reply zebrafish', a1);
const b1 = sim('b1', 'conv-b', 2, 'You answer gazelle questions.', 'betaword gazelle sharedword', 'gazelle reply betaword');
const b2 = sim('b2', 'conv-b', 5, '', 'ocelot follow-up', 'ocelot reply sharedword gazelle', b1);
const c1 = sim('c1', 'conv-c', 1, 'You answer gamma questions.', 'gamma zebrafish ocelot', 'gamma reply kestrel');

const SEPARATE = {
  'a.db': write('a.db', [a1, a2]),
  'b.db': write('b.db', [b1, b2]),
  'c.db': write('c.db', [c1]),
};
const ALL = write('all.db', [a1, c1, b1, a2, b2]);

for (const [mode, index] of MODES) {
  test(`union (${mode}): scores, totals and order equal one store holding every run`, () => {
    const stores = open(SEPARATE);
    const all = openStoreReader(ALL);
    try {
      for (const query of QUERIES) {
        for (const maxMatches of [2, 10]) {
          const options = searchOptions({ query, scope: 'all', maxMatches, contextLines: 1 });
          const union = searchStores(stores, options, index, HOOKS);
          const single = searchReader(all, options, index, HOOKS);
          assert.equal(union.kind, 'found', query);
          assert.deepEqual(summary(union), summary(single), `${query} -m ${maxMatches}`);
          // every hit names its store, and the store holds the run
          if (union.kind === 'found') {
            for (const h of union.hits) assert.equal(h.run.store, `${h.run.runId[0]}.db`);
          }
        }
      }
      // a scope: one conversation, one run
      for (const scope of [
        { scope: 'conversation' as const, conversationId: 'conv-b' },
        { scope: 'all' as const, runId: 'a2' },
      ]) {
        const options = searchOptions({ query: 'sharedword reply', ...scope });
        assert.deepEqual(
          summary(searchStores(stores, options, index, HOOKS)),
          summary(searchReader(all, options, index, HOOKS)),
          JSON.stringify(scope),
        );
      }
    } finally {
      close(stores);
      all.close();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// stores whose runs start alike: the same run id, the same system prompt and first prompt

const SAME_SYSTEM = 'You are a careful assistant.';
const x1 = sim('r1', 'conv-1', 0, SAME_SYSTEM, 'zebrafish tank setup', 'zebrafish reply one');
const y1 = sim('r1', 'conv-1', 3, SAME_SYSTEM, 'zebrafish tank setup', 'zebrafish reply two');
const y2 = sim('r2', 'conv-2', 4, SAME_SYSTEM, 'zebrafish tank setup', 'kestrel reply');
const ALIKE = { 'x.db': write('x.db', [x1]), 'y.db': write('y.db', [y1, y2]) };

for (const [mode, index] of MODES) {
  test(`union (${mode}): runs of different stores never share history; shared run ids are qualified`, () => {
    const stores = open(ALIKE);
    try {
      const options = searchOptions({ query: 'zebrafish tank setup', scope: 'all', maxMatches: 20, contextLines: 0 });
      const union = searchStores(stores, options, index, HOOKS);
      assert.equal(union.kind, 'found');
      if (union.kind !== 'found') return;
      // each store searched alone: its sections are exactly the union's (nothing attributed away)
      let total = 0;
      for (const s of stores) {
        const alone = searchReader(s.store, options, index, HOOKS);
        assert.equal(alone.kind, 'found');
        if (alone.kind === 'found') total += alone.searched;
      }
      assert.equal(union.searched, total, 'the union holds every store’s messages');
      // y.db's r2 starts with the same two messages as y.db's r1: attributed away within y.db, as in y.db alone
      assert.deepEqual(
        union.runs.map((r) => [r.store, r.runId]),
        [
          ['x.db', 'x.db:r1'],
          ['y.db', 'y.db:r1'],
          ['y.db', 'r2'],
        ],
      );
      // x.db's r1 and y.db's r1 both keep their first prompt: it is ranked twice, equally
      const prompts = union.ranking.filter((r) => r.position === 1 && r.run.runId.endsWith(':r1'));
      assert.deepEqual(
        prompts.map((r) => r.run.runId),
        ['x.db:r1', 'y.db:r1'],
      );
      assert.equal(prompts[0]!.score, prompts[1]!.score);
      // a qualified id is accepted back as a scope; a bare shared id names no run
      const one = searchStores(stores, searchOptions({ query: 'reply', scope: 'all', runId: 'y.db:r1' }), index, HOOKS);
      assert.equal(one.kind, 'found');
      if (one.kind === 'found') assert.deepEqual([...new Set(one.hits.map((h) => h.run.runId))], ['y.db:r1']);
      const bare = searchStores(stores, searchOptions({ query: 'reply', scope: 'all', runId: 'r1' }), index, HOOKS);
      assert.equal(bare.kind, 'no-run-history');
      assert.equal(bare.missing?.kind, 'run');
      const unique = searchStores(stores, searchOptions({ query: 'reply', scope: 'all', runId: 'r2' }), index, HOOKS);
      assert.equal(unique.kind, 'found');
    } finally {
      close(stores);
    }
  });
}

test('union: the index and a replay answer alike', () => {
  for (const paths of [SEPARATE, ALIKE]) {
    const stores = open(paths);
    try {
      for (const query of QUERIES) {
        const options = searchOptions({ query, scope: 'all', maxMatches: 5, collapse: true });
        const name = (r: string, s?: string): string => `${s}/${r}`;
        assert.deepEqual(
          summary(searchStores(stores, options, {}, HOOKS), name),
          summary(searchStores(stores, options, false, HOOKS), name),
          query,
        );
      }
    } finally {
      close(stores);
    }
  }
});

// ---------------------------------------------------------------------------------------------
// tools over several stores: the inventory of the union equals one store holding every run

const call = (tool: string, id: string): JsonObject => ({
  tool_name: tool,
  args: { q: id },
  tool_call_id: id,
  tool_kind: null,
  id: null,
  provider_name: null,
  provider_details: null,
  part_kind: 'tool-call',
});
const toolRun = (runId: string, minutes: number, tools: string[]): SimResult =>
  simulateRun({
    runId,
    conversationId: `conv-${runId}`,
    startedAt: T0 + minutes * 60_000_000,
    systemPrompt: `tools ${runId}`,
    prompt: `use ${tools.join(' ')}`,
    steps: [
      ...tools.map((t, i) => ({ parts: [call(t, `${runId}-${i}`)], results: [{ content: `${t} result` }] })),
      { parts: [text('done')] },
    ],
  });
const t1 = toolRun('t1', 0, ['lookup', 'fetch']);
const t2 = toolRun('t2', 1, ['lookup']);
const t3 = toolRun('t3', 2, ['fetch', 'fetch', 'write']);
const TOOLS = { 't12.db': write('t12.db', [t1, t2]), 't3.db': write('t3.db', [t3]) };
const TOOLS_ALL = write('tools-all.db', [t1, t2, t3]);

for (const [mode, index] of MODES) {
  test(`union (${mode}): tools of several stores equal those of one store holding every run`, () => {
    const stores = open(TOOLS);
    const all = openStoreReader(TOOLS_ALL);
    try {
      const union = listTools(stores, {}, index, HOOKS);
      const single = listTools([{ label: all.label, store: all }], {}, index, HOOKS);
      assert.deepEqual(union, single);
      assert.deepEqual(
        union.tools.map((t) => [t.name, t.calls, t.runs]),
        [
          ['fetch', 3, 2],
          ['lookup', 2, 2],
          ['write', 1, 1],
        ],
      );
    } finally {
      close(stores);
      all.close();
    }
  });
}

test('a damaged page met while searching the union is a StoreError naming that store, whichever store comes first', () => {
  const good = write('attr-good.db', [sim('g1', 'c', 0, 'sys', 'heron lake', 'heron reply')]);
  const bad = buildStore(
    (w) => {
      addRun(w, 'b1', 'c');
      for (let i = 0; i < 40; i++) addSnapshot(w, 'b1', [userMsg(`heron ${i} ${'x'.repeat(3000)}`, i)]);
    },
    { path: join(dir, 'attr-bad.db') },
  );
  const fd = openSync(bad, 'r+');
  writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, statSync(bad).size - 4096);
  closeSync(fd);
  for (const order of [
    { good, bad },
    { bad, good },
  ]) {
    const stores = open(order);
    try {
      assert.throws(
        () => searchStores(stores, searchOptions({ query: 'heron', scope: 'all' }), false, HOOKS),
        (e: unknown) => e instanceof StoreError && e.message.startsWith(`${bad}: database error:`) && !e.message.includes(good),
      );
    } finally {
      close(stores);
    }
  }
});
