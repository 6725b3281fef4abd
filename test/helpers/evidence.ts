import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { StepStoreWriter } from '../../scripts/lib/store-writer.js';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { cli } from './cli.js';
import { writeRun } from './random-stores.js';
import { addRun, addSnapshot, tempDir, userMsg } from './stores.js';

/** Stores for the tests of what convsearch writes beside them (the index, private copies): none of it, ever. */

export const sha = (p: string): string => createHash('sha256').update(readFileSync(p)).digest('hex');

export interface Evidence {
  readonly dir: string;
  readonly db: string;
  /** A store-wide search of it. */
  readonly args: string[];
  /** What that search prints with --no-index, and its exit status. */
  readonly want: string;
  readonly status: number | null;
  readonly digest: string;
}

/** A store alone in its directory, and what a --no-index search of it prints. */
export async function evidence(): Promise<Evidence> {
  const dir = tempDir();
  const db = join(dir, 'sessions.db');
  const w = new StepStoreWriter(db);
  writeRun(w, rng(4), 'r1', 'c1', new Date(Date.UTC(2026, 0, 1)));
  w.close();
  const args = ['search', 'user', '--db', db, '--scope', 'all', '--format', 'tool'];
  const replay = await cli([...args, '--no-index']);
  assert.ok(replay.status === 0 || replay.status === 1, replay.stderr);
  return { dir, db, args, want: replay.stdout, status: replay.status, digest: sha(db) };
}

/** A store whose last rows live in a -wal with no -shm beside it: read through a private copy. */
export function walWithoutShm(): string {
  const src = join(tempDir(), 'live.db');
  const w = new StepStoreWriter(src);
  w.db.pragma('wal_autocheckpoint = 0');
  addRun(w, 'r1', 'c1', 0);
  addSnapshot(w, 'r1', [userMsg('the copied words', 1)]);
  const db = join(tempDir(), 'sessions.db');
  copyFileSync(src, db);
  copyFileSync(`${src}-wal`, `${db}-wal`);
  w.close();
  assert.ok(statSync(`${db}-wal`).size > 0 && !existsSync(`${db}-shm`));
  return db;
}
