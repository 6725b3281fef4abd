/**
 * The Postgres reader over both upstream table-name rules (docs/backends.md, "Table names"): the
 * lower-case-only prefix and the mixed-case one that Postgres folds. The same content written both ways
 * reads identically, whatever case the prefix is given in; a custom `PostgresMediaStore` table is read
 * through `?media=`; tables spelled with the exact case of the prefix are never read, and say so.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { StoreError } from '../../../src/store/errors.js';
import { openStoreReader } from '../../../src/store/open-reader.js';
import type { StoreReader } from '../../../src/store/reader.js';
import { layoutSql } from '../../helpers/pg-layouts.js';
import { FIXTURES, STORES, startPostgres, type PgServer, need, withReader } from '../../helpers/servers.js';

let pg: PgServer | string = 'not started';
const MEDIA = [
  '8e12ad50fbe27f192fb4d1f0f0aadd071e8c4571787d7bc41db87d0cde5b4b73',
  'a999af7472065bb4b7d107d1566180b6d8add48a742ca85063991f43e44c28f3',
];

before(async () => {
  pg = await startPostgres();
  if (typeof pg === 'string') return;
  for (const store of STORES) {
    pg.createDb(`old_${store}`, join(FIXTURES, 'postgres', `${store}.sql`));
    pg.createDb(`new_${store}`, layoutSql(store, 'Steps'));
  }
  pg.createDb('blobs', layoutSql('media', 'Steps', 'Blobs'));
  // both spellings: the folded tables upstream reads, and exact-case twins holding something else
  pg.createDb('twins', layoutSql('small', 'Steps'));
  pg.psql(
    'twins',
    `CREATE TABLE "Steps_runs" (LIKE steps_runs); CREATE TABLE "Steps_snapshots" (LIKE steps_snapshots);
     INSERT INTO "Steps_runs" VALUES ('twin-run', NULL, NULL, NULL, '{}', '2025-01-01T00:00:00+00:00', NULL)`,
  );
  // metadata no listing shows: one run's is large, then NULL, then the column turned jsonb
  for (const db of ['meta_large', 'meta_null', 'meta_jsonb']) pg.createDb(db, join(FIXTURES, 'postgres', 'small.sql'));
  pg.psql('meta_large', "UPDATE step_persistence_runs SET metadata = json_build_object('notes', repeat('x', 2000000))::text");
  pg.psql(
    'meta_null',
    'ALTER TABLE step_persistence_runs ALTER metadata DROP NOT NULL; UPDATE step_persistence_runs SET metadata = NULL WHERE run_id = (SELECT max(run_id) FROM step_persistence_runs)',
  );
  pg.psql('meta_jsonb', 'ALTER TABLE step_persistence_runs ALTER metadata TYPE jsonb USING metadata::jsonb');
  pg.createDb('only_twins');
  pg.psql('only_twins', `CREATE TABLE "Steps_runs" (run_id text); CREATE TABLE "Steps_snapshots" (seq bigint)`);
  pg.psql('postgres', "CREATE ROLE layout_reader LOGIN PASSWORD 'layout-pw'");
  for (const db of ['new_media', 'blobs']) {
    const tables = pg.psql(db, "SELECT string_agg(quote_ident(tablename), ',') FROM pg_tables WHERE schemaname = 'public'").trim();
    pg.psql(db, `GRANT SELECT ON ${tables} TO layout_reader`);
  }
});

after(() => {
  if (typeof pg !== 'string') pg.stop();
});

/** Everything a reader answers, but the stamp (row versions differ between two databases). */
function readAll(r: StoreReader): string {
  const runs = r.runs();
  return JSON.stringify({
    runs,
    count: r.runCount(),
    snapshots: runs.map((run) => [[...r.completeSnapshots(run.runId)], [...r.interruptedSnapshots(run.runId)]]),
    latest: [...r.latestSnapshots()],
    counts: [...r.countsByRun()],
    steps: [...r.lastSteps()],
    media: MEDIA.map((s) => r.media(s)?.toString('base64') ?? null),
  });
}

