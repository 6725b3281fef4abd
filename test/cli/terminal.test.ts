import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, cli, ROOT, TEST_CACHE } from '../helpers/cli.js';
import { buildUxStore, buildWideStore, OSC_TITLE, tempDir } from '../helpers/ux-store.js';

const hasScript = spawnSync('sh', ['-c', 'command -v script']).status === 0;
const sq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs a shell command line under `script`, so the CLI's stdout and stderr are a real terminal
 * (`stty` gives it a size). Returns what the terminal received.
 */
function onTerminal(commandLine: string, env: Record<string, string> = {}, cols = 100): string {
  const r = spawnSync('script', ['-qfec', `stty cols ${cols} rows 40; ${commandLine}`, '/dev/null'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, TERM: 'xterm-256color', NO_COLOR: '', FORCE_COLOR: '', CLICOLOR_FORCE: '', XDG_CACHE_HOME: TEST_CACHE, ...env },
  });
  if (r.error) throw r.error;
  return r.stdout;
}

const node = `${sq(process.execPath)} ${sq(BIN)}`;
const ESC = '\x1b';
const strip = (s: string): string => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

let db: string;
let wide: string;
let big: string;
before(() => {
  db = buildUxStore();
  wide = buildWideStore(300, 40, 'needle', join(tempDir(), 'wide.db'));
  big = buildWideStore(5000, 40, 'needle', join(tempDir(), 'big.db'));
});

