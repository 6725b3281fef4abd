/**
 * The listing tables on a real terminal: tmux runs the CLI in a pane of a given size, then its screen
 * is read back as a person would see it. A line wider than the pane would show as a wrapped screen row,
 * an escape sequence cut in two as stray text (`[22m`, `2m`).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { BIN, ROOT, TEST_CACHE } from '../helpers/cli.js';
import { buildUxStore, tempDir } from '../helpers/ux-store.js';

const hasTmux = spawnSync('sh', ['-c', 'command -v tmux']).status === 0;
const hasScript = spawnSync('sh', ['-c', 'command -v script']).status === 0;
const DEMO = join(ROOT, 'examples', 'sessions.db');
const sq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

let socket: string;
let ux: string;
before(() => {
  socket = join(tempDir(), 'tmux.sock');
  ux = buildUxStore();
  // a session that lives as long as the tests: the server would exit with its last session, racing the next one
  if (hasTmux) spawnSync('tmux', ['-S', socket, 'new-session', '-d', '-s', 'keep', 'sleep 600']);
});
after(() => {
  if (hasTmux) spawnSync('tmux', ['-S', socket, 'kill-server']);
});

function tmux(...args: string[]): string {
  const r = spawnSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, `tmux ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Runs a command line in a fresh `cols`-wide pane and returns the screen once it has finished. */
function screen(commandLine: string, cols: number): string {
  const name = `t${cols}-${Math.random().toString(36).slice(2, 8)}`;
  const env = `env TERM=xterm-256color NO_COLOR= FORCE_COLOR= CLICOLOR_FORCE= XDG_CACHE_HOME=${sq(TEST_CACHE)}`;
  tmux('new-session', '-d', '-s', name, '-x', String(cols), '-y', '60', `${env} sh -c ${sq(`${commandLine}; echo __DONE__; sleep 30`)}`);
  try {
    for (let i = 0; i < 300; i++) {
      const text = tmux('capture-pane', '-p', '-t', name);
      if (text.includes('__DONE__')) return text.slice(0, text.indexOf('__DONE__')).replace(/\s+$/, '');
      spawnSync('sleep', ['0.05']);
    }
    assert.fail(`no answer within 15 s: ${commandLine}`);
  } finally {
    tmux('kill-session', '-t', name);
  }
}

const node = `${sq(process.execPath)} ${sq(BIN)}`;
const BOX = /^[┌│├└].*[┐│┤┘]$/;

/** The screen holds a whole grid, one screen row per table row, and nothing that looks like an escape. */
function assertTable(text: string, cols: number, rows: number, label: string): { header: string[]; note: string } {
  const lines = text.split('\n');
  const grid = lines.filter((l) => BOX.test(l.trimEnd()));
  assert.equal(grid.length, rows + 4, `${label}: every row on one screen line\n${text}`);
  const first = lines.indexOf(grid[0]!);
  assert.deepEqual(lines.slice(first, first + grid.length), grid, `${label}: no wrapped continuation between grid lines\n${text}`);
  for (const l of lines) {
    assert.ok([...l].length <= cols, `${label}: wider than ${cols}: ${l}`);
    assert.ok(!/\[[0-9;]*m|\x1b/.test(l), `${label}: escape fragment on screen: ${l}`);
  }
  const header = grid[1]!
    .split('│')
    .slice(1, -1)
    .map((h) => h.trim());
  return {
    header,
    note: lines
      .slice(first + grid.length)
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim(),
  };
}

describe('tables on a real terminal (tmux)', { skip: !hasTmux && 'tmux not installed' }, () => {
  for (const cols of [60, 80, 120]) {
    for (const colour of ['always', 'never']) {
      test(`runs and conversations at ${cols} columns, colour ${colour === 'always' ? 'on' : 'off'}`, () => {
        for (const [cmd, rows, store] of [
          ['runs', 8, DEMO],
          ['conversations', 4, DEMO],
          ['runs', 5, ux],
        ] as Array<[string, number, string]>) {
          const label = `${cmd} ${store === DEMO ? 'demo' : 'ux'} ${cols} ${colour}`;
          const text = screen(`${node} ${cmd} --db ${sq(store)} --color ${colour}`, cols);
          const { header, note } = assertTable(text, cols, rows, label);
          assert.equal(header[0], cmd === 'runs' ? 'run' : 'conversation', label);
          if (note !== '') assert.match(note, /^left out to fit \d+ columns: [a-z ,]+ \(--wide or --json shows them\)$/, label);
          // the demo store's runs include a derived id (a decoded column) and its conversations a catalog (three columns)
          const all = cmd === 'runs' ? (store === DEMO ? 9 : 8) : 9;
          assert.equal(
            header.length + (note === '' ? 0 : note.split(':')[1]!.split('(')[0]!.split(',').length),
            all,
            `${label}: shown + named = every column`,
          );
          if (store === DEMO && cmd === 'runs') {
            // ids and timestamps never split: each shows whole on its row
            const derived = 'sp-MTU6ZGVwbG95LXZlcmlmaWVyMDE5YmIxZDItNmE0ZS03YzNmLThkMjEtNWU5ZjBhMWIyYzNk';
            if (cols > derived.length + 4) assert.match(text, new RegExp(`│ ${derived} +│`), label);
            // a derived id wider than the terminal: cut only as the last resort, every other column left out
            else assert.match(text, new RegExp(`^│ ${derived.slice(0, cols - 5)}… │$`, 'm'), label);
            if (header.includes('started')) assert.match(text, /│ 2026-01-12 10:41:44Z │/, label);
          }
        }
      });
    }
  }

  test('--wide keeps every column at full width on a terminal; a pipe is never cut', {
    skip: !hasScript && 'script(1) not installed',
  }, () => {
    // the terminal wraps lines wider than itself on screen, so read what the program wrote to it
    const written = (commandLine: string): string[] => {
      const r = spawnSync('script', ['-qfec', `stty cols 60 rows 40; ${commandLine}`, '/dev/null'], {
        encoding: 'utf8',
        env: { ...process.env, TERM: 'xterm-256color', NO_COLOR: '', XDG_CACHE_HOME: TEST_CACHE },
      });
      return r.stdout.replace(/\r/g, '').trimEnd().split('\n');
    };
    const wide = written(`${node} runs --db ${sq(DEMO)} --wide --color never`);
    assert.match(
      wide[1]!,
      /^│ run +│ decoded run id +│ conversation +│ agent +│ parent +│ started +│ snapshots +│ messages +│ last step │$/,
    );
    assert.deepEqual([...new Set(wide.map((l) => [...l].length))], [270]);
    const piped = written(`${node} runs --db ${sq(DEMO)} | cat`);
    assert.deepEqual([...new Set(piped.map((l) => [...l].length))], [270], 'into a pipe: every column, full width');
    assert.ok(!piped.join('\n').includes('left out'));
  });
});
