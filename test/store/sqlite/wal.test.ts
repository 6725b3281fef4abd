/**
 * The page map next to a live writer (wal.ts, pages.ts): the wal-index header a reader trusts, the
 * frames of its snapshot, and a map taken through the log that is the map of the same database once
 * the log is checkpointed into the file. A log that is not the snapshot's gives no map.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { readPageMap } from '../../../src/store/sqlite/pages.js';
import { ALONE } from '../../helpers/page-hashing.js';
import {
  readWalSnapshot,
  recoveredLog,
  sameSnapshot,
  walPageOffsets,
  type WalLog,
  type WalSnapshot,
} from '../../../src/store/sqlite/wal.js';
import { appendRun, liveWriter } from '../../../scripts/bench/mutations.js';
import { threadedStore } from '../../helpers/random-stores.js';
import { tempDir } from '../../helpers/stores.js';

const FRAME = 24 + 4096;

function layout(db: Database.Database): { root: number; runIdColumn: number } {
  const root = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'snapshots'").pluck().get() as number;
  const cols = db.prepare("SELECT name FROM pragma_table_info('snapshots') ORDER BY cid").pluck().all() as string[];
  return { root, runIdColumn: cols.indexOf('run_id') };
}

/** A store with a writer holding its log open, after `commits` appended runs (each a commit of its own). */
function liveStore(seed: number, commits: number): { path: string; live: Database.Database } {
  const { path } = threadedStore(seed, 40);
  const live = liveWriter(path);
  for (let i = 0; i < commits; i++) appendRun(path);
  return { path, live };
}

/** Whether recovering the log at `wal` itself finds `snapshot` (then it comes with its frames' pages). */
const recoversAs = (wal: string, snapshot: WalSnapshot): boolean => recoveredLog(wal, snapshot) !== null;

/** The snapshot its log recovers as, with its frames' pages: what open.ts keeps for the map. */
function checked(path: string, snapshot: WalSnapshot): WalLog {
  const log = recoveredLog(`${path}-wal`, snapshot);
  assert.ok(log !== null, 'the log recovers as the header says');
  return log;
}

test('the wal-index header names the log a reader sees: its frames, the size of its last commit, its salts', () => {
  const { path, live } = liveStore(61, 3);
  try {
    const s = readWalSnapshot(`${path}-shm`);
    assert.ok(s !== null);
    assert.equal(s.pageSize, 4096);
    assert.equal(s.mxFrame, (statSync(`${path}-wal`).size - 32) / FRAME);
    assert.equal(s.nPage, live.pragma('page_count', { simple: true }));
    assert.deepEqual(s.salt, readFileSync(`${path}-wal`).subarray(16, 24));
    assert.ok(sameSnapshot(s, readWalSnapshot(`${path}-shm`)), 'no commit between two reads');
    // each page of the log at its latest frame, from the pages recovery met
    const at = walPageOffsets(checked(path, s));
    assert.equal(at.length, s.nPage + 1);
    const log = readFileSync(`${path}-wal`);
    const latest = new Map<number, number>();
    for (let i = 0; i < s.mxFrame; i++) latest.set(log.readUInt32BE(32 + i * FRAME), 32 + i * FRAME + 24);
    assert.ok(latest.size > 0);
    for (let p = 1; p <= s.nPage; p++) assert.equal(at[p], latest.get(p) ?? 0, `page ${p}`);
    appendRun(path);
    assert.ok(!sameSnapshot(s, readWalSnapshot(`${path}-shm`)), 'a commit moves it');
  } finally {
    live.close();
  }
});

