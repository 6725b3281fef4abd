/**
 * Finding the store without --db (issue 22 point 5): $CONVSEARCH_DB, else ./sessions.db, else CLAI 2's
 * $XDG_CONFIG_HOME/pydantic-clai2/sessions.db; the store used is named on stderr, a file there that is
 * not a step store is skipped and said so, and `convsearch where` lists every place. In-process, the
 * sink's working directory standing for the process's (every path on these command lines is absolute).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { BIN, cli, type CliOptions } from '../helpers/cli.js';
import { writeRun, writeSnapshot, snapshotText } from '../helpers/file-store.js';
import { addRun, addSnapshot, assistantMsg, buildStore, tempDir, userMsg } from '../helpers/stores.js';

/** A SQLite store holding one run per id. */
function storeWith(path: string, ...runIds: string[]): string {
  return buildStore(
    (w) => {
      runIds.forEach((id, i) => {
        addRun(w, id, 'conv-1', i);
        addSnapshot(w, id, [userMsg(`hello from ${id}`, i), assistantMsg('hi', i)]);
      });
    },
    { path },
  );
}

/** A working directory and a config home, both empty, as the command sees them. */
function places(): { cwd: string; config: string; clai: string; here: string } {
  const cwd = tempDir();
  const config = tempDir();
  return { cwd, config, clai: join(config, 'pydantic-clai2', 'sessions.db'), here: join(cwd, 'sessions.db') };
}

function inDir(p: { cwd: string; config: string }, env: NodeJS.ProcessEnv = {}): CliOptions {
  return { sinkCwd: p.cwd, env: { XDG_CONFIG_HOME: p.config, ...env } };
}

function clai(p: { clai: string }, ...runIds: string[]): string {
  mkdirSync(join(p.clai, '..'), { recursive: true });
  return storeWith(p.clai, ...runIds);
}

const runIds = (stdout: string): string[] => (JSON.parse(stdout) as { runs: Array<{ run_id: string }> }).runs.map((r) => r.run_id);

