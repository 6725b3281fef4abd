import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, ROOT } from '../helpers/cli.js';
import { buildUxStore, CSI_CLEAR, OSC_TITLE } from '../helpers/ux-store.js';

const SNAPSHOTS = join(ROOT, 'test', 'output', 'snapshots');

/** Compares with test/output/snapshots/<name>; UPDATE_SNAPSHOTS=1 rewrites it. */
function matchSnapshot(name: string, actual: string): void {
  const file = join(SNAPSHOTS, name);
  if (process.env.UPDATE_SNAPSHOTS === '1' || !existsSync(file)) {
    mkdirSync(SNAPSHOTS, { recursive: true });
    writeFileSync(file, actual);
    if (process.env.UPDATE_SNAPSHOTS !== '1') assert.fail(`snapshot ${name} was missing and has been written; run again`);
    return;
  }
  assert.equal(actual, readFileSync(file, 'utf8'), `snapshot ${name} (UPDATE_SNAPSHOTS=1 to accept)`);
}

const ESC = '\x1b';
let db: string;
before(() => {
  db = buildUxStore();
});

const search = (...extra: string[]) => ['search', 'refund', 'policy', '--db', db, '--scope', 'all', '-m', '3', '-C', '1', ...extra];

describe('human search output', () => {
  test('snapshot without colour: header per hit, hit line marked, summary on stderr', async () => {
    const r = await cli(search('--color', 'never'));
    assert.equal(r.status, 0, r.stderr);
    assert.ok(!r.stdout.includes(ESC));
    matchSnapshot('search-color-never.txt', r.stdout);
    // every message matching "refund policy": four in run-a1, two in run-c1; -m 3 shows three
    assert.equal(r.stderr, 'showing 3 of 6 matching messages in 2 runs (searched 16 messages in 5 runs)\n');
    assert.match(r.stdout, /^#1 · score \d\.\d · run run-a1 · conversation conv-x · agent support · \[\d+\] [a-z-]+/);
    assert.match(r.stdout, /^> \[\d+\] /m);
  });

  test('snapshot with --color always: highlighted terms, dimmed context', async () => {
    const r = await cli(search('--color', 'always'));
    assert.equal(r.status, 0, r.stderr);
    matchSnapshot('search-color-always.txt', r.stdout);
    assert.ok(r.stdout.includes(`${ESC}[1m${ESC}[31mrefund${ESC}[39m${ESC}[22m`), 'query terms in bold red');
    assert.ok(r.stdout.includes(`${ESC}[2m`), 'context dimmed');
    assert.ok(r.stdout.includes(`${ESC}[32m>${ESC}[39m`), 'hit marker');
  });

  test('colour policy: the flag beats the environment; NO_COLOR beats FORCE_COLOR; auto on a pipe is off', async () => {
    const cases: Array<[string, string[], Record<string, string>, boolean]> = [
      ['auto on a pipe', [], {}, false],
      ['FORCE_COLOR=1', [], { FORCE_COLOR: '1' }, true],
      ['FORCE_COLOR=0', [], { FORCE_COLOR: '0' }, false],
      ['CLICOLOR_FORCE=1', [], { CLICOLOR_FORCE: '1' }, true],
      ['NO_COLOR=1 with FORCE_COLOR=1', [], { NO_COLOR: '1', FORCE_COLOR: '1' }, false],
      ['--color always with NO_COLOR=1', ['--color', 'always'], { NO_COLOR: '1' }, true],
      ['--color never with FORCE_COLOR=1', ['--color', 'never'], { FORCE_COLOR: '1' }, false],
      ['--color auto with FORCE_COLOR=1', ['--color', 'auto'], { FORCE_COLOR: '1' }, true],
    ];
    for (const [name, flags, env, coloured] of cases) {
      const r = await cli(search(...flags), { env });
      assert.equal(r.status, 0, `${name}: ${r.stderr}`);
      assert.equal(r.stdout.includes(ESC), coloured, name);
    }
    const plainNoColor = await cli(search('--color', 'never'));
    const noColorEnv = await cli(search(), { env: { NO_COLOR: '1' } });
    assert.equal(noColorEnv.stdout, plainNoColor.stdout, 'NO_COLOR output equals --color never');
    const forced = await cli(search(), { env: { FORCE_COLOR: '1' } });
    const always = await cli(search('--color', 'always'));
    assert.equal(forced.stdout, always.stdout, 'FORCE_COLOR output equals --color always');
  });

  test('a term past the display cutoff is shown in a window marked with …', async () => {
    const r = await cli(['search', 'zeppelin', '--db', db, '--scope', 'all', '-C', '0', '--color', 'never']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /> \[3\] Assistant: …orem ipsum .* the zeppelin marker sits past the cutoff\.\n/);
    const tool = await cli(['search', 'zeppelin', '--db', db, '--scope', 'all', '-C', '0', '--format', 'tool']);
    assert.match(
      tool.stdout,
      /\[3\] Assistant: \.\.\.orem ipsum .* the zeppelin marker sits past the cutoff\.\n/,
      'the tool format keeps ASCII ...',
    );
  });

  test('no match: nothing on stdout, the reference notice and the summary on stderr, exit 1', async () => {
    const r = await cli(['search', 'nonexistentword', '--db', db, '--scope', 'all']);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      "No matches for 'nonexistentword' in 16 persisted messages.\n0 matching messages (searched 16 messages in 5 runs)\n",
    );
  });
});

