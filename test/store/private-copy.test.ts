import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCliAsync } from '../helpers/cli.js';
import { tempDir } from '../helpers/stores.js';
import { walWithoutShm } from '../helpers/evidence.js';

const CHILD = fileURLToPath(new URL('../helpers/hold-store-child.js', import.meta.url));

interface Held {
  pid: number;
  copies: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the child with its own TMPDIR and waits until it has opened the store. */
function hold(db: string, tmp: string, then: 'wait' | 'exit' | 'throw'): Promise<Held> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, db, then], { env: { ...process.env, TMPDIR: tmp }, stdio: ['ignore', 'pipe', 'pipe'] });
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
      child.on('exit', (code, signal) => r({ code, signal })),
    );
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      const line = out.split('\n')[0]!;
      if (!out.includes('\n')) return;
      const [mode, names] = line.split(' ');
      if (mode !== 'private-copy') reject(new Error(`opened in ${mode} mode`));
      resolve({ pid: child.pid!, copies: names ? names.split(',') : [], exit });
    });
    child.on('error', reject);
  });
}

const copiesIn = (tmp: string): string[] => readdirSync(tmp).filter((n) => n.startsWith('convsearch-copy-'));

test('a private copy is named for its process and removed on exit, on an error, on SIGINT and on SIGTERM', async () => {
  const db = walWithoutShm();
  for (const how of ['exit', 'throw', 'SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const tmp = tempDir();
    const held = await hold(db, tmp, how === 'exit' || how === 'throw' ? how : 'wait');
    assert.equal(held.copies.length, 1, `${how}: one copy while the store is open`);
    assert.match(held.copies[0]!, new RegExp(`^convsearch-copy-${held.pid}-`));
    if (how.startsWith('SIG')) process.kill(held.pid, how);
    const ended = await held.exit;
    if (how.startsWith('SIG')) assert.equal(ended.signal, how, `${how}: the process still dies of the signal`);
    if (how === 'throw') assert.notEqual(ended.code, 0);
    assert.deepEqual(copiesIn(tmp), [], `${how}: the copy is gone`);
  }
});

test("a killed process's copy is removed by the next run; a live process's copy and foreign names are left alone", async () => {
  const db = walWithoutShm();
  const tmp = tempDir();
  const killed = await hold(db, tmp, 'wait');
  process.kill(killed.pid, 'SIGKILL');
  await killed.exit;
  assert.deepEqual(copiesIn(tmp), killed.copies, 'SIGKILL cannot be caught: the copy is left');
  const alive = await hold(db, tmp, 'wait');
  mkdirSync(join(tmp, 'convsearch-copy-notapid'));
  mkdirSync(join(tmp, 'convsearch-other-1'));
  try {
    const r = await runCliAsync(['runs', '--db', db, '--json', '--no-index'], { env: { TMPDIR: tmp } });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(copiesIn(tmp).sort(), [...alive.copies, 'convsearch-copy-notapid'].sort());
    assert.ok(existsSync(join(tmp, 'convsearch-other-1')));
  } finally {
    process.kill(alive.pid, 'SIGTERM');
    await alive.exit;
  }
  assert.deepEqual(copiesIn(tmp), ['convsearch-copy-notapid']);
});
