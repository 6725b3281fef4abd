import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, ROOT, TEST_CACHE } from '../helpers/cli.js';
import { installPacked, run } from '../helpers/packed.js';
import { tempDir } from '../helpers/stores.js';

/** The TypeScript example of README's Library section, as written (it only imports the package). */
function libraryExample(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Library'));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'README has a ts block in its Library section');
  return block[1]!;
}

test("README's library example, type-checked against the packed and installed package, answers like the CLI", async () => {
  const db = join(tempDir(), 'sessions.db');
  copyFileSync(join(ROOT, 'examples', 'sessions.db'), db);
  const { consumer, files } = installPacked();
  assert.ok(files.includes('dist/src/lib.d.ts'), 'the package ships its types');
  assert.ok(files.includes('bin/convsearch.js') && files.includes('dist/bundle/convsearch.cjs'), 'and its command');
  assert.deepEqual(
    files.filter((f) => f.startsWith('test/') || f.startsWith('src/') || f.startsWith('dist/test/') || f.endsWith('.map')),
    [],
    'and no tests, sources or source maps',
  );
  const code = libraryExample();
  assert.match(code, /from 'convsearch'/);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(join(consumer, 'example.ts'), code.split("'sessions.db'").join(JSON.stringify(db)));
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        types: ['node'],
        lib: ['ES2022'],
      },
      files: ['example.ts'],
    }),
  );
  // a type error in the example or in the shipped declarations fails here
  run(process.execPath, [join(consumer, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', consumer], consumer);
  const out = run(process.execPath, [join(consumer, 'example.js')], consumer, { ...process.env, XDG_CACHE_HOME: TEST_CACHE });
  const tool = await cli(['search', 'refund', '--scope', 'all', '-m', '3', '--format', 'tool', '--db', db]);
  assert.equal(tool.status, 0, tool.stderr);
  const runs = JSON.parse((await cli(['runs', '--sort', 'messages', '--limit', '5', '--json', '--db', db])).stdout) as {
    runs: Array<{ run_id: string; messages: number }>;
  };
  assert.equal(runs.runs.length, 5);
  assert.equal(out, tool.stdout + runs.runs.map((x) => `${x.run_id} ${x.messages}\n`).join(''));
});
