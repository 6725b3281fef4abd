import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cli, FIXTURES, ROOT } from '../helpers/cli.js';
import { argsFrom, goldenCases, hitProblems, jsonArgs, readGolden } from '../helpers/golden.js';

/**
 * Every golden answer of the reference, byte for byte (`--format tool`), plus the JSON ranking.
 * Runs over the bundled copy and, when present, the live ../shared/parity (it may grow).
 */
function parityOver(label: string, storesDir: string): void {
  const golden = join(storesDir, 'golden');
  if (!existsSync(golden)) return;
  describe(`parity (${label} stores)`, { concurrency: 4 }, () => {
    for (const file of goldenCases(golden)) {
      test(file.slice(golden.length + 1), async () => {
        const c = readGolden(file);
        const given = argsFrom(storesDir, c.args);
        // through the persistent index (the default) and by replaying the store (--no-index)
        for (const args of [given, [...given, '--no-index']]) {
          const r = await cli(args);
          assert.equal(r.stdout, c.output + '\n', args.join(' '));
          assert.equal(r.status, c.exit, r.stderr);
        }
        const j = await cli(jsonArgs(given));
        assert.equal(j.status, c.exit, j.stderr);
        assert.deepEqual(hitProblems(c, j.stdout), []);
      });
    }
  });
}

parityOver('bundled', join(FIXTURES, 'parity'));
parityOver('shared', join(ROOT, '..', 'shared', 'parity'));
