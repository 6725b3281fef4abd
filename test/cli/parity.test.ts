import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, ROOT, runCliAsync } from '../helpers/cli.js';

interface GoldenCase {
  args: string[];
  output: string;
  exit: number;
  hits?: Array<{ run_id: string; message_index: number; score: number; shown: boolean }>;
}

function cases(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...cases(p));
    else if (name.endsWith('.json') && !name.startsWith('_')) out.push(p);
  }
  return out;
}

/**
 * Every golden answer of the reference, byte for byte (`--format tool`), plus the JSON ranking.
 * Runs over the bundled copy and, when present, the live ../shared/parity (it may grow).
 */
function parityOver(label: string, storesDir: string): void {
  const golden = join(storesDir, 'golden');
  if (!existsSync(golden)) return;
  describe(`parity (${label} stores)`, { concurrency: 4 }, () => {
    for (const file of cases(golden)) {
      test(file.slice(golden.length + 1), async () => {
        const c = JSON.parse(readFileSync(file, 'utf8')) as GoldenCase;
        // through the persistent index (the default) and by replaying the store (--no-index)
        for (const args of [c.args, [...c.args, '--no-index']]) {
          const r = await runCliAsync(args, { cwd: storesDir });
          assert.equal(r.stdout, c.output + '\n', args.join(' '));
          assert.equal(r.status, c.exit, r.stderr);
        }

        const jsonArgs = c.args.filter((_, i) => c.args[i] !== '--format' && c.args[i - 1] !== '--format');
        const j = await runCliAsync([...jsonArgs, '--json'], { cwd: storesDir });
        assert.equal(j.status, c.exit, j.stderr);
        const doc = JSON.parse(j.stdout) as { hits: Array<{ run_id: string; message_index: number; score: number }> };
        const want = (c.hits ?? []).filter((h) => h.shown);
        assert.equal(doc.hits.length, want.length);
        doc.hits.forEach((h, k) => {
          assert.equal(h.run_id, want[k]!.run_id);
          assert.equal(h.message_index, want[k]!.message_index);
          assert.ok(Math.abs(h.score - want[k]!.score) <= 1e-9, `score ${h.score} vs ${want[k]!.score}`);
        });
      });
    }
  });
}

parityOver('bundled', join(FIXTURES, 'parity'));
parityOver('shared', join(ROOT, '..', 'shared', 'parity'));