describe('untrusted store text never reaches the terminal raw', () => {
  const attacks = [OSC_TITLE, CSI_CLEAR, '\r', '\b'];
  const commands = (): Array<[string, string[]]> => [
    ['search human never', ['search', 'escape', '--db', db, '--scope', 'all', '--color', 'never']],
    ['search human always', ['search', 'escape', '--db', db, '--scope', 'all', '--color', 'always']],
    ['search plain', ['search', 'escape', '--db', db, '--scope', 'all', '--plain']],
    ['search count by run', ['search', 'escape', '--db', db, '--scope', 'all', '--count-by', 'run']],
    ['search json', ['search', 'escape', '--db', db, '--scope', 'all', '--json']],
    ['search ndjson', ['search', 'escape', '--db', db, '--scope', 'all', '--ndjson']],
    ['runs', ['runs', '--db', db, '--color', 'always']],
    ['runs json', ['runs', '--db', db, '--json']],
    ['conversations', ['conversations', '--db', db]],
    ['show', ['show', 'run-evil\x1b[2J', '--db', db, '--color', 'always']],
    ['show json', ['show', 'run-evil\x1b[2J', '--db', db, '--json']],
    ['show missing run', ['show', 'nope\x1b]0;x\x07', '--db', db]],
  ];

  test('no OSC, CSI, carriage return or backspace from the store on stdout or stderr', async () => {
    for (const [name, args] of commands()) {
      const r = await cli(args);
      assert.ok(r.status === 0 || (name === 'show missing run' && r.status === 2), `${name}: ${r.stderr}`);
      for (const out of [r.stdout, r.stderr]) {
        for (const a of attacks) assert.ok(!out.includes(a), `${name} printed ${JSON.stringify(a)} raw`);
        assert.ok(!/\x1b(?!\[[0-9;]*m)/.test(out), `${name}: an ESC that is not one of our colour codes`);
      }
    }
  });

  test('they show as visible escapes instead', async () => {
    const r = await cli(['search', 'escape', '--db', db, '--scope', 'all', '--color', 'never']);
    assert.ok(r.stdout.includes('\\e]0;pwned\\x07'));
    assert.ok(r.stdout.includes('\\e[2J'));
    assert.ok(r.stdout.includes('carriage\\rreturn'));
    assert.ok(r.stdout.includes('back\\x08space'));
  });

  test('--format tool into a pipe stays byte-exact (the parity format), raw bytes included', async () => {
    const r = await cli(['search', 'escape', '--db', db, '--scope', 'all', '--format', 'tool']);
    assert.equal(r.status, 0);
    assert.ok(r.stdout.includes(OSC_TITLE), 'byte-exact reference text on a pipe');
  });
});
