import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runCli, TEST_CACHE } from '../helpers/cli.js';
import { tempDir } from '../helpers/stores.js';

/** The TypeScript example of README's Library section, as written (it only imports the package). */
function libraryExample(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Library'));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'README has a ts block in its Library section');
  return block[1]!;
}

test("README's library example runs against the package entry and answers like the CLI", () => {
  const db = join(tempDir(), 'sessions.db');
  copyFileSync(join(ROOT, 'examples', 'sessions.db'), db);
  const code = libraryExample();
  assert.match(code, /from 'convsearch'/);
  // inside the package, so that `import ... from 'convsearch'` resolves to this checkout's entry
  const script = join(ROOT, 'dist', `readme-example-${process.pid}.mjs`);
  writeFileSync(script, code.split("'sessions.db'").join(JSON.stringify(db)));
  try {
    const r = spawnSync(process.execPath, [script], { encoding: 'utf8', env: { ...process.env, XDG_CACHE_HOME: TEST_CACHE } });
    assert.equal(r.status, 0, r.stderr);
    const tool = runCli(['search', 'refund', '--scope', 'all', '-m', '3', '--format', 'tool', '--db', db]);
    assert.equal(tool.status, 0, tool.stderr);
    const runs = JSON.parse(runCli(['runs', '--sort', 'messages', '--limit', '5', '--json', '--db', db]).stdout) as {
      runs: Array<{ run_id: string; messages: number }>;
    };
    assert.equal(runs.runs.length, 5);
    assert.equal(r.stdout, tool.stdout + runs.runs.map((x) => `${x.run_id} ${x.messages}\n`).join(''));
  } finally {
    rmSync(script, { force: true });
  }
});
