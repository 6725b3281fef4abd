/**
 * Every shell recipe of README.md and docs/cli.md runs as written against the demo store: each fenced
 * `sh` block runs in bash (`set -eo pipefail`) in an empty directory with a fresh HOME, `convsearch` on
 * PATH, no $CONVSEARCH_DB, and `sessions.db` standing for the demo store's path. A comment line right
 * before a block can say what else to expect:
 *
 *   <!-- doc-test: exit N -->      the block's status is N (a check that is meant to fail)
 *   <!-- doc-test: fzf -->         interactive: run in tmux with the real fzf, the preview read off the screen
 *   <!-- doc-test: install -->     run from the checkout into a temporary npm prefix (lines `npm ci…` skipped)
 *   <!-- doc-test: skip (why) -->  not run
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/ux-store.js';

interface Block {
  readonly file: string;
  readonly line: number;
  readonly code: string;
  readonly mode: string | null;
}

/** The fenced shell blocks of a markdown file, with the doc-test comment just above each. */
function shellBlocks(file: string): Block[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    assert.ok(end > i, `${file}:${i + 1}: unclosed fence`);
    if (['sh', 'bash', 'shell', 'console'].includes(open[1]!)) {
      const mode = /^<!-- doc-test: (.*) -->$/.exec(lines[i - 1] ?? '')?.[1] ?? null;
      out.push({ file, line: i + 1, code: lines.slice(i + 1, end).join('\n'), mode });
    }
    i = end;
  }
  return out;
}

const has = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const sq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

let store: string;
let home: string;
let binDir: string;
before(() => {
  const demo = join(ROOT, 'examples', 'sessions.db');
  assert.ok(existsSync(demo), 'the demo store (npm run demo)');
  // a path unlike ./sessions.db, so that a recipe that does not name the store cannot find it by luck
  store = join(tempDir(), 'demo-store.db');
  copyFileSync(demo, store);
  home = tempDir();
  binDir = tempDir();
  writeFileSync(join(binDir, 'convsearch'), `#!/bin/sh\nexec ${sq(process.execPath)} ${sq(BIN)} "$@"\n`);
  chmodSync(join(binDir, 'convsearch'), 0o755);
});

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = {
    PATH: `${binDir}:${process.env.PATH}`,
    HOME: home,
    XDG_CACHE_HOME: join(home, '.cache'),
    TERM: 'dumb',
    LANG: 'C.UTF-8',
    ...extra,
  };
  return e;
}

/** The block with the demo store in place of `sessions.db` (a temporary path without shell metacharacters). */
const withStore = (code: string): string => code.replace(/(?<![\w/.-])sessions\.db\b/g, store);

function runBlock(code: string, cwd: string, extra: Record<string, string> = {}) {
  return spawnSync('bash', ['-c', `set -eo pipefail\n${code}`], { cwd, env: env(extra), encoding: 'utf8', timeout: 120_000 });
}

const blocks = [...shellBlocks('README.md'), ...shellBlocks('docs/cli.md')];

