import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { simulateRun, textPart, toolCallPart } from '../../../scripts/lib/messages.js';
import { StepStoreWriter } from '../../../scripts/lib/store-writer.js';
import type { OpenMode } from '../../../src/store/sqlite/open.js';
import { openSqliteReader } from '../../../src/store/sqlite/reader.js';
import { cli, runCliAsync } from '../../helpers/cli.js';
import { addRun, addSnapshot, at, buildStore, tempDir, userMsg } from '../../helpers/stores.js';

const SIBLINGS = ['', '-wal', '-shm', '-journal'];

interface DirState {
  listing: string[];
  files: Record<string, { sha256: string; mtimeMs: number; mode: number }>;
}

function dirState(dir: string): DirState {
  const listing = readdirSync(dir).sort();
  const files: DirState['files'] = {};
  for (const name of listing) {
    const p = join(dir, name);
    const st = statSync(p);
    files[name] = { sha256: createHash('sha256').update(readFileSync(p)).digest('hex'), mtimeMs: st.mtimeMs, mode: st.mode };
  }
  return { listing, files };
}

/** Every read command, in each output format and scope. */
function commands(db: string): string[][] {
  const out: string[][] = [];
  for (const scope of [
    ['--scope', 'all'],
    ['--conversation', 'c1'],
    ['--run', 'r2'],
  ]) {
    for (const format of [['--format', 'human'], ['--format', 'tool'], ['--json'], ['--ndjson'], ['--plain'], ['--count']]) {
      out.push(['search', 'marmot', '--db', db, ...scope, ...format]);
    }
  }
  out.push(['search', 'vault', '--db', db, '--scope', 'all', '--json']);
  for (const cmd of [['runs'], ['conversations'], ['show', 'r1'], ['show', 'r2']]) {
    out.push([...cmd, '--db', db]);
    out.push([...cmd, '--db', db, '--json']);
    out.push([...cmd, '--db', db, '--ndjson']);
  }
  return out;
}

/**
 * Runs every command; checks each succeeded and found the row that may live only in the -wal. They run
 * in this process, and the first also as a process of its own (what a process's exit closes is checked
 * too); `processes` runs them all as processes, for a store whose writer is open in this process (its
 * SQLite would share the writer's -shm mapping with an in-process reader).
 */