test('a header that cannot be trusted is none: copies that differ, a failed checksum, another version, no file', () => {
  const { path, live } = liveStore(62, 1);
  try {
    const shm = readFileSync(`${path}-shm`);
    const dir = tempDir();
    const at = (name: string, change: (b: Buffer) => void): string => {
      const b = Buffer.from(shm);
      change(b);
      const f = join(dir, name);
      writeFileSync(f, b);
      return f;
    };
    assert.ok(readWalSnapshot(at('good', () => {})) !== null);
    assert.equal(readWalSnapshot(at('torn', (b) => (b[48 + 16] ^= 1))), null, 'the second copy differs');
    assert.equal(
      readWalSnapshot(
        at('sum', (b) => {
          b[16] ^= 1;
          b[48 + 16] ^= 1;
        }),
      ),
      null,
      'both copies, checksum not redone',
    );
    assert.equal(
      readWalSnapshot(
        at('version', (b) => {
          b[0] ^= 1;
          b[48] ^= 1;
        }),
      ),
      null,
    );
    writeFileSync(join(dir, 'short'), shm.subarray(0, 60));
    assert.equal(readWalSnapshot(join(dir, 'short')), null);
    assert.equal(readWalSnapshot(at('zero', (b) => b.fill(0))), null, 'not initialised');
    assert.equal(readWalSnapshot(join(dir, 'missing')), null);
  } finally {
    live.close();
  }
});

test('a map taken through the log is the map of the same database checkpointed into the file', () => {
  const { path, live } = liveStore(63, 4);
  const { root, runIdColumn } = layout(live);
  const dir = tempDir();
  try {
    // pages past the main file's end are in the log only
    const s = readWalSnapshot(`${path}-shm`)!;
    assert.ok(s.nPage * 4096 > statSync(path).size);
    const through = readPageMap(path, root, runIdColumn, 77, null, ALONE, null, {
      wal: `${path}-wal`,
      shm: `${path}-shm`,
      log: checked(path, s),
    });
    assert.ok(through !== null);
    // the file alone is an older database
    const fileAlone = readPageMap(path, root, runIdColumn, 77, null, ALONE);
    assert.ok(fileAlone !== null);
    assert.notDeepEqual(fileAlone.runs, through.runs);
    live.pragma('wal_checkpoint(TRUNCATE)');
    const copy = join(dir, 'checkpointed.db');
    copyFileSync(path, copy);
    const after = readPageMap(copy, root, runIdColumn, 77, null, ALONE);
    assert.ok(after !== null);
    assert.deepEqual(Buffer.from(through.digests.buffer), Buffer.from(after.digests.buffer));
    assert.deepEqual(through.runs, after.runs);
    assert.deepEqual(through.tree, after.tree);
  } finally {
    live.close();
  }
});

test('a log that is not the snapshot’s gives no map: restarted since (other salts), or a snapshot past its end', () => {
  const { path, live } = liveStore(64, 2);
  const { root, runIdColumn } = layout(live);
  try {
    const s = readWalSnapshot(`${path}-shm`)!;
    const log = checked(path, s);
    const view = (l: WalLog) => ({ wal: `${path}-wal`, shm: `${path}-shm`, log: l });
    assert.ok(readPageMap(path, root, runIdColumn, 5, null, ALONE, null, view(log)) !== null);
    // more frames than the log holds, or a last frame that is not the commit the snapshot names
    assert.equal(recoveredLog(`${path}-wal`, { ...s, mxFrame: s.mxFrame + 1 }), null);
    assert.equal(recoveredLog(`${path}-wal`, { ...s, mxFrame: s.mxFrame - 1 }), null);
    // the log checkpointed and started over: new salts in its header and frames
    live.pragma('wal_checkpoint(TRUNCATE)');
    appendRun(path);
    const now = readWalSnapshot(`${path}-shm`)!;
    assert.notDeepEqual(now.salt, s.salt);
    assert.equal(recoveredLog(`${path}-wal`, s), null);
    // a map whose log restarted after its snapshot was checked (frames read where the old ones were)
    assert.equal(readPageMap(path, root, runIdColumn, 5, null, ALONE, null, view(log)), null);
    assert.ok(readPageMap(path, root, runIdColumn, 5, null, ALONE, null, view(checked(path, now))) !== null);
  } finally {
    live.close();
  }
});

