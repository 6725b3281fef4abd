import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { closeIndexDatabase, openIndexDatabase } from '../../src/sidecar/file.js';
import { IndexSync } from '../../src/sidecar/sync.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { addRun, addSnapshot, assistantMsg, buildStore, tempDir, userMsg } from '../helpers/stores.js';

/** The SQLite temp files this process holds open (`etilqs_…`, unlinked as soon as opened, so only /proc shows them). */
function sqliteTempFiles(): string[] {
  const open: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.includes('etilqs_')) open.push(target);
    } catch {
      // closed between the listing and the look
    }
  }
  return open;
}

test('an index build keeps no statement journal: its multi-row inserts open no SQLite temp file (a 613 MB store wrote 105 MB to one)', {
  skip: process.platform === 'linux' ? false : 'reads /proc/self/fd',
}, () => {
  const dir = tempDir();
  // runs of long messages: a statement of 32 message rows then rewrites more than SQLite keeps of a
  // statement's journal in memory (64 KiB), and the journal goes to a temp file for the whole build
  const random = rng(7);
  const words = (n: number): string => Array.from({ length: n }, () => random().toString(36).slice(2, 8)).join(' ');
  const path = buildStore(
    (w) => {
      for (let r = 0; r < 8; r++) {
        addRun(w, `run-${r}`, `conv-${r}`, r);
        const messages = [];
        for (let i = 0; i < 40; i++) messages.push(i % 2 === 0 ? userMsg(words(1500), i) : assistantMsg(words(1500), i));
        addSnapshot(w, `run-${r}`, messages);
      }
    },
    { path: join(dir, 'store.db') },
  );
  const index = join(dir, 'index.db');
  writeFileSync(index, '', { mode: 0o600 });
  const store = openSqliteReader(path);
  const { db, tables } = openIndexDatabase(index, store.identity);
  const seen = new Set<string>();
  let looks = 0;
  try {
    new IndexSync(tables, store, { threads: 1 }).sync(() => {
      looks++;
      for (const f of sqliteTempFiles()) seen.add(f);
    });
  } finally {
    closeIndexDatabase(db, index);
    store.close();
  }
  assert.ok(looks >= 8, `the build was looked at ${looks} times`);
  assert.deepEqual([...seen], []);
});
