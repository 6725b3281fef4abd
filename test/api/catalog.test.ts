import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { decodeRunId, withSession, type SearchOutcome } from '../../src/lib.js';
import { buildNamesStore, INNER, LIBRARIAN, NAMED_TITLE, PLAIN } from '../helpers/names-store.js';
import { addRun, addSnapshot, buildStore, tempDir, userMsg } from '../helpers/stores.js';

const env = { ...process.env, XDG_CACHE_HOME: tempDir() };

test('library: hits and conversations carry the catalog metadata, with the index and without it', async () => {
  const db = buildNamesStore();
  for (const index of [{}, false] as const) {
    const outcome = await withSession(db, { index, env }, (s) =>
      s.search({ query: 'refund', scope: 'conversation', conversationId: 'conv-named' }),
    );
    assert.equal(outcome.kind, 'found');
    const hits = outcome.kind === 'found' ? outcome.hits : [];
    assert.ok(hits.length > 0);
    for (const h of hits) assert.deepEqual(h.conversation, { title: NAMED_TITLE, tags: ['payments', 'refunds'], outcome: 'completed' });
    // the full ranking stays computed on first use
    assert.equal(typeof Object.getOwnPropertyDescriptor(outcome, 'ranking')?.get, 'function');
    assert.ok(outcome.kind === 'found' && outcome.ranking.length >= hits.length);
    const listing = await withSession(db, { index, env }, (s) => s.listConversations());
    const named = listing.conversations.find((c) => c.conversationId === 'conv-named')!;
    assert.equal(named.metadata?.title, NAMED_TITLE);
    assert.equal(listing.conversations.find((c) => c.conversationId === 'conv-plain')!.metadata, null);
    assert.deepEqual(
      listing.warnings.map((w) => w.kind === 'store-notice' && w.notice),
      ['unreadable-conversation-metadata'],
    );
  }
  const runs = await withSession(db, { env }, (s) => s.listRuns());
  assert.deepEqual(decodeRunId(runs.runs[0]!.run.runId), { agent: 'code_librarian', innerRunId: INNER });
  assert.equal(runs.runs[0]!.run.runId, LIBRARIAN);
  assert.equal(decodeRunId(PLAIN), null);
});

test("library, several stores: each hit and row takes its own store's catalog for a shared conversation id", async () => {
  const store = (title: string, word: string) =>
    buildStore(
      (w) => {
        addRun(w, 'r1', 'shared');
        addSnapshot(w, 'r1', [userMsg(`refund ${word}`, 0)]);
        w.saveConversation({ id: 'shared', summary: { title, outcome: 'completed' } });
      },
      { path: join(tempDir(), `${word}.db`) },
    );
  const a = store('Title in A', 'alpha');
  const b = store('Title in B', 'beta');
  const outcome: SearchOutcome = await withSession([a, b], { env }, (s) => s.search({ query: 'refund', scope: 'all' }));
  const titles =
    outcome.kind === 'found'
      ? outcome.hits.map((h) => [h.run.store, h.text.includes('alpha') ? 'alpha' : 'beta', h.conversation?.title])
      : [];
  assert.deepEqual(
    titles.sort((x, y) => String(x[1]).localeCompare(String(y[1]))),
    [
      [a, 'alpha', 'Title in A'],
      [b, 'beta', 'Title in B'],
    ],
  );
  const listing = await withSession([a, b], { env }, (s) => s.listConversations());
  assert.deepEqual(
    listing.conversations.map((c) => [c.store, c.metadata?.title]),
    [
      [a, 'Title in A'],
      [b, 'Title in B'],
    ],
  );
});
