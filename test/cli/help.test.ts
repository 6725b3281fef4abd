import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, ROOT } from '../helpers/cli.js';

describe('help and version', () => {
  test('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = await cli([flag]);
      assert.equal(r.status, 0);
      assert.equal(r.stdout, `${version}\n`);
    }
  });

  test('every command has --help with real examples', async () => {
    for (const cmd of [[], ['search'], ['runs'], ['conversations'], ['tools'], ['show'], ['completion']]) {
      const r = await cli([...cmd, '--help']);
      assert.equal(r.status, 0, cmd.join(' '));
      assert.match(r.stdout, /Examples:\n {2}(\S.*\b)?convsearch /, `${cmd.join(' ') || 'convsearch'} --help`);
    }
  });

  test('search --help says filters leave BM25 statistics alone and explains the exit status', async () => {
    const r = await cli(['search', '--help']);
    assert.match(r.stdout, /BM25 statistics and scores stay those of the whole scope/);
    assert.match(r.stdout, /--role <role>/);
    assert.match(r.stdout, /--expect-none/);
    assert.match(r.stdout, /Exit status: 0 when at least one hit is shown, 1 when none is, 2 on an error/);
  });

  test('the internal __complete command stays out of the help', async () => {
    const r = await cli(['--help']);
    assert.ok(!r.stdout.includes('__complete'));
  });
});