describe('Postgres table layouts', () => {
  it('the mixed-case rule folds: a prefix given as Steps is the tables steps_*, as upstream writes them', (t) => {
    const s = need(t, pg);
    if (!s) return;
    assert.equal(
      s.psql('new_media', "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'").trim(),
      'steps_events,steps_media,steps_runs,steps_snapshot_keys,steps_snapshots,steps_tool_effects',
    );
  });

  it('the same content in either layout reads the same, in any case of the prefix, media and interrupted snapshots included', (t) => {
    const s = need(t, pg);
    if (!s) return;
    for (const store of STORES) {
      const old = withReader(s.url(`old_${store}`), readAll);
      for (const prefix of ['Steps', 'steps', 'STEPS', 'sTePs']) {
        assert.ok(
          withReader(s.url(`new_${store}`, undefined, undefined, `?table=${prefix}`), readAll) === old,
          `${store} ?table=${prefix}`,
        );
      }
      // the old rule's own spelling, given in upper case, names the same (folded) tables
      assert.ok(withReader(s.url(`old_${store}`, undefined, undefined, '?table=STEP_PERSISTENCE'), readAll) === old, store);
    }
    const media = withReader(s.url('new_media', undefined, undefined, '?table=Steps'), (r) => MEDIA.map((x) => r.media(x)?.length ?? 0));
    assert.ok(
      media.every((n) => n > 0),
      `media restored: ${media}`,
    );
    assert.ok(withReader(s.url('old_small'), (r) => [...r.countsByRun().values()].some((c) => c.interrupted > 0)));
  });

  it('a prefix in any case is one store: one identity (one index), the folded one', (t) => {
    const s = need(t, pg);
    if (!s) return;
    const ids = ['Steps', 'steps', 'STEPS'].map((p) =>
      withReader(s.url('new_small', undefined, undefined, `?table=${p}`), (r) => r.identity),
    );
    assert.deepEqual(new Set(ids).size, 1, ids.join(' '));
    assert.match(ids[0]!, /\?table=steps$/);
  });

  it('a SELECT-only role reads the mixed-case layout and its ?media= table; the database is unchanged', (t) => {
    const s = need(t, pg);
    if (!s) return;
    for (const [db, extra] of [
      ['new_media', '?table=Steps'],
      ['blobs', '?table=Steps&media=Blobs'],
    ] as const) {
      const before = s.dump(db);
      const asOwner = withReader(s.url(db, undefined, undefined, extra), readAll);
      assert.ok(withReader(s.url(db, 'layout_reader', 'layout-pw', extra), readAll) === asOwner, db);
      assert.equal(s.dump(db), before, db);
    }
  });

  it('?media= names a PostgresMediaStore table of its own (folded like the prefix); without it that media is not found', (t) => {
    const s = need(t, pg);
    if (!s) return;
    const old = withReader(s.url('old_media'), readAll);
    for (const media of ['Blobs', 'blobs', 'BLOBS']) {
      assert.ok(withReader(s.url('blobs', undefined, undefined, `?table=Steps&media=${media}`), readAll) === old, media);
    }
    assert.deepEqual(
      withReader(s.url('blobs', undefined, undefined, '?table=Steps'), (r) => MEDIA.map((x) => r.media(x))),
      [null, null],
    );
    assert.notEqual(
      withReader(s.url('blobs', undefined, undefined, '?table=Steps&media=Blobs'), (r) => r.identity),
      withReader(s.url('blobs', undefined, undefined, '?table=Steps'), (r) => r.identity),
    );
    assert.throws(
      () => openStoreReader(s.url('blobs', undefined, undefined, '?table=Steps&media=nosuch')),
      (e: unknown) => e instanceof StoreError && /no nosuch table \(the \?media= table\)/.test(e.message),
    );
  });

  it('both spellings present: the folded tables are read (as upstream reads them), the exact-case twins named in a notice', (t) => {
    const s = need(t, pg);
    if (!s) return;
    const expected = withReader(s.url('new_small', undefined, undefined, '?table=Steps'), readAll);
    for (let i = 0; i < 2; i++) {
      withReader(s.url('twins', undefined, undefined, '?table=Steps'), (r) => {
        assert.ok(readAll(r) === expected, 'the folded tables, every time');
        assert.ok(!r.runs().some((run) => run.runId === 'twin-run'));
        assert.deepEqual(
          r.notices().map((n) => `${n.kind}: ${n.detail}`),
          [
            `case-twin-table: "Steps_runs" is not read: PostgresStepStore's unquoted names resolve to steps_runs`,
            `case-twin-table: "Steps_snapshots" is not read: PostgresStepStore's unquoted names resolve to steps_snapshots`,
          ],
        );
      });
    }
    // given in lower case, the prefix has no other spelling to report
    assert.deepEqual(
      withReader(s.url('twins', undefined, undefined, '?table=steps'), (r) => r.notices()),
      [],
    );
  });

  it('a run whose metadata is not text fails the listing, as upstream’s list_runs does; large metadata lists as any other', (t) => {
    const s = need(t, pg);
    if (!s) return;
    const listing = (db: string): string => withReader(s.url(db), (r) => JSON.stringify(r.runs()));
    assert.equal(
      listing('meta_large'),
      withReader(s.url('old_small'), (r) => JSON.stringify(r.runs())),
    );
    for (const db of ['meta_null', 'meta_jsonb'])
      assert.throws(
        () => listing(db),
        (e: unknown) => e instanceof StoreError && /step_persistence_runs" row has wrong types \(run_id "/.test(e.message),
        db,
      );
  });

  it('only exact-case twins: refused, saying why (PostgresStepStore never reads them)', (t) => {
    const s = need(t, pg);
    if (!s) return;
    assert.throws(
      () => openStoreReader(s.url('only_twins', undefined, undefined, '?table=Steps')),
      (e: unknown) =>
        e instanceof StoreError &&
        /no steps_runs and steps_snapshots table; "Steps_runs", "Steps_snapshots" exist with exactly that case, which PostgresStepStore never reads/.test(
          e.message,
        ),
    );
    assert.throws(
      () => openStoreReader(s.url('only_twins')),
      /no step_persistence_runs and step_persistence_snapshots table \(not a PostgresStepStore/,
    );
  });
});