test('the header is kept only when recovering the log gives it: not past a commit it does not index, not over a frame whose checksum fails', () => {
  const { path, live } = liveStore(65, 2);
  const dir = tempDir();
  try {
    const s = readWalSnapshot(`${path}-shm`)!;
    assert.equal(recoversAs(`${path}-wal`, s), true);
    // bytes past the last commit that are no frame of this log (an unfinished write): recovery stops there
    const log = join(dir, 'tail-wal');
    copyFileSync(`${path}-wal`, log);
    appendFileSync(log, Buffer.alloc(FRAME * 2, 7));
    assert.equal(recoversAs(log, s), true);
    // a commit the header does not know of (a writer that stopped before indexing it): recovery reads it
    appendRun(path);
    assert.equal(recoversAs(`${path}-wal`, s), false);
    const now = readWalSnapshot(`${path}-shm`)!;
    assert.equal(recoversAs(`${path}-wal`, now), true);
    // one byte of a frame's page changed: its checksum fails, recovery ends before it
    const bytes = readFileSync(`${path}-wal`);
    const edited = join(dir, 'edited-wal');
    bytes[32 + FRAME * (now.mxFrame - 1) + 24 + 100] ^= 1;
    writeFileSync(edited, bytes);
    assert.equal(recoversAs(edited, now), false);
    // a log whose header checksum fails holds nothing to recovery
    const badHeader = Buffer.from(readFileSync(`${path}-wal`));
    badHeader[12] ^= 1;
    writeFileSync(edited, badHeader);
    assert.equal(recoversAs(edited, now), false);
    assert.equal(recoversAs(join(dir, 'missing-wal'), now), false);
  } finally {
    live.close();
  }
});

/** SQLite's log checksum over `b` (pairs of 32-bit words read big- or little-endian), continued from `s`. */
function logChecksum(b: Buffer, bigEndian: boolean, s: [number, number]): [number, number] {
  let [s1, s2] = s;
  for (let i = 0; i < b.length; i += 8) {
    const x0 = bigEndian ? b.readUInt32BE(i) : b.readUInt32LE(i);
    const x1 = bigEndian ? b.readUInt32BE(i + 4) : b.readUInt32LE(i + 4);
    s1 = (s1 + x0 + s2) >>> 0;
    s2 = (s2 + x1 + s1) >>> 0;
  }
  return [s1, s2];
}

test('a log whose checksums are big-endian (written on such a machine) recovers as SQLite recovers it', () => {
  const { path, live } = liveStore(66, 2);
  const dir = tempDir();
  try {
    // the same log, its magic and every checksum made big-endian, beside a copy of the file
    const log = Buffer.from(readFileSync(`${path}-wal`));
    log.writeUInt32BE(0x377f0683, 0);
    let sum = logChecksum(log.subarray(0, 24), true, [0, 0]);
    log.writeUInt32BE(sum[0], 24);
    log.writeUInt32BE(sum[1], 28);
    const frames = (log.length - 32) / FRAME;
    let last = 0;
    for (let i = 0; i < frames; i++) {
      const h = 32 + i * FRAME;
      sum = logChecksum(log.subarray(h, h + 8), true, sum);
      sum = logChecksum(log.subarray(h + 24, h + FRAME), true, sum);
      log.writeUInt32BE(sum[0], h + 16);
      log.writeUInt32BE(sum[1], h + 20);
      if (log.readUInt32BE(h + 4) !== 0) last = i;
    }
    const copy = join(dir, 'sessions.db');
    copyFileSync(path, copy);
    writeFileSync(`${copy}-wal`, log);
    const h = 32 + last * FRAME;
    const s = readWalSnapshot(`${path}-shm`)!;
    const snapshot: WalSnapshot = { ...s, checksum: [log.readUInt32BE(h + 16), log.readUInt32BE(h + 20)] };
    assert.equal(snapshot.mxFrame, last + 1);
    assert.equal(recoversAs(`${copy}-wal`, snapshot), true);
    assert.equal(recoversAs(`${copy}-wal`, s), false, 'the little-endian checksum is not this log’s');
    // SQLite reads the log as it recovers it: every row the writer committed
    const db = new Database(copy, { readonly: true });
    try {
      assert.equal(
        db.prepare('SELECT COUNT(*) FROM snapshots').pluck().get(),
        live.prepare('SELECT COUNT(*) FROM snapshots').pluck().get(),
      );
    } finally {
      db.close();
    }
  } finally {
    live.close();
  }
});