describe('a command without --db finds the store', () => {
  test('./sessions.db first: read, and named on stderr', async () => {
    const p = places();
    storeWith(p.here, 'run-here');
    clai(p, 'run-clai');
    const r = await cli(['runs', '--json'], inDir(p));
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(runIds(r.stdout), ['run-here']);
    assert.equal(r.stderr, `convsearch: no --db or $CONVSEARCH_DB given: reading ${p.here} (the current directory)\n`);
  });

  test("CLAI 2's store when there is no ./sessions.db; $XDG_CONFIG_HOME unset means ~/.config", async () => {
    const p = places();
    clai(p, 'run-clai');
    const r = await cli(['search', 'hello', '--scope', 'all', '--json'], inDir(p));
    assert.equal(r.status, 0, r.stderr);
    assert.equal(
      r.stderr,
      `convsearch: no --db or $CONVSEARCH_DB given: reading ${p.clai} (CLAI 2's default store, under $XDG_CONFIG_HOME)\n`,
    );
    const home = tempDir();
    mkdirSync(join(home, '.config', 'pydantic-clai2'), { recursive: true });
    const underHome = storeWith(join(home, '.config', 'pydantic-clai2', 'sessions.db'), 'run-home');
    for (const xdg of ['', 'relative/config']) {
      const h = await cli(['runs', '--json'], { sinkCwd: p.cwd, env: { HOME: home, XDG_CONFIG_HOME: xdg } });
      assert.equal(h.status, 0, h.stderr);
      assert.deepEqual(runIds(h.stdout), ['run-home'], `XDG_CONFIG_HOME=${JSON.stringify(xdg)}`);
      assert.equal(
        h.stderr,
        `convsearch: no --db or $CONVSEARCH_DB given: reading ${underHome} (CLAI 2's default store, under ~/.config)\n`,
      );
    }
  });

  test('$CONVSEARCH_DB beats the default places and --db beats it: nothing said', async () => {
    const p = places();
    storeWith(p.here, 'run-here');
    clai(p, 'run-clai');
    const named = storeWith(join(tempDir(), 'named.db'), 'run-env');
    const env = await cli(['runs', '--json'], inDir(p, { CONVSEARCH_DB: named }));
    assert.deepEqual([env.status, env.stderr, runIds(env.stdout)], [0, '', ['run-env']]);
    const flag = await cli(['runs', '--json', '--db', p.clai], inDir(p, { CONVSEARCH_DB: named }));
    assert.deepEqual([flag.status, flag.stderr, runIds(flag.stdout)], [0, '', ['run-clai']]);
  });

  test('a ./sessions.db that is not a step store is skipped, and said so, never read as the store', async () => {
    const p = places();
    clai(p, 'run-clai');
    const cases: Array<[string, (path: string) => void]> = [
      ['not an SQLite database', (path) => writeFileSync(path, 'not a database')],
      ['empty file, not a step store', (path) => writeFileSync(path, '')],
      [
        'not a step store (no runs or snapshots table)',
        (path) => {
          const db = new Database(path);
          db.exec('CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES (1)');
          db.close();
        },
      ],
      ['a dangling symlink', (path) => symlinkSync(join(path, '..', 'gone.db'), path)],
      ['a directory holding no FileStepStore run (no <run>/run.json, no media/)', (path) => mkdirSync(path)],
    ];
    for (const [why, make] of cases) {
      const q = { ...p, cwd: tempDir() };
      q.here = join(q.cwd, 'sessions.db');
      make(q.here);
      const r = await cli(['runs', '--json'], inDir(q));
      assert.equal(r.status, 0, `${why}: ${r.stderr}`);
      assert.deepEqual(runIds(r.stdout), ['run-clai'], why);
      assert.equal(
        r.stderr,
        `convsearch: warning: skipped ${q.here} (the current directory): ${why}\n` +
          `convsearch: no --db or $CONVSEARCH_DB given: reading ${p.clai} (CLAI 2's default store, under $XDG_CONFIG_HOME)\n`,
        why,
      );
    }
  });

  test('a FileStepStore directory named sessions.db is a store', async () => {
    const p = places();
    mkdirSync(p.here);
    writeRun(p.here, 'run-dir');
    writeSnapshot(p.here, 'run-dir', '0.json', snapshotText('run-dir', 1, 'hello from a directory'));
    clai(p, 'run-clai');
    const r = await cli(['runs', '--json'], inDir(p));
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(runIds(r.stdout), ['run-dir']);
  });

  test('none found: exit 2, one line naming every place looked at and why each did not do', async () => {
    const p = places();
    writeFileSync(p.here, 'junk');
    for (const args of [
      ['runs'],
      ['conversations'],
      ['tools'],
      ['show', 'x'],
      ['search', 'x', '--scope', 'all'],
      ['report', 'x', '-o', '-'],
    ]) {
      const r = await cli(args, inDir(p));
      assert.equal(r.status, 2, args.join(' '));
      assert.equal(r.stdout, '');
      assert.equal(
        r.stderr,
        'convsearch: error: no store to read: pass --db <path>, set $CONVSEARCH_DB, or put a step store in a default place; ' +
          `looked at ${p.here} (skipped: not an SQLite database), ${p.clai} (absent)\n`,
      );
    }
  });

  test('-q says nothing of where the store was found', async () => {
    const p = places();
    writeFileSync(p.here, 'junk');
    clai(p, 'run-clai');
    const r = await cli(['search', 'hello', '--scope', 'all', '-q'], inDir(p));
    assert.deepEqual(r, { status: 0, stdout: '', stderr: '' });
  });

  test("completion reads the store found, and says nothing (its stderr goes to the user's shell)", async () => {
    const p = places();
    clai(p, 'run-one', 'run-two');
    const r = await cli(['__complete', 'runs'], inDir(p));
    assert.deepEqual(r, { status: 0, stdout: 'run-one\nrun-two\n', stderr: '' });
  });

  test('a store reached by two places is looked at once', async () => {
    const p = places();
    clai(p, 'run-clai');
    symlinkSync(p.clai, p.here);
    const r = await cli(['where', '--json'], inDir(p));
    const doc = JSON.parse(r.stdout) as { used: string; places: Array<{ path: string; same_as: string | null; used: boolean }> };
    assert.equal(r.status, 0);
    assert.equal(doc.used, p.here);
    assert.deepEqual(
      doc.places.map((x) => [x.path, x.same_as, x.used]),
      [
        [p.here, null, true],
        [p.clai, p.here, false],
      ],
    );
  });
});