describe('the docs run as written (README.md, docs/cli.md)', () => {
  test('there are recipes to run, and every doc-test mode is known', () => {
    assert.ok(blocks.length >= 12, `${blocks.length} blocks`);
    for (const b of blocks) assert.match(b.mode ?? 'exit 0', /^(exit \d+|fzf|install( .*)?|skip \(.+\))$/, `${b.file}:${b.line}`);
  });

  for (const b of blocks) {
    const where = `${b.file}:${b.line}`;
    const first =
      b.code
        .split('\n')
        .find((l) => l.trim() !== '' && !l.startsWith('#'))
        ?.slice(0, 60) ?? '';
    if (b.mode?.startsWith('skip')) {
      test(`${where} ${first}`, { skip: b.mode }, () => {});
      continue;
    }
    if (b.mode?.startsWith('install')) {
      test(`${where} installs convsearch on PATH from the clone`, () => {
        // npm ci and the build already ran to get this far; the rest runs as written, into a private prefix
        const code = b.code
          .split('\n')
          .filter((l) => !/^npm ci\b/.test(l))
          .join('\n');
        const prefix = join(tempDir(), 'npm-prefix');
        const r = spawnSync('bash', ['-c', `set -eo pipefail\n${code}`], {
          cwd: ROOT,
          encoding: 'utf8',
          timeout: 120_000,
          env: {
            ...env(),
            PATH: `${join(prefix, 'bin')}:${process.env.PATH}`,
            npm_config_prefix: prefix,
            npm_config_update_notifier: 'false',
            npm_config_audit: 'false',
            npm_config_fund: 'false',
          },
        });
        assert.equal(r.status, 0, `${where}\n${r.stdout}\n${r.stderr}`);
        const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
        assert.ok(r.stdout.endsWith(`${version}\n`), `convsearch --version from the prefix: ${r.stdout}`);
        assert.ok(existsSync(join(prefix, 'bin', 'convsearch')));
      });
      continue;
    }
    if (b.mode === 'fzf') {
      test(`${where} fzf with a preview`, { skip: (!has('fzf') || !has('tmux')) && 'fzf or tmux not installed' }, () =>
        fzfRecipe(b, where),
      );
      continue;
    }
    const status = b.mode === null ? 0 : Number(/^exit (\d+)$/.exec(b.mode)![1]);
    const needs = ['jq', 'awk'].filter((t) => new RegExp(`\\| *${t}\\b`).test(b.code) && !has(t));
    test(`${where} ${first}`, { skip: needs.length > 0 && `${needs.join(', ')} not installed (.ci/run installs it)` }, () => {
      const cwd = tempDir();
      const r = runBlock(withStore(b.code), cwd);
      assert.equal(
        r.status,
        status,
        `${where} exited ${r.status}, expected ${status}\n--- stdout\n${r.stdout.slice(0, 2000)}\n--- stderr\n${r.stderr.slice(0, 2000)}`,
      );
      assert.ok(!/convsearch: error:|command not found|No such file/.test(r.stderr), `${where}: ${r.stderr.slice(0, 2000)}`);
    });
  }

  test('the jq per-run pipeline prints what --count-by run prints', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
    const recipe = /# matching messages per run[^\n]*\n((?:.+\n)+?)\n/.exec(doc)?.[1];
    assert.ok(recipe, 'the recipe is in docs/cli.md');
    const r = runBlock(`export CONVSEARCH_DB=${sq(store)}\n${recipe}`, tempDir());
    assert.equal(r.status, 0, r.stderr);
    const byRun = runBlock(`convsearch search refund --db ${sq(store)} --scope all --count-by run`, tempDir());
    assert.ok(r.stdout.split('\n').length > 2, r.stdout);
    assert.equal(r.stdout.split('\n').sort().join('\n'), byRun.stdout.split('\n').sort().join('\n'));
  });

  test("the names recipes print the demo store's catalog titles and the agent behind its derived run id", () => {
    const doc = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
    const recipe = (title: string): string => {
      // the recipe's lines: up to a blank line or the end of the block
      const r = new RegExp(`# ${title}[^\\n]*\\n((?:[^\\n\x60].*\\n)+)`).exec(doc)?.[1];
      assert.ok(r, `the recipe "${title}" is in docs/cli.md`);
      const out = runBlock(`export CONVSEARCH_DB=${sq(store)}\n${r}`, tempDir());
      assert.equal(out.status, 0, out.stderr);
      return out.stdout;
    };
    assert.equal(
      recipe('conversations by their catalog title'),
      [
        'conv-ops-billing-api\tcompleted\tBilling API stuck after OOM in prod-eu',
        'conv-payments-refunds\tcancelled\tDouble refund for order ORD-2291',
        'conv-cache-eviction\tcompleted\tSearch cache hit ratio drop on node 3',
        '',
      ].join('\n'),
    );
    assert.equal(
      recipe('which agent ran each derived run id'),
      'deploy-verifier\t019bb1d2-6a4e-7c3f-8d21-5e9f0a1b2c3d\tsp-MTU6ZGVwbG95LXZlcmlmaWVyMDE5YmIxZDItNmE0ZS03YzNmLThkMjEtNWU5ZjBhMWIyYzNk\n',
    );
  });

  test('a recipe that omits the store fails loudly instead of finding one by luck', () => {
    const r = runBlock('convsearch runs', tempDir());
    assert.equal(r.status, 2);
    assert.match(r.stderr, /no store to read: pass --db <path>, set \$CONVSEARCH_DB/);
  });
});

const sockets: string[] = [];
after(() => {
  for (const s of sockets) spawnSync('tmux', ['-S', s, 'kill-server']);
});

/**
 * The fzf recipe in a tmux pane: fzf lists the hits and runs the preview (a `show --at` of the first
 * hit) in its own shell; the preview must show that message, then Enter picks the line.
 */
function fzfRecipe(b: Block, where: string): void {
  const dir = tempDir();
  const socket = join(dir, 'tmux.sock');
  sockets.push(socket);
  const script = join(dir, 'recipe.sh');
  const out = join(dir, 'picked.txt');
  writeFileSync(script, `(\nset -eo pipefail\n${withStore(b.code)}\n) > ${sq(out)}\necho "__STATUS__=$?"\nsleep 30\n`);
  mkdirSync(join(dir, 'cwd'));
  const e = env({ TERM: 'xterm-256color' });
  const exports = Object.entries(e)
    .map(([k, v]) => `${k}=${sq(String(v))}`)
    .join(' ');
  const run = (...args: string[]) => spawnSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
  assert.equal(run('new-session', '-d', '-x', '200', '-y', '40', '-c', join(dir, 'cwd'), `env -i ${exports} bash ${sq(script)}`).status, 0);
  const screen = (): string => run('capture-pane', '-p').stdout;
  const waitFor = (re: RegExp, what: string): string => {
    for (let i = 0; i < 200; i++) {
      const s = screen();
      if (re.test(s)) return s;
      spawnSync('sleep', ['0.1']);
    }
    assert.fail(`${where}: ${what} never showed:\n${screen()}`);
  };
  // the preview is `show <run> --at <n>`: its window header names the message it centres on
  const shown = waitFor(/showing \[\d+\]\.\.\[\d+\] of \d+ messages around \[\d+\]/, 'the preview');
  assert.ok(!/error|no store to read/i.test(shown), `${where}: the preview failed:\n${shown}`);
  // one Enter picks: a convsearch that exits while fzf runs must not put the terminal back in cooked
  // mode under it (Node's exit-time reset; see cli/io.ts), or the key is echoed and read as Ctrl-J
  const sent = run('send-keys', 'Enter');
  assert.equal(sent.status, 0, sent.stderr);
  waitFor(/__STATUS__=\d+/, 'the end of the recipe');
  assert.match(screen(), /__STATUS__=0/);
  assert.match(readFileSync(out, 'utf8'), /^run-pay-\d:\d+:\d+\.\d:.*refund/i, 'fzf printed the picked hit');
}
