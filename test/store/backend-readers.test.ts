/**
 * Every parity store, read from its File, Postgres and Redis copy (written by the real harness store
 * classes), gives what the SQLite store gives: runs (order and fields), complete and interrupted
 * snapshots per run (seq order, step, timestamp, parsed messages), counts, media, and the replayed
 * record (rendered text and keys). Real servers, started here; skipped with a reason when absent.
 */
import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseJson } from '../../src/py/json-parse.js';
import type { JsonValue } from '../../src/py/json-value.js';
import { messageKeys } from '../../src/history/keys.js';
import { toMessage } from '../../src/history/messages.js';
import { RunReplayer } from '../../src/history/replay.js';
import { pyJsonDumps } from '../../src/py/repr.js';
import { renderRecordMessage } from '../../src/render/record.js';
import { MediaCache, restoreMedia } from '../../src/history/media.js';
import { openStoreReader } from '../../src/store/open-reader.js';
import type { StoreReader, StoreSnapshot } from '../../src/store/reader.js';
import {
  FIXTURES,
  SHARED_FIXTURES,
  SQLITE_FIXTURES,
  STORES,
  startPostgres,
  startRedis,
  type PgServer,
  type RedisServer,
  type StoreName,
} from '../helpers/servers.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { tempDir } from '../helpers/stores.js';

let pg: PgServer | string = 'not started';
let redis: RedisServer | string = 'not started';
const fileCopies = new Map<StoreName, string>();

before(async () => {
  pg = await startPostgres();
  redis = await startRedis();
  const root = tempDir();
  STORES.forEach((store, db) => {
    // a private copy: the fixture tree stays as committed whatever a reader did
    cpSync(join(FIXTURES, 'file', store), join(root, store), { recursive: true });
    fileCopies.set(store, join(root, store));
    if (typeof pg !== 'string') pg.createDb(store, join(FIXTURES, 'postgres', `${store}.sql`));
    if (typeof redis !== 'string') redis.load(db, join(FIXTURES, 'redis', `${store}.redis`));
  });
});

after(() => {
  if (typeof pg !== 'string') pg.stop();
  if (typeof redis !== 'string') redis.stop();
});

type Backend = 'file' | 'postgres' | 'redis';
const BACKENDS: Backend[] = ['file', 'postgres', 'redis'];

/** Opens a backend copy of a store, or returns why it cannot (server missing). */
function openBackend(backend: Backend, store: StoreName): StoreReader | string {
  if (backend === 'file') return openStoreReader(fileCopies.get(store)!) as StoreReader;
  if (backend === 'postgres') return typeof pg === 'string' ? pg : (openStoreReader(pg.url(store)) as StoreReader);
  return typeof redis === 'string' ? redis : (openStoreReader(redis.url(STORES.indexOf(store))) as StoreReader);
}

function withBackend(t: TestContext, backend: Backend, store: StoreName, body: (r: StoreReader, sqlite: StoreReader) => void): void {
  const r = openBackend(backend, store);
  if (typeof r === 'string') {
    t.skip(r);
    return;
  }
  const sqlite = openSqliteReader(join(SQLITE_FIXTURES, `${store}.db`));
  try {
    body(r, sqlite);
  } finally {
    r.close();
    sqlite.close();
  }
}

const lookup = (r: StoreReader): MediaCache => new MediaCache(r);

/** The messages of a snapshot as values: parsed, media markers restored, rendered as Python's json.dumps. */
function messageValues(r: StoreReader, s: StoreSnapshot): string {
  assert.equal(typeof s.messages, 'string', `snapshot ${s.seq} is readable`);
  return pyJsonDumps(restoreMedia(parseJson(s.messages as string), lookup(r)));
}

/**
 * The messages as pydantic compares them (field order free, any base64 alphabet): their canonical keys.
 * Redis holds the media store's content inline in pydantic's own field order, where SQLite restores
 * a marker (fields of the marker first).
 */
function messageModels(r: StoreReader, s: StoreSnapshot): string[] {
  const v = restoreMedia(parseJson(s.messages as string), lookup(r)) as JsonValue[];
  return v.map((m, i) => messageKeys(toMessage(m, i)).strict);
}