describe('convsearch where', () => {
  test('lists every place in order, what it holds, and the one read; exit 0', async () => {
    const p = places();
    writeFileSync(p.here, 'junk');
    clai(p, 'run-1', 'run-2');
    const r = await cli(['where'], inDir(p));
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
    const lines = r.stdout.split('\n');
    assert.equal(lines[0], `1. ${p.here}  (the current directory): skipped: not an SQLite database`);
    assert.match(
      lines[1]!,
      new RegExp(
        `^2\\. ${p.clai.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}  \\(CLAI 2's default store, under \\$XDG_CONFIG_HOME\\): SQLite step store, 2 runs, \\d+ bytes  <- read$`,
      ),
    );
    assert.equal(lines.length, 3);
  });

  test('--json: the places with kind, size and run count, and which one is used', async () => {
    const p = places();
    const store = storeWith(p.here, 'run-1', 'run-2', 'run-3');
    const r = await cli(['where', '--json'], inDir(p));
    assert.equal(r.status, 0);
    const doc = JSON.parse(r.stdout);
    assert.deepEqual(doc, {
      schema_version: 1,
      used: store,
      source: 'found',
      found: true,
      places: [
        {
          path: store,
          source: 'cwd',
          from: 'the current directory',
          exists: true,
          kind: 'sqlite',
          size_bytes: statSync(store).size,
          runs: 3,
          skipped: null,
          same_as: null,
          used: true,
        },
        {
          path: p.clai,
          source: 'clai2',
          from: "CLAI 2's default store, under $XDG_CONFIG_HOME",
          exists: false,
          kind: null,
          size_bytes: null,
          runs: null,
          skipped: null,
          same_as: null,
          used: false,
        },
      ],
    });
  });

  test('nothing found: exit 1, and how to name a store', async () => {
    const p = places();
    const r = await cli(['where'], inDir(p));
    assert.equal(r.status, 1);
    assert.equal(
      r.stdout,
      `1. ${p.here}  (the current directory): absent\n` +
        `2. ${p.clai}  (CLAI 2's default store, under $XDG_CONFIG_HOME): absent\n` +
        'No store found: pass --db <path>, set $CONVSEARCH_DB, or put a step store in one of these places.\n',
    );
    const j = await cli(['where', '--json'], inDir(p));
    assert.equal(j.status, 1);
    assert.deepEqual(JSON.parse(j.stdout).used, null);
  });

  test('$CONVSEARCH_DB set: it is the one read (a password never shown), the default places still listed', async () => {
    const p = places();
    storeWith(p.here, 'run-here');
    const url = 'postgresql://reader:s3cret@127.0.0.1:1/db';
    for (const format of [[], ['--json']]) {
      const r = await cli(['where', ...format], inDir(p, { CONVSEARCH_DB: url }));
      assert.equal(r.status, 0);
      assert.ok(!r.stdout.includes('s3cret'), r.stdout);
      if (format.length === 0) {
        assert.equal(
          r.stdout.split('\n')[0],
          '1. postgresql://reader:***@127.0.0.1:1/db  ($CONVSEARCH_DB): postgres server (not contacted)  <- read',
        );
        assert.match(r.stdout, /\$CONVSEARCH_DB names the store, so a command does not look at the other places\.\n$/);
      } else {
        const doc = JSON.parse(r.stdout);
        assert.equal(doc.used, 'postgresql://reader:***@127.0.0.1:1/db');
        assert.equal(doc.source, 'env');
        assert.deepEqual(
          doc.places.map((x: { source: string; used: boolean }) => [x.source, x.used]),
          [
            ['env', true],
            ['cwd', false],
            ['clai2', false],
          ],
        );
      }
    }
    // a $CONVSEARCH_DB that is no store: exit 1, and why
    const mongo = await cli(['where'], inDir(p, { CONVSEARCH_DB: 'mongodb://u:pw@h/x' }));
    assert.equal(mongo.status, 1);
    assert.equal(
      mongo.stdout.split('\n')[0],
      '1. mongodb://u:***@h/x  ($CONVSEARCH_DB): skipped: MongoStepStore is not supported yet  <- read',
    );
    const missing = await cli(['where'], inDir(p, { CONVSEARCH_DB: join(p.cwd, 'nope.db') }));
    assert.equal(missing.status, 1);
    assert.match(missing.stdout, /^1\. .*nope\.db {2}\(\$CONVSEARCH_DB\): absent {2}<- read\n/);
  });

  test('hostile directory names (escapes, newlines) are shown escaped, on stdout and stderr', async () => {
    const evil = join(tempDir(), 'x\x1b]0;pwned\x07\ny\u202e');
    mkdirSync(evil);
    const p = { cwd: evil, config: join(evil, 'cfg\x1b[2J'), here: join(evil, 'sessions.db'), clai: '' };
    p.clai = join(p.config, 'pydantic-clai2', 'sessions.db');
    writeFileSync(p.here, 'junk');
    clai(p, 'run-clai');
    const shown = (s: string): string =>
      s.replace('\x1b]0;pwned\x07', '\\e]0;pwned\\x07').replace('\n', '\\n').replace('\u202e', '\\u202e').replace('\x1b[2J', '\\e[2J');
    const where = await cli(['where'], inDir(p));
    const runs = await cli(['runs', '--json'], inDir(p));
    for (const text of [where.stdout, where.stderr, runs.stderr]) {
      assert.ok(!/[\x1b\x07\u202e]/.test(text), JSON.stringify(text));
    }
    assert.equal(where.stdout.split('\n').length, 3, where.stdout);
    assert.ok(where.stdout.includes(shown(p.here)), where.stdout);
    assert.equal(
      runs.stderr,
      `convsearch: warning: skipped ${shown(p.here)} (the current directory): not an SQLite database\n` +
        `convsearch: no --db or $CONVSEARCH_DB given: reading ${shown(p.clai)} (CLAI 2's default store, under $XDG_CONFIG_HOME)\n`,
    );
    const none = await cli(['runs'], inDir({ cwd: evil, config: join(evil, 'empty') }));
    assert.equal(none.status, 2);
    assert.equal(none.stderr.split('\n').length, 2);
    assert.ok(!/[\x1b\x07\u202e]/.test(none.stderr), none.stderr);
  });

  test('the process binds its working directory: a real process finds ./sessions.db there', async () => {
    const p = places();
    storeWith(p.here, 'run-here');
    const r = await cli(['where', '--json'], { cwd: p.cwd, env: { XDG_CONFIG_HOME: p.config } });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).used, p.here);
  });
});