async function runAll(db: string, cacheHome: string, processes = false): Promise<void> {
  const env = { XDG_CACHE_HOME: cacheHome };
  const all = commands(db);
  const results = processes
    ? await Promise.all(all.map((args) => runCliAsync(args, { env }).then((r) => ({ args, r }))))
    : [{ args: all[0]!, r: await runCliAsync(all[0]!, { env }) }];
  if (!processes) for (const args of all) results.push({ args, r: await cli(args, { env }) });
  for (const { args, r } of results) {
    assert.equal(r.status, 0, `${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
    assert.doesNotMatch(r.stderr, /convsearch: (error|warning)|\n\s+at /, `${args.join(' ')}: ${r.stderr}`);
    if (args[0] === 'search' && args[1] === 'marmot' && !args.includes('--count')) {
      assert.match(r.stdout, /MARMOT/, `${args.join(' ')} found the WAL row`);
    }
    if (args[0] === 'search' && args[1] === 'vault') assert.match(r.stdout, /vault/);
  }
  const show = results.find(({ args }) => args[0] === 'show' && args[1] === 'r2' && args.includes('--json'))!;
  assert.match(show.r.stdout, /MARMOT/);
}

/** Checks the open mode and that the library connection cannot write. */
function assertReadOnlyOpen(db: string, mode: OpenMode): void {
  const store = openSqliteReader(db);
  try {
    assert.equal(store.mode, mode);
    assert.equal(store.file.db.readonly, true);
    assert.throws(() => store.file.db.exec('CREATE TABLE convsearch_probe (x)'), /readonly|read-only/i);
    assert.throws(() => store.file.db.exec("UPDATE runs SET agent_name = 'x'"), /readonly|read-only/i);
  } finally {
    store.close();
  }
}

/** r1: a simulated run; r2 (conversation c1) holds MARMOT. */
function writeBase(w: StepStoreWriter): void {
  w.writeSimulatedRun(
    simulateRun({
      runId: 'r1',
      conversationId: 'c1',
      startedAt: at(0),
      prompt: 'audit the vault',
      steps: [
        { parts: [toolCallPart('open', { door: 1 }, 'c-1')], results: [{ content: 'door open' }] },
        { parts: [textPart('vault audited')] },
      ],
    }),
  );
}
function writeMarmot(w: StepStoreWriter): void {
  addRun(w, 'r2', 'c1', 100);
  addSnapshot(w, 'r2', [userMsg('where is the MARMOT?', 101)]);
}

/** A store whose r2 rows live only in the -wal, with the writer connection still open. */
function liveWalStore(): { dir: string; db: string; writer: StepStoreWriter } {
  const dir = tempDir();
  const db = join(dir, 'sessions.db');
  const writer = new StepStoreWriter(db);
  writer.db.pragma('wal_autocheckpoint = 0');
  writeBase(writer);
  writer.db.pragma('wal_checkpoint(TRUNCATE)');
  writeMarmot(writer);
  assert.ok(statSync(`${db}-wal`).size > 0 && existsSync(`${db}-shm`));
  return { dir, db, writer };
}

function copyInto(files: Array<[string, string]>): { dir: string; db: string } {
  const dir = tempDir();
  const db = join(dir, 'sessions.db');
  for (const [from, suffix] of files) copyFileSync(from, db + suffix);
  return { dir, db };
}

function assertMainFileLacksWalRows(db: string): void {
  // the main file alone (immutable, ignoring the -wal) must not have r2: it lives only in the -wal
  const dir = tempDir();
  copyFileSync(db, join(dir, 'main-only.db'));
  const store = openSqliteReader(join(dir, 'main-only.db'));
  try {
    assert.equal(store.file.db.prepare("SELECT count(*) FROM runs WHERE run_id = 'r2'").pluck().get(), 0);
  } finally {
    store.close();
  }
}

describe('every command leaves the store byte-identical and creates nothing beside it (§9.29)', { concurrency: false }, () => {
  const cache = tempDir();

  test('(a) a plain store without -wal', async () => {
    const db = buildStore((w) => {
      writeBase(w);
      writeMarmot(w);
    });
    const dir = join(db, '..');
    assert.deepEqual(readdirSync(dir), ['sessions.db']);
    const before = dirState(dir);
    await runAll(db, cache);
    assertReadOnlyOpen(db, 'immutable');
    assert.deepEqual(dirState(dir), before);
  });

  test('(b) a WAL store with live -wal/-shm and the writer connection open', async () => {
    const { dir, db, writer } = liveWalStore();
    try {
      assertMainFileLacksWalRows(db);
      const before = dirState(dir);
      await runAll(db, cache, true);
      assert.deepEqual(dirState(dir), before);
      // last: inside the writer's own process SQLite shares the writer's -shm mapping, so this
      // in-process reader may record read marks in it (a separate process, like the CLI, never does)
      assertReadOnlyOpen(db, 'wal-in-place');
    } finally {
      writer.close();
    }
  });

  test('(b) a copy of db + -wal + -shm taken while the writer was open', async () => {
    const live = liveWalStore();
    let copy: { dir: string; db: string };
    try {
      copy = copyInto([
        [live.db, ''],
        [`${live.db}-wal`, '-wal'],
        [`${live.db}-shm`, '-shm'],
      ]);
    } finally {
      live.writer.close();
    }
    assertMainFileLacksWalRows(copy.db);
    const before = dirState(copy.dir);
    await runAll(copy.db, cache);
    assertReadOnlyOpen(copy.db, 'wal-in-place');
    assert.deepEqual(dirState(copy.dir), before);
  });

  test('(c) a -wal without -shm is read through a private copy', async () => {
    const live = liveWalStore();
    let copy: { dir: string; db: string };
    try {
      copy = copyInto([
        [live.db, ''],
        [`${live.db}-wal`, '-wal'],
      ]);
    } finally {
      live.writer.close();
    }
    assert.deepEqual(readdirSync(copy.dir).sort(), ['sessions.db', 'sessions.db-wal']);
    const before = dirState(copy.dir);
    await runAll(copy.db, cache);
    assertReadOnlyOpen(copy.db, 'private-copy');
    assert.deepEqual(dirState(copy.dir), before);
  });

  test('(d) a read-only store file in a read-only directory', async () => {
    const db = buildStore((w) => {
      writeBase(w);
      writeMarmot(w);
    });
    const dir = join(db, '..');
    chmodSync(db, 0o444);
    chmodSync(dir, 0o555);
    try {
      const before = dirState(dir);
      await runAll(db, cache);
      // root ignores permission bits: the proof is the open mode, not an EACCES
      assertReadOnlyOpen(db, 'immutable');
      assert.deepEqual(dirState(dir), before);
    } finally {
      chmodSync(dir, 0o755);
    }
  });

  test('(d) a WAL copy (db + -wal + -shm, all 0444) in a read-only directory', async () => {
    const live = liveWalStore();
    let copy: { dir: string; db: string };
    try {
      copy = copyInto([
        [live.db, ''],
        [`${live.db}-wal`, '-wal'],
        [`${live.db}-shm`, '-shm'],
      ]);
    } finally {
      live.writer.close();
    }
    for (const s of SIBLINGS) if (existsSync(copy.db + s)) chmodSync(copy.db + s, 0o444);
    chmodSync(copy.dir, 0o555);
    try {
      const before = dirState(copy.dir);
      await runAll(copy.db, cache);
      assertReadOnlyOpen(copy.db, 'wal-in-place');
      assert.deepEqual(dirState(copy.dir), before);
    } finally {
      chmodSync(copy.dir, 0o755);
    }
  });
});