function runFields(r: StoreReader): unknown[] {
  return r
    .runs()
    .map(({ runId, conversationId, parentRunId, agentName, startedAt }) => ({ runId, conversationId, parentRunId, agentName, startedAt }));
}

for (const store of STORES) {
  describe(`${store} store`, () => {
    for (const backend of BACKENDS) {
      it(`${backend}: runs in SQLite's order with the same fields; rowids 1..n`, (t) => {
        withBackend(t, backend, store, (r, sqlite) => {
          assert.deepEqual(runFields(r), runFields(sqlite));
          assert.deepEqual(
            r.runs().map((run) => run.rowid),
            r.runs().map((_, i) => i + 1),
          );
          assert.equal(r.runCount(), sqlite.runCount());
          assert.deepEqual(r.notices(), []);
        });
      });

      it(`${backend}: one run's snapshot counts and last step, read alone, equal the whole-store scan's and SQLite's`, (t) => {
        withBackend(t, backend, store, (r, sqlite) => {
          const whole = (x: StoreReader, id: string) => {
            const c = x.countsByRun().get(id);
            return { complete: c?.complete ?? 0, interrupted: c?.interrupted ?? 0, lastStep: x.lastSteps().get(id) ?? null };
          };
          for (const id of [...sqlite.runs().map((run) => run.runId), 'no-such-run']) {
            // a fresh reader each time: nothing cached by an earlier whole-store scan answers for the one run
            const alone = openBackend(backend, store) as StoreReader;
            try {
              assert.deepEqual(alone.runSnapshotStats(id), whole(r, id), id);
            } finally {
              alone.close();
            }
            assert.deepEqual(sqlite.runSnapshotStats(id), whole(sqlite, id), id);
            assert.deepEqual(r.runSnapshotStats(id), sqlite.runSnapshotStats(id), id);
          }
        });
      });

      it(`${backend}: complete and interrupted snapshots per run equal SQLite's (seq order, step, timestamp, messages)`, (t) => {
        withBackend(t, backend, store, (r, sqlite) => {
          let compared = 0;
          for (const run of sqlite.runs()) {
            for (const kind of ['completeSnapshots', 'interruptedSnapshots'] as const) {
              const want = [...sqlite[kind](run.runId)];
              const got = [...r[kind](run.runId)];
              assert.equal(got.length, want.length, `${run.runId} ${kind} count`);
              got.forEach((s, i) => {
                const w = want[i]!;
                if (i > 0) assert.ok(s.seq > got[i - 1]!.seq, 'seq ascending');
                assert.equal(s.stepIndex, w.stepIndex);
                assert.equal(s.timestamp, w.timestamp);
                if (backend === 'redis' && store === 'media') assert.deepEqual(messageModels(r, s), messageModels(sqlite, w));
                else assert.equal(messageValues(r, s), messageValues(sqlite, w));
                // File, Postgres (and Redis' older payloads) hold json.dumps text: the same bytes as SQLite's column
                if (backend !== 'redis') assert.equal(s.messages, w.messages);
                compared++;
              });
            }
          }
          assert.ok(compared > 0);
        });
      });

      it(`${backend}: counts, watermarks, last steps and resumption marks agree with the snapshots`, (t) => {
        withBackend(t, backend, store, (r, sqlite) => {
          assert.deepEqual(r.countsByRun(), sqlite.countsByRun());
          assert.deepEqual(r.lastSteps(), sqlite.lastSteps());
          const marks = r.watermarks();
          assert.deepEqual([...marks.keys()].sort(), [...sqlite.watermarks().keys()].sort());
          for (const run of r.runs()) {
            const complete = [...r.completeSnapshots(run.runId)];
            const all = [...complete, ...r.interruptedSnapshots(run.runId)];
            const mark = marks.get(run.runId);
            if (all.length === 0) {
              assert.equal(mark, undefined);
              continue;
            }
            assert.equal(mark!.count, sqlite.watermarks().get(run.runId)!.count);
            assert.equal(mark!.maxSeq, Math.max(...all.map((s) => s.seq)));
            complete.forEach((s, k) => {
              assert.deepEqual(r.completeUpToSeq(run.runId, s.seq), { count: k + 1, maxSeq: s.seq });
              assert.deepEqual(
                [...r.completeSnapshotsAfter(run.runId, s.seq)].map((x) => x.seq),
                complete.slice(k + 1).map((x) => x.seq),
              );
            });
          }
        });
      });

      it(`${backend}: the replayed record renders and keys exactly as from SQLite`, (t) => {
        withBackend(t, backend, store, (r, sqlite) => {
          for (const run of sqlite.runs()) {
            const replay = (reader: StoreReader): unknown[] => {
              const p = new RunReplayer(run.runId, lookup(reader));
              for (const s of reader.completeSnapshots(run.runId)) p.add(s);
              const res = p.result();
              assert.deepEqual(res.skipped, []);
              return res.messages.map((m) => {
                const d = renderRecordMessage(m);
                return { text: d.text, parts: d.parts, timestamp: d.timestamp, step: d.firstStep, keys: m.keys };
              });
            };
            assert.deepEqual(replay(r), replay(sqlite));
          }
        });
      });

      it(`${backend}: runs read out of order, interleaved with other calls (read-ahead guessing wrong), give the same snapshots`, (t) => {
        withBackend(t, backend, store, (r) => {
          const runs = r.runs();
          const forward = new Map(runs.map((run) => [run.runId, JSON.stringify([...r.completeSnapshots(run.runId)])]));
          for (const run of [...runs].reverse()) {
            const it = r.completeSnapshots(run.runId)[Symbol.iterator]();
            const first = it.next();
            r.countsByRun();
            [...r.interruptedSnapshots(run.runId)];
            const rest = [...{ [Symbol.iterator]: () => it }];
            assert.equal(JSON.stringify(first.done ? [] : [first.value, ...rest]), forward.get(run.runId));
          }
        });
      });

      it(`${backend}: media by digest as SQLite holds it (Redis: inline, none)`, (t) => {
        withBackend(t, backend, store, (r, sqlite) => {
          const s = openSqliteReader(join(SQLITE_FIXTURES, `${store}.db`));
          const shas = s.file.schema.hasMedia ? (s.file.db.prepare('SELECT sha256 FROM media').pluck().all() as string[]) : [];
          s.close();
          for (const sha of shas) {
            if (backend === 'redis') assert.equal(r.media(sha), null);
            else assert.deepEqual(r.media(sha), sqlite.media(sha));
          }
          assert.equal(r.media('0'.repeat(64)), null);
          if (store === 'media') assert.ok(shas.length > 0);
        });
      });

      it(`${backend}: a stable stamp, an identity without credentials, unchanged() while nothing writes`, (t) => {
        withBackend(t, backend, store, (r) => {
          const f = r.stamp();
          r.runs();
          for (const run of r.runs()) [...r.completeSnapshots(run.runId)];
          assert.equal(r.stamp(), f);
          assert.equal(r.unchanged(), true);
          const again = openBackend(backend, store) as StoreReader;
          assert.equal(again.stamp(), f);
          assert.equal(again.identity, r.identity);
          again.close();
        });
      });
    }
  });
}

describe('backend fixtures', () => {
  it('the repository copy equals ../shared/parity/backends when that is present', (t) => {
    try {
      statSync(SHARED_FIXTURES);
    } catch {
      t.skip('no ../shared/parity/backends beside this checkout');
      return;
    }
    const list = (root: string, rel = ''): string[] =>
      readdirSync(join(root, rel), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? list(root, join(rel, e.name)) : [join(rel, e.name)],
      );
    for (const kind of ['file', 'postgres', 'redis']) {
      const names = list(join(SHARED_FIXTURES, kind)).sort();
      assert.deepEqual(list(join(FIXTURES, kind)).sort(), names);
      for (const n of names) assert.ok(readFileSync(join(FIXTURES, kind, n)).equals(readFileSync(join(SHARED_FIXTURES, kind, n))), n);
    }
  });
});
