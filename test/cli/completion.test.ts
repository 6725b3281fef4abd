import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, cli, FIXTURES, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/ux-store.js';

const SHIPPED: Record<string, string> = { bash: 'convsearch.bash', zsh: '_convsearch', fish: 'convsearch.fish' };
const SMALL = join(FIXTURES, 'parity', 'small.db');

function has(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

/** A directory with a `convsearch` on PATH that runs this checkout (the scripts call it for ids). */
let shimDir: string;
before(() => {
  shimDir = tempDir();
  const shim = join(shimDir, 'convsearch');
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(shim, 0o755);
});

function shell(cmd: string, args: string[], input?: string) {
  return spawnSync(cmd, args, { encoding: 'utf8', cwd: ROOT, input, env: { ...process.env, PATH: `${shimDir}:${process.env.PATH}` } });
}

describe('shell completions', () => {
  test('the shipped scripts equal what `convsearch completion <shell>` generates', async () => {
    for (const [sh, file] of Object.entries(SHIPPED)) {
      const r = await cli(['completion', sh]);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(readFileSync(join(ROOT, 'completions', file), 'utf8'), r.stdout, `completions/${file} is stale: npm run completions`);
    }
  });

  test('the bash script loads and registers the completion', () => {
    const r = shell('bash', ['-c', 'source completions/convsearch.bash; complete -p convsearch']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'complete -F _convsearch convsearch\n');
  });

  test('bash completes commands, flags, choices, files and ids from the store named by --db', () => {
    const cases: Array<[string[], string]> = [
      [['convsearch', 'se'], 'search'],
      [['convsearch', 'search', '--col'], '--collapse --color'],
      [['convsearch', 'search', '--color', 'a'], 'always auto'],
      [['convsearch', 'search', '--color', '=', 'ne'], 'never'],
      [['convsearch', 'search', '--role', 'tool'], 'tool-call tool-return'],
      [['convsearch', 'search', '--db', SMALL, '--run', 'run-al'], 'run-alpha-1 run-alpha-2'],
      [['convsearch', 'search', '--db', SMALL, '--conversation', ''], 'conv-alpha conv-beta'],
      [['convsearch', 'runs', '--db', SMALL, '--parent', 'run-b'], 'run-beta-1 run-beta-2'],
      [['convsearch', 'show', '--db', SMALL, 'run-o'], 'run-orphan-1'],
      [['convsearch', 'search', '--db', SMALL, '--tool', ''], 'get_weather read_file run_shell search_docs'],
      [['convsearch', 'search', '--db', SMALL, '--tool', 'r'], 'read_file run_shell'],
      [['convsearch', 'completion', ''], 'bash fish zsh'],
      [['convsearch', 'to'], 'tools'],
      [['convsearch', 'search', '--db', 'examples/sessions.db', '--agent', ''], 'cache-auditor deploy-verifier'],
      [['convsearch', 'tools', '--db', 'examples/sessions.db', '--agent', 'd'], 'deploy-verifier'],
      [['convsearch', 'tools', '--db', SMALL, '--run', 'run-al'], 'run-alpha-1 run-alpha-2'],
      [['convsearch', 'search', '--sort', ''], 'score time'],
      [['convsearch', 'search', '--db', 'test/fixtures/parity/sm'], 'test/fixtures/parity/small.db'],
    ];
    const script = cases
      .map(
        ([words]) =>
          `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); _convsearch; printf '%s\\n' "$(printf '%s\\n' "\${COMPREPLY[@]}" | sort | tr '\\n' ' ')"`,
      )
      .join('\n');
    const r = shell('bash', ['-c', `source completions/convsearch.bash\n${script}`]);
    assert.equal(r.status, 0, r.stderr);
    const got = r.stdout
      .split('\n')
      .slice(0, -1)
      .map((l) => l.trim());
    cases.forEach(([words, want], i) => {
      assert.equal(got[i], want, words.join(' '));
    });
  });

  test('zsh: the script parses and compinit picks it up', { skip: !has('zsh') && 'zsh not installed' }, () => {
    assert.equal(shell('zsh', ['-n', 'completions/_convsearch']).status, 0);
    const r = shell('zsh', [
      '-f',
      '-c',
      'fpath=(completions $fpath); autoload -U compinit; compinit -u -D; print -r -- $_comps[convsearch]',
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '_convsearch\n');
  });

  test('fish: the script loads and completes', { skip: !has('fish') && 'fish not installed' }, () => {
    assert.equal(shell('fish', ['-n', 'completions/convsearch.fish']).status, 0);
    const r = shell('fish', [
      '-c',
      `source completions/convsearch.fish; complete -C 'convsearch search --colo'; complete -C 'convsearch search --db ${SMALL} --run run-al'`,
    ]);
    assert.equal(r.status, 0, r.stderr);
    const words = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t')[0]);
    assert.deepEqual(words, ['--color', 'run-alpha-1', 'run-alpha-2']);
  });

  test('__complete lists ids without replaying, and is silent on a bad store', async () => {
    assert.equal((await cli(['__complete', 'conversations', '--db', SMALL])).stdout, 'conv-alpha\nconv-beta\n');
    assert.equal(
      (await cli(['__complete', 'agents', '--db', join(ROOT, 'examples', 'sessions.db')])).stdout,
      'cache-auditor\ndeploy-verifier\n',
    );
    // the tool names a search can filter on: those of the replayed records' parts
    const shown = new Set<string>();
    for (const run of (await cli(['__complete', 'runs', '--db', SMALL])).stdout.trim().split('\n')) {
      const doc = JSON.parse((await cli(['show', run, '--db', SMALL, '--json'])).stdout) as {
        messages: Array<{ parts: Array<{ tool_name: string | null }> }>;
      };
      for (const m of doc.messages) for (const p of m.parts) if (p.tool_name !== null) shown.add(p.tool_name);
    }
    assert.ok(shown.size > 0);
    assert.equal((await cli(['__complete', 'tools', '--db', SMALL])).stdout, [...shown].sort().join('\n') + '\n');
    const bad = await cli(['__complete', 'runs', '--db', '/nonexistent.db']);
    assert.equal(bad.stdout, '');
    assert.equal(bad.status, 2);
  });
});