describe('a working directory that is gone', () => {
  test('is not looked in, and breaks nothing else (no stack trace)', () => {
    const dir = join(tempDir(), 'gone');
    mkdirSync(dir);
    const config = tempDir();
    const run = (args: string) =>
      spawnSync(
        'sh',
        [
          '-c',
          `cd ${JSON.stringify(dir)} && rmdir ${JSON.stringify(dir)} && exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} ${args}`,
        ],
        {
          encoding: 'utf8',
          env: { ...process.env, XDG_CONFIG_HOME: config, CONVSEARCH_DB: '' },
        },
      );
    const version = run('--version');
    assert.deepEqual([version.status, version.stderr], [0, '']);
    mkdirSync(dir);
    const where = run('where');
    assert.equal(where.status, 1, where.stderr);
    assert.equal(where.stderr, '');
    assert.equal(
      where.stdout,
      `1. ${join(config, 'pydantic-clai2', 'sessions.db')}  (CLAI 2's default store, under $XDG_CONFIG_HOME): absent\n` +
        'No store found: pass --db <path>, set $CONVSEARCH_DB, or put a step store in one of these places.\n',
    );
    mkdirSync(dir);
    const runs = run('runs');
    assert.equal(runs.status, 2);
    assert.match(runs.stderr, /^convsearch: error: no store to read: .*; looked at \S+pydantic-clai2\/sessions\.db \(absent\)\n$/);
  });
});