describe('the real terminal path', { skip: !hasScript && 'script(1) not installed' }, () => {
  test('colour on a terminal, none when piped, none with TERM=dumb or NO_COLOR', () => {
    const args = `search refund policy --db ${sq(db)} --scope all -m 2`;
    const tty = onTerminal(`${node} ${args}`);
    assert.ok(tty.includes(`${ESC}[1m${ESC}[31mrefund`), 'highlighted on a terminal');
    assert.ok(tty.includes('showing 2 of 6 matching messages in 2 runs'), 'summary on the terminal (stderr)');
    const piped = onTerminal(`${node} ${args} | cat`);
    assert.ok(piped.includes('refund policy'));
    assert.ok(!piped.includes(ESC), 'no colour into a pipe');
    assert.ok(!onTerminal(`${node} ${args}`, { TERM: 'dumb' }).includes(ESC), 'TERM=dumb');
    assert.ok(!onTerminal(`${node} ${args}`, { NO_COLOR: '1' }).includes(ESC));
    assert.ok(onTerminal(`${node} ${args} --color always | cat`).includes(ESC), '--color always into a pipe');
  });

  test('lines wrap to the terminal width with a hanging indent', () => {
    const out = strip(onTerminal(`${node} search zeppelin --db ${sq(db)} --scope all -C 0`, {}, 60)).replace(/\r/g, '');
    const lines = out.split('\n').filter((l) => l !== '');
    for (const l of lines) assert.ok([...l].length <= 60, `${JSON.stringify(l)} is wider than 60 columns`);
    assert.ok(
      lines.some((l) => l.startsWith('      ') && l.includes('lorem')),
      'continuation rows are indented',
    );
  });

  test('--format tool is escaped on a terminal and byte-exact on a pipe', () => {
    const args = `search escape --db ${sq(db)} --scope all --format tool`;
    const tty = onTerminal(`${node} ${args}`);
    assert.ok(!tty.includes(OSC_TITLE));
    assert.ok(tty.includes('\\e]0;pwned\\x07'));
    const piped = onTerminal(`${node} ${args} | od -c | head -50`);
    assert.match(piped, /033\s+\]\s+0\s+;\s+p\s+w\s+n\s+e\s+d\s+\\a/, 'raw bytes into a pipe');
  });

  test('a long replay shows a spinner with progress on stderr, on a terminal only', () => {
    // the big store: the spinner waits 250 ms before it shows, and 300 runs can replay faster than that
    const args = `search needle --db ${sq(big)} --scope all --no-index -m 1 -C 0 --plain`;
    const tty = onTerminal(`${node} ${args} 2>&1 >/dev/null`);
    assert.match(tty, /replaying run \d+\/5000/);
    assert.ok(!onTerminal(`${node} ${args} -q 2>&1`).includes('replaying'), 'not with -q');
    assert.ok(!onTerminal(`${node} ${args} 2>&1 | cat`).includes('replaying'), 'not into a pipe');
  });

  test('Ctrl+C stops a replay promptly while the spinner runs', async () => {
    // The signal goes out once the spinner is on the terminal (script -f flushes the typescript as it
    // comes), so a fast machine that replays quickly cannot finish before it.
    const dir = tempDir();
    const screen = join(dir, 'screen');
    const pidFile = join(dir, 'pid');
    const shell = `stty cols 100 rows 40; ${node} search needle --db ${sq(big)} --scope all --no-index & echo $! > ${sq(pidFile)}; wait $!; echo "status=$?"`;
    const child = spawn('script', ['-qfec', shell, screen], {
      cwd: ROOT,
      stdio: 'ignore',
      env: { ...process.env, TERM: 'xterm-256color', NO_COLOR: '', FORCE_COLOR: '', CLICOLOR_FORCE: '', XDG_CACHE_HOME: TEST_CACHE },
    });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    const seen = (): string => (existsSync(screen) ? readFileSync(screen, 'utf8') : '');
    const deadline = Date.now() + 30_000;
    while (!/replaying run \d+\/\d+/.test(seen()) || !existsSync(pidFile)) {
      assert.ok(Date.now() < deadline, `no spinner: ${seen().slice(-300)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const sent = Date.now();
    process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGINT');
    await exited;
    const took = Date.now() - sent;
    assert.match(seen(), /status=130/, seen().slice(-300));
    assert.ok(took < 1000, `took ${took} ms`);
  });
});

describe('pipes and signals', () => {
  test('`| head -1` exits quietly with the search status', () => {
    const r = spawnSync(
      'bash',
      [
        '-c',
        `${node} search needle --db ${sq(wide)} --scope all --no-index -m 5000 -C 0 --plain | head -1; echo "status=\${PIPESTATUS[0]}" >&2`,
      ],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, XDG_CACHE_HOME: TEST_CACHE },
      },
    );
    assert.match(r.stdout, /^run-0000:0:[\d.]+:User: needle question 0 of run 0\n$/);
    assert.equal(r.stderr, 'status=0\n', 'no EPIPE error, no stack trace');
  });

  test('show and runs into `head -1` too', () => {
    for (const cmd of [`show run-0001 --db ${sq(wide)}`, `runs --db ${sq(wide)} --json`]) {
      const r = spawnSync('bash', ['-c', `${node} ${cmd} | head -1 >/dev/null; echo "status=\${PIPESTATUS[0]}" >&2`], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      assert.equal(r.stderr, 'status=0\n', cmd);
    }
  });

  test('a reader that starts late still gets every byte of stdout and stderr, and the status: the process ends only once its pipes took them', () => {
    const args = `search needle --db ${sq(wide)} --scope all --no-index -m 5000 -C 0`;
    const dir = tempDir();
    const run = (to: string): ReturnType<typeof spawnSync> =>
      spawnSync('bash', ['-c', `${node} ${args} ${to}; echo "status=\${PIPESTATUS[0]}" >&2`], { cwd: ROOT, encoding: 'utf8' });
    // written to files, every write is synchronous: the reference
    const direct = run(`>${sq(join(dir, 'out'))} 2>${sq(join(dir, 'err'))}`);
    assert.equal(direct.stderr, 'status=0\n');
    const out = readFileSync(join(dir, 'out'), 'utf8');
    const err = readFileSync(join(dir, 'err'), 'utf8');
    assert.ok(out.length > 128 * 1024, `${out.length} bytes: more than a pipe holds (64 KiB)`);
    assert.match(err, /matching messages/);
    // through pipes nobody reads for half a second: the writes left pending when the command is done
    const late = run(`2> >(sleep 0.5; cat >${sq(join(dir, 'err2'))}) | (sleep 0.5; cat >${sq(join(dir, 'out2'))})`);
    assert.equal(late.stderr, 'status=0\n');
    assert.equal(readFileSync(join(dir, 'out2'), 'utf8'), out);
    // (the process substitution may still be writing when bash returns)
    const deadline = Date.now() + 5000;
    while (readFileSync(join(dir, 'err2'), 'utf8') !== err && Date.now() < deadline) spawnSync('sleep', ['0.05']);
    assert.equal(readFileSync(join(dir, 'err2'), 'utf8'), err);
  });

  test('Ctrl+C stops a long replay promptly', async () => {
    const child = spawn(process.execPath, [BIN, 'search', 'needle', '--db', big, '--scope', 'all', '--no-index', '-q'], {
      stdio: 'ignore',
    });
    await new Promise((r) => setTimeout(r, 400)); // 5,000 runs take seconds to replay: still running
    const sent = Date.now();
    child.kill('SIGINT');
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (c, s) => resolve([c, s])),
    );
    assert.ok(Date.now() - sent < 1000, `took ${Date.now() - sent} ms to stop`);
    assert.ok(signal === 'SIGINT' || code === 130, `exit ${code} ${signal}`);
  });

  test('a usage error is one line on stderr and exit 2 (sanity of the helpers above)', async () => {
    const r = await cli(['search', 'x', '--db', db]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^convsearch: error: search needs a scope/);
  });
});
