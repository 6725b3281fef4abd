/**
 * Issue 21: the SQLite content check does not read the media table again while the pages it lives on
 * are those the index saw (the page map's fingerprint of the media b-tree, kept with the map). Each
 * test changes a store holding externalized text in one way, then checks that the content check
 * returned exactly the media digest a full read gives, counts the media rows it read (never times),
 * and compares searches through the index with a replay.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { appendRun, liveWriter } from '../../scripts/bench/mutations.js';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { pyJsonDumpsAscii } from '../../scripts/lib/py-json.js';
import { externalizeMedia } from '../../scripts/lib/store-writer.js';
import { userRequest } from '../../scripts/lib/messages.js';
import type { StoreContent } from '../../src/store/content.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { rowSum } from '../../src/sidecar/checksum.js';
import { IndexDamagedError } from '../../src/sidecar/errors.js';
import { SqliteIndexDb } from '../../src/sidecar/index-db.js';
import { INDEX_DDL } from '../../src/sidecar/schema.js';
import { IndexTables } from '../../src/sidecar/tables.js';
import type { SyncReport } from '../../src/sidecar/sync.js';
import { openIndexedSource } from '../../src/sidecar/with-index.js';
import { BIN, runCliAsync } from '../helpers/cli.js';
import { assertSameAnswers, patchFile } from '../helpers/index-answers.js';
import { vocab } from '../helpers/random-stores.js';
import { addRun, addSnapshot, assistantMsg, buildStore, tempDir, userMsg } from '../helpers/stores.js';

type Runs = Array<{ id: string; conv: string | null }>;

/**
 * Runs whose first prompt (about 7 KB, over the 1 KiB threshold: a media row that begins on a leaf page
 * and ends on an overflow page) holds `mstart<i>x` at its start and `mword<i>x` at its end.
 */
function mediaStore(seed: number, count = 10): { path: string; runs: Runs } {
  const random = rng(seed * 7919);
  const runs: Runs = [];
  const path = buildStore(
    (w) => {
      for (let i = 0; i < count; i++) {
        const id = `mrun-${seed}-${i}`;
        const conv = `conv-${i % 3}`;
        addRun(w, id, conv, i * 60);
        const first = [
          userMsg(`mstart${i}x ${vocab.text(random, 900)} mword${i}x`, i * 60 + 1),
          assistantMsg(vocab.text(random, 8), i * 60 + 2),
        ];
        addSnapshot(w, id, first);
        if (i % 2 === 0)
          addSnapshot(w, id, [...first, userMsg(vocab.text(random, 6), i * 60 + 3), assistantMsg(vocab.text(random, 5), i * 60 + 4)], {
            stepIndex: 2,
          });
        runs.push({ id, conv });
      }
    },
    { thresholdBytes: 1024 },
  );
  return { path, runs };
}

function storeValue(path: string, sql: string): unknown {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(sql).pluck().get();
  } finally {
    db.close();
  }
}

