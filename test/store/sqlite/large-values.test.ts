/**
 * A run's snapshots grow step by step, so each value SQLite reads is a little larger than the one
 * before: glibc, left to its starting mmap threshold, maps every one afresh and each page faults
 * (store/sqlite/large-values.ts). Reading them through the reader must fault far less than with the
 * threshold pinned where glibc starts ($MALLOC_MMAP_THRESHOLD_ turns its adjustment off).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { textResponse, userRequest, utc } from '../../../scripts/lib/messages.js';
import { StepStoreWriter } from '../../../scripts/lib/store-writer.js';
import Database from 'better-sqlite3';
import { tempDir } from '../../helpers/hardening.js';

const CHILD = fileURLToPath(new URL('../../helpers/large-values-child.js', import.meta.url));
const glibc = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime !== undefined;

/**
 * One run of `steps` snapshots, each the one before and a reply of 60,000 characters (the last ~1.8 MB):
 * the writer lays out the store and registers the run, the rows go in as SQL (each snapshot's JSON made
 * once, as text: the writer would serialize the growing history again for every row).
 */
function growingStore(steps: number): string {
  const path = join(tempDir('large-values'), 'sessions.db');
  let clock = utc('2026-03-01T08:00:00Z');
  const tick = (): number => (clock += 1_000_000);
  const w = new StepStoreWriter(path);
  try {
    w.registerRun({ runId: 'long', conversationId: 'c', agentName: 'coder', startedAt: tick() });
  } finally {
    w.close();
  }
  const db = new Database(path);
  try {
    const insert = db.prepare(
      "INSERT INTO snapshots (run_id, step_index, conversation_id, timestamp, state, messages) VALUES ('long', ?, 'c', ?, 'complete', ?)",
    );
    const messages: string[] = [];
    db.transaction(() => {
      for (let step = 1; step <= steps; step++) {
        const at = new Date(tick() / 1000).toISOString();
        messages.push(
          JSON.stringify(userRequest(`step ${step}`, { timestamp: tick() })),
          JSON.stringify(textResponse(`output ${step} ${'x'.repeat(60_000)}`, { timestamp: tick() })),
        );
        insert.run(step, at, `[${messages.join(', ')}]`);
      }
    })();
  } finally {
    db.close();
  }
  return path;
}

function read(store: string, env: Record<string, string>): { faults: number; chars: number } {
  const r = spawnSync(process.execPath, [CHILD, store], { env: { ...process.env, ...env }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { faults: number; chars: number };
}

test('growing snapshot values are read into reused heap memory, not a fresh mapping each', { skip: !glibc && 'glibc only' }, () => {
  const store = growingStore(30);
  const pinned = read(store, { MALLOC_MMAP_THRESHOLD_: String(128 * 1024) });
  const raised = read(store, {});
  assert.equal(raised.chars, pinned.chars);
  assert.ok(pinned.chars > 20e6, `the run holds ${pinned.chars} chars`);
  assert.ok(
    raised.faults < pinned.faults * 0.75,
    `faults: ${raised.faults} read as convsearch reads, ${pinned.faults} with the threshold pinned`,
  );
});
