import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/stores.js';

const SCRIPT = join(ROOT, 'scripts', 'check-layers.mjs');

function check(src?: string) {
  return spawnSync(process.execPath, [SCRIPT, ...(src ? ['--src', src] : [])], { encoding: 'utf8', cwd: ROOT });
}

function tree(files: Record<string, string>): string {
  const src = join(tempDir(), 'src');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(src, path)), { recursive: true });
    writeFileSync(join(src, path), text);
  }
  return src;
}

test('src/ keeps the layer order: every import goes down, no folder cycle, cli/ only through lib.ts, no process output', () => {
  const r = check();
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^check-layers: ok/);
});

test('the check fails on an import that goes up, a folder cycle, cli/ reaching past lib.ts, and src/ touching the process output', () => {
  const src = tree({
    'store/reader.ts': "import { replay } from '../history/replay.js';\n",
    'history/replay.ts': "import type { StoreReader } from '../store/reader.js';\nexport const replay = 1;\n",
    'cli/main.ts': "import { search } from '../search/search.js';\nimport { session } from '../lib.js';\n",
    'cli/out.ts': "import { session } from '../api/session.js';\n// process.stdout in a comment is fine\nprocess.exitCode = 2;\n",
    'lib.ts': "export { session } from './api/session.js';\n",
    'output/print.ts': 'export const p = (s: string) => process.stdout.write(s);\n',
    'search/search.ts': 'export const search = 1;\n',
    'api/session.ts': "import { search } from '../search/search.js';\nexport const session = search;\n",
    'elsewhere/x.ts': "import { session } from '../api/session.js';\n",
  });
  const r = check(src);
  assert.equal(r.status, 1);
  const lines = r.stderr.trim().split('\n');
  assert.ok(
    lines.some((l) => /store\/reader\.ts:1: store\/ imports history\/, a layer above it/.test(l)),
    r.stderr,
  );
  assert.ok(
    lines.some((l) => /folder cycle: history -> store -> history/.test(l)),
    r.stderr,
  );
  assert.ok(
    lines.some((l) =>
      /cli\/main\.ts:1: cli\/ imports \.\.\/search\/search\.js; the command line imports the library through src\/lib\.ts only/.test(l),
    ),
    r.stderr,
  );
  assert.ok(
    lines.some((l) => /cli\/out\.ts:1: cli\/ imports \.\.\/api\/session\.js/.test(l)),
    r.stderr,
  );
  assert.ok(
    lines.some((l) => /cli\/out\.ts:3: touches process\.exitCode/.test(l)),
    r.stderr,
  );
  assert.ok(!lines.some((l) => /cli\/out\.ts:2/.test(l)), 'a comment is not a use');
  assert.ok(
    lines.some((l) => /output\/print\.ts:1: touches process\.stdout/.test(l)),
    r.stderr,
  );
  assert.ok(
    lines.some((l) => /elsewhere\/ is not in the layer order/.test(l)),
    r.stderr,
  );
  assert.ok(!lines.some((l) => /cli\/main\.ts:2/.test(l)), 'cli/ may import lib.ts');
  assert.ok(!lines.some((l) => /api\/session\.ts/.test(l)), 'api/ may import search/');
});