/** Runs `sql` on the store, as another writer process would. */
function storeExec(path: string, sql: string): void {
  const db = new Database(path);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

const mediaRows = (path: string): number => storeValue(path, 'SELECT COUNT(*) FROM media') as number;

/**
 * Brings the index up to date, as a search does; what the sync did and, per content check, the media
 * rows it read. Every content check's media verdict is compared with a full read of the same store.
 */
function sync(path: string, index: string): { report: SyncReport; mediaRead: Array<number | undefined> } {
  const store = openSqliteReader(path);
  const mediaRead: Array<number | undefined> = [];
  const content = store.content.bind(store);
  store.content = (cuts, mediaCut, basis): StoreContent => {
    const c = content(cuts, mediaCut, basis);
    const full = content(cuts, mediaCut);
    assert.deepEqual(c.media, full.media, 'the media verdict of a full read');
    // (a build whose replay digests the runs: the digest stands for nothing yet, sync.ts replayedContent completes it)
    if (!c.runsElsewhere) assert.equal(c.digest, full.digest);
    mediaRead.push(c.mediaDigested);
    return c;
  };
  try {
    const opened = openIndexedSource(store, { path: index });
    opened.db.close();
    return { report: opened.report, mediaRead };
  } finally {
    store.close();
  }
}

/** One run appended: the content check reads no media row, and answers equal --no-index. */
function appendReadsNoMedia(path: string, index: string, runs: Runs, seed: number, ...words: string[]): void {
  appendRun(path);
  assert.deepEqual(sync(path, index).mediaRead, [0], 'the media pages are those the index saw');
  assertSameAnswers(path, index, runs, seed, ...words);
}

function indexedMediaStore(seed: number): { path: string; index: string; runs: Runs } {
  const { path, runs } = mediaStore(seed);
  assert.ok(mediaRows(path) >= 10, 'the prompts were externalized');
  const index = join(tempDir(), 'idx.db');
  const first = sync(path, index);
  assert.deepEqual(first.mediaRead, [mediaRows(path)], 'a first build reads every media row');
  return { path, index, runs };
}

/** Inserts a run whose one snapshot externalizes `text` into the media table, as the harness writes it. */
function addMediaRun(path: string, id: string, text: string): void {
  const db = new Database(path);
  try {
    const put = (bytes: Buffer, mediaType: string | null): string => {
      const sha = createHash('sha256').update(bytes).digest('hex');
      db.prepare("INSERT OR IGNORE INTO media (sha256, media_type, bytes, size_bytes, metadata) VALUES (?, ?, ?, ?, '{}')").run(
        sha,
        mediaType,
        bytes,
        bytes.length,
      );
      return sha;
    };
    const messages = pyJsonDumpsAscii(externalizeMedia([userRequest(text, { timestamp: '2027-01-01T00:00:00Z' })], put, 1024));
    db.transaction(() => {
      db.prepare(
        "INSERT INTO runs (run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) VALUES (?, 'conv-9', NULL, NULL, '{}', '2027-01-01T00:00:00')",
      ).run(id);
      db.prepare(
        "INSERT INTO snapshots (run_id, step_index, timestamp, state, messages) VALUES (?, 1, '2027-01-01T00:00:01', 'complete', ?)",
      ).run(id, messages);
    })();
  } finally {
    db.close();
  }
}

test('after an appended run the content check reads no media row, twice in a row; answers equal --no-index', () => {
  const { path, index, runs } = indexedMediaStore(41);
  appendRun(path);
  const r = sync(path, index);
  assert.equal(r.report.contentChecked, true);
  assert.equal(r.report.runsReplayed, 1);
  assert.deepEqual(r.mediaRead, [0], 'the media pages are those the index saw');
  assertSameAnswers(path, index, runs, 1, 'mword3x', 'mstart4x');
  // the fingerprint written by the last update vouches for the next
  appendReadsNoMedia(path, index, runs, 2, 'mword5x');
});

test('a same-length edit inside one media blob, in place with the mtime restored (overflow page, then leaf page): noticed', () => {
  const { path, index, runs } = indexedMediaStore(42);
  patchFile(path, 'mword3x', 'mword3y');
  let r = sync(path, index);
  assert.equal(r.report.contentChecked, true);
  assert.deepEqual(r.mediaRead, [mediaRows(path)], 'the media are read again');
  assert.ok(r.report.runsReplayed >= 1, 'the runs that read media were replayed');
  assertSameAnswers(path, index, runs, 3, 'mword3y', 'mword3x');

  patchFile(path, 'mstart6x', 'mstart6q');
  r = sync(path, index);
  assert.deepEqual(r.mediaRead, [mediaRows(path)]);
  assertSameAnswers(path, index, runs, 4, 'mstart6q', 'mstart6x');
  appendReadsNoMedia(path, index, runs, 5, 'mstart6q', 'mword3y');
});

test('media rows moved by a VACUUM, and a page taken from the freelist for a media row: read again, answers equal --no-index', () => {
  const { path, index, runs } = indexedMediaStore(43);
  // free the pages of early snapshots: the VACUUM moves the media table's pages down
  // (and from here a rollback journal, not a WAL)
  storeExec(path, "PRAGMA journal_mode = DELETE; DELETE FROM snapshots WHERE step_index = 2 AND run_id IN ('mrun-43-0', 'mrun-43-2')");
  sync(path, index);
  storeExec(path, 'VACUUM');
  let r = sync(path, index);
  assert.deepEqual(r.mediaRead, [mediaRows(path)], 'moved pages: read again');
  assert.equal(r.report.runsReplayed, 0, 'the same media: nothing replayed');
  assertSameAnswers(path, index, runs, 6, 'mword1x');

  // a media row deleted (its pages go to the freelist), then one of the same size written over them
  const sha = storeValue(path, "SELECT sha256 FROM media WHERE CAST(bytes AS TEXT) LIKE 'mstart2x%'") as string;
  const w = new Database(path);
  const row = w.prepare('SELECT media_type, bytes, size_bytes FROM media WHERE sha256 = ?').get(sha) as {
    media_type: string;
    bytes: Buffer;
    size_bytes: number;
  };
  w.prepare('DELETE FROM media WHERE sha256 = ?').run(sha);
  w.close();
  r = sync(path, index);
  assert.deepEqual(r.mediaRead, [mediaRows(path)]);
  assertSameAnswers(path, index, runs, 7, 'mword2x');
  const freelist = storeValue(path, 'PRAGMA freelist_count') as number;
  assert.ok(freelist > 0, 'the deleted row left free pages');
  const again = new Database(path);
  const bytes = Buffer.from(row.bytes.toString('latin1').replace('mstart2x', 'mstart2z'), 'latin1');
  again
    .prepare('INSERT INTO media (sha256, media_type, bytes, size_bytes, metadata) VALUES (?, ?, ?, ?, ?)')
    .run(sha, row.media_type, bytes, row.size_bytes, '{}');
  again.close();
  assert.ok((storeValue(path, 'PRAGMA freelist_count') as number) < freelist, 'the new row took free pages');
  r = sync(path, index);
  assert.deepEqual(r.mediaRead, [mediaRows(path)]);
  assert.ok(r.report.runsReplayed >= 1);
  assertSameAnswers(path, index, runs, 8, 'mstart2z', 'mstart2x', 'mword2x');
});

test('a media row added (with a run that reads it), then one deleted: read again, answers equal --no-index', () => {
  const { path, index, runs } = indexedMediaStore(44);
  addMediaRun(path, 'mrun-new', `addedword ${vocab.text(rng(5), 400)}`);
  let r = sync(path, index);
  assert.deepEqual(r.mediaRead, [mediaRows(path)]);
  assert.equal(r.report.runsReplayed, 1);
  const all = [...runs, { id: 'mrun-new', conv: 'conv-9' }];
  assertSameAnswers(path, index, all, 9, 'addedword');
  // a media row no run reads
  storeExec(path, "INSERT INTO media (sha256, media_type, bytes, size_bytes, metadata) VALUES ('00', 'text/plain', X'41', 1, '{}')");
  r = sync(path, index);
  assert.deepEqual(r.mediaRead, [mediaRows(path)]);
  assertSameAnswers(path, index, all, 10);
  storeExec(path, "DELETE FROM media WHERE CAST(bytes AS TEXT) LIKE 'mstart5x%'");
  r = sync(path, index);
  assert.deepEqual(r.mediaRead, [mediaRows(path)]);
  assertSameAnswers(path, index, all, 11, 'mword5x', 'mstart5x');
  appendReadsNoMedia(path, index, all, 12, 'addedword');
});

test('a writer in WAL mode edits media, then checkpoints and leaves: answers equal --no-index throughout, the fingerprint taken through its log', () => {
  const { path, index, runs } = indexedMediaStore(45);
  const live = liveWriter(path);
  try {
    live.exec(
      "UPDATE media SET bytes = CAST(replace(CAST(bytes AS TEXT), 'mword7x', 'mword7w') AS BLOB) WHERE CAST(bytes AS TEXT) LIKE '%mword7x'",
    );
    assertSameAnswers(path, index, runs, 13, 'mword7w', 'mword7x');
    live.pragma('wal_checkpoint(TRUNCATE)');
    assertSameAnswers(path, index, runs, 14, 'mword7w');
    live.exec(
      "UPDATE media SET bytes = CAST(replace(CAST(bytes AS TEXT), 'mword8x', 'mword8w') AS BLOB) WHERE CAST(bytes AS TEXT) LIKE '%mword8x'",
    );
    // the page map reads the pages as the writer's log shows them: the edit is seen, the media read once
    assert.deepEqual(sync(path, index).mediaRead, [mediaRows(path)]);
    assertSameAnswers(path, index, runs, 15, 'mword8w');
    assert.deepEqual(sync(path, index).mediaRead, [], 'nothing committed since: the stamp vouches');
  } finally {
    live.close();
  }
  // checkpointed into the file, no -wal: the same pages the map read through the log, not read again
  const r = sync(path, index);
  assert.equal(r.report.contentChecked, true);
  assert.deepEqual(r.mediaRead, [0]);
  assertSameAnswers(path, index, runs, 16, 'mword8w', 'mword7w');
  appendReadsNoMedia(path, index, runs, 17, 'mword8w');
});

test('an index kept without a media fingerprint (an older convsearch) reads the media once, then keeps one', () => {
  const { path, index, runs } = indexedMediaStore(46);
  // row 1 as an older convsearch writes it: its head names the content and the key only
  const db = new Database(index);
  const row = db.prepare('SELECT head, digests FROM pages WHERE id = 1').get() as { head: string; digests: Buffer };
  const head = JSON.parse(row.head) as Record<string, unknown>;
  assert.ok(head.media !== undefined, 'the fingerprint is kept in the head of row 1');
  delete head.media;
  const text = JSON.stringify(head);
  db.prepare('UPDATE pages SET head = ?, sum = ? WHERE id = 1').run(text, rowSum([1, text, row.digests]));
  db.close();
  appendRun(path);
  assert.deepEqual(sync(path, index).mediaRead, [mediaRows(path)]);
  appendReadsNoMedia(path, index, runs, 18, 'mword1x');
});

test('a media table without rowids: read in full at every change, answers equal --no-index', () => {
  const { path, runs } = mediaStore(47);
  storeExec(
    path,
    'CREATE TABLE media2 (sha256 TEXT PRIMARY KEY, media_type TEXT, bytes BLOB NOT NULL, size_bytes INTEGER NOT NULL, metadata TEXT) WITHOUT ROWID; INSERT INTO media2 SELECT * FROM media; DROP TABLE media; ALTER TABLE media2 RENAME TO media',
  );
  const index = join(tempDir(), 'idx.db');
  assert.deepEqual(sync(path, index).mediaRead, [mediaRows(path)]);
  appendRun(path);
  assert.deepEqual(sync(path, index).mediaRead, [mediaRows(path)]);
  patchFile(path, 'mword2x', 'mword2k');
  assert.deepEqual(sync(path, index).mediaRead, [mediaRows(path)]);
  assertSameAnswers(path, index, runs, 19, 'mword2k', 'mword2x');
});

test('8 processes share one index while media change between rounds, 2 more killed each round: every answer is --no-index', async () => {
  const { path, runs } = mediaStore(48, 8);
  const index = join(tempDir(), 'shared.idx');
  const search = (query: string, extra: string[]) => runCliAsync(['search', query, '--db', path, '--scope', 'all', '--json', ...extra]);
  const killed = (ms: number): Promise<unknown> => {
    const p = spawn(process.execPath, [BIN, 'search', 'mword1x', '--db', path, '--index', index, '--count'], { stdio: 'ignore' });
    const timer = setTimeout(() => p.kill('SIGKILL'), ms);
    return new Promise((resolve) => p.on('close', resolve)).finally(() => clearTimeout(timer));
  };
  const changes: Array<[string, () => void]> = [
    ['nothing', () => {}],
    ['an appended run', () => appendRun(path)],
    ['an in-place edit of a media blob', () => patchFile(path, 'mword1x', 'mword1v')],
    ['a media row added with its run', () => addMediaRun(path, 'mrun-new', `addedword mword1v ${vocab.text(rng(6), 400)}`)],
    ['an appended run', () => appendRun(path)],
    ['a media row deleted', () => storeExec(path, "DELETE FROM media WHERE CAST(bytes AS TEXT) LIKE 'mstart3x%'")],
    ['a VACUUM', () => storeExec(path, 'VACUUM')],
    ['an appended run', () => appendRun(path)],
  ];
  for (const [round, [what, change]] of changes.entries()) {
    change();
    const query = ['mword1x mword1v addedword', 'mstart3x mword3x', vocab.words[round]!][round % 3]!;
    const want = await search(query, ['--no-index']);
    assert.ok(want.status === 0 || want.status === 1, want.stderr);
    const kills = [killed(80 + ((round * 137) % 300)), killed(150 + ((round * 251) % 400))];
    const answers = await Promise.all(Array.from({ length: 8 }, () => search(query, ['--index', index])));
    await Promise.all(kills);
    answers.forEach((a, i) => {
      assert.equal(a.stderr, want.stderr, `round ${round} (${what}) reader ${i}: stderr`);
      assert.equal(a.status, want.status, `round ${round} (${what}) reader ${i}: status`);
      assert.equal(a.stdout, want.stdout, `round ${round} (${what}) reader ${i}: ${query}`);
    });
  }
  // settled: the index kept on disk answers as a replay
  assertSameAnswers(path, index, [...runs, { id: 'mrun-new', conv: 'conv-9' }], 20, 'mword1v', 'addedword');
  appendRun(path);
  assert.deepEqual(sync(path, index).mediaRead, [0]);
});

test('the media fingerprint is kept in the head of page map row 1: read back, absent for a head without it, damage when malformed', () => {
  const db = new Database(':memory:');
  db.exec(INDEX_DDL);
  const t = new IndexTables(new SqliteIndexDb(db));
  const digests = Uint32Array.from([1, 2, 3, 4]);
  const media = { pages: 'fingerprint', count: 3, digest: 'digest' };
  t.putPageMap('content-1', 7, digests, null, media);
  assert.deepEqual(t.pageMap()!.media, media);
  t.putPageMap('content-2', 7, digests, null, null);
  assert.equal(t.pageMap()!.media, null, 'a map taken without a fingerprint keeps none');
  const head = JSON.stringify({ content: 'content-3', seed: 7, media: { pages: 'fingerprint', count: '3', digest: 'digest' } });
  const empty = Buffer.alloc(0);
  db.prepare('UPDATE pages SET head = ?, digests = ?, sum = ? WHERE id = 1').run(head, empty, rowSum([1, head, empty]));
  assert.throws(() => t.pageMap(), IndexDamagedError);
});
