import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cli } from '../helpers/cli.js';
import { addRun, addSnapshot, buildStore, userMsg } from '../helpers/stores.js';

// biome-ignore lint/suspicious/noMisleadingCharacterClass: joiners and marks are listed one by one on purpose
const RAW = /[\u200b\u200c\u200d\u200e\u200f\u2028\u2029\u202a-\u202e\u2060\u2066-\u2069\ufeff\u{e0041}]/u;

test('invisible and bidirectional characters in ids are shown escaped in every human-facing line', async () => {
  const run = 'run-\u200b\u200bzw';
  const conv = 'conv-\ufeffa\u202eb\u2060c\u{e0041}';
  const db = buildStore((w) => {
    addRun(w, run, conv, 0);
    addSnapshot(w, run, [userMsg('where is the wombat', 1)]);
  });
  const outputs = [
    await cli(['runs', '--db', db]),
    await cli(['conversations', '--db', db]),
    await cli(['search', 'wombat', '--db', db, '--scope', 'all']),
    await cli(['search', 'wombat', '--db', db, '--scope', 'all', '--plain']),
    await cli(['search', 'wombat', '--db', db, '--scope', 'all', '--count-by', 'run']),
    await cli(['show', run, '--db', db]),
    await cli(['search', 'wombat', '--db', db, '--conversation', 'conv-\ufeffa']),
  ];
  for (const r of outputs) {
    assert.doesNotMatch(r.stdout + r.stderr, RAW, r.stdout + r.stderr);
  }
  const all = outputs.map((r) => r.stdout + r.stderr).join('\n');
  assert.match(all, /run-\\u200b\\u200bzw/);
  assert.match(all, /conv-\\ufeffa\\u202eb\\u2060c\\u\{e0041\}/);
  // machine output keeps the exact values
  const json = await cli(['runs', '--db', db, '--json']);
  assert.equal(JSON.parse(json.stdout).runs[0].run_id, run);
});
