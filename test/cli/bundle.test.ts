import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { BIN, ROOT, runCli } from '../helpers/cli.js';

const BUNDLE = join(ROOT, 'dist', 'bundle');

describe('the bundled command line (npm run build: scripts/bundle.mjs)', () => {
  test('bin/convsearch.js runs the bundle, which carries the version of package.json', () => {
    assert.match(readFileSync(BIN, 'utf8'), /from '\.\.\/dist\/bundle\/convsearch\.js'/);
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = runCli(['--version']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${version}\n`);
    assert.ok(readFileSync(join(BUNDLE, 'convsearch.js'), 'utf8').includes(JSON.stringify(version)), 'the version is built in');
  });

  test('every thread entry a bundle starts lies beside it', () => {
    const named = new Set<string>();
    for (const file of readdirSync(BUNDLE).filter((f) => f.endsWith('.js'))) {
      for (const m of readFileSync(join(BUNDLE, file), 'utf8').matchAll(/new URL\("\.\/([^"]+)",import\.meta\.url\)/g)) named.add(m[1]!);
    }
    // the digest and index-build workers, the server bridge and its two drivers
    assert.deepEqual([...named].sort(), ['build-worker.js', 'digest-worker.js', 'postgres-driver.js', 'redis-driver.js', 'sync-worker.js']);
    for (const name of named) assert.ok(existsSync(join(BUNDLE, name)), `${name} is missing from dist/bundle`);
  });
});
