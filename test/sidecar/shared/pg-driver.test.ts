/**
 * The shared index's driver thread loads `pg` without Node's fetch implementation: pg, on Node 20,
 * probes for Cloudflare Workers by constructing a fetch `Response` unless a `navigator` is there
 * (store/postgres/pg-probe.ts), and that load is part of every search through the index.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../../helpers/cli.js';

/** The Node internals a fresh process has loaded after requiring `bundle` (what the driver thread loads). */
function loadedBy(bundle: string): string[] {
  const r = spawnSync(
    process.execPath,
    ['-e', `require(${JSON.stringify(bundle)}); process.stdout.write(JSON.stringify(process.moduleLoadList))`],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as string[];
}

test('the index driver and the store driver load pg without loading fetch (undici)', () => {
  for (const name of ['index-driver', 'postgres-driver']) {
    const loaded = loadedBy(join(ROOT, 'dist', 'bundle', `${name}.cjs`));
    assert.ok(
      loaded.some((m) => /\bnet\b/.test(m)),
      `${name}: pg loaded (it needs net)`,
    );
    assert.deepEqual(
      loaded.filter((m) => /undici|fetch/.test(m)),
      [],
      `${name}: no fetch implementation loaded`,
    );
  }
});
