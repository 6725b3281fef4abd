/**
 * The library's store discovery (api/discover.ts): the default places from the environment and the
 * working directory alone, their order, and looking at a place without touching it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { defaultPlaces, resolveStores } from '../../src/api/discover.js';
import { addRun, addSnapshot, buildStore, tempDir, userMsg } from '../helpers/stores.js';

const store = (path: string, runId = 'run-1'): string =>
  buildStore(
    (w) => {
      addRun(w, runId, 'conv', 0);
      addSnapshot(w, runId, [userMsg('hello', 0)]);
    },
    { path },
  );

describe('default places', () => {
  test('./sessions.db in the given directory, then CLAI 2 under $XDG_CONFIG_HOME, else $HOME/.config', () => {
    const at = (env: NodeJS.ProcessEnv): string[] => defaultPlaces(env, '/work/here').map((p) => p.target);
    assert.deepEqual(at({ XDG_CONFIG_HOME: '/cfg', HOME: '/home/u' }), ['/work/here/sessions.db', '/cfg/pydantic-clai2/sessions.db']);
    // unset, empty or relative: the XDG base directory specification's default
    for (const xdg of [undefined, '', 'rel/cfg'])
      assert.deepEqual(at({ XDG_CONFIG_HOME: xdg, HOME: '/home/u' }), [
        '/work/here/sessions.db',
        '/home/u/.config/pydantic-clai2/sessions.db',
      ]);
    // no usable home: CLAI 2's place cannot be named, so it is not looked at
    assert.deepEqual(at({}), ['/work/here/sessions.db']);
    assert.deepEqual(at({ HOME: 'relative' }), ['/work/here/sessions.db']);
    // a working directory that is gone ('') has no ./sessions.db to look at
    assert.deepEqual(
      defaultPlaces({ HOME: '/home/u' }, '').map((p) => p.source),
      ['clai2'],
    );
    // a relative working directory is taken as given (the CLI passes the process's, absolute)
    assert.deepEqual(
      defaultPlaces({}, '.').map((p) => p.target),
      [join(process.cwd(), 'sessions.db')],
    );
  });
});

describe('resolveStores', () => {
  test('--db, then $CONVSEARCH_DB, then the first default place holding a store; none: no targets', () => {
    const cwd = tempDir();
    const cfg = tempDir();
    const env = { XDG_CONFIG_HOME: cfg };
    assert.deepEqual(resolveStores(['a.db', 'b.db'], { ...env, CONVSEARCH_DB: 'e.db' }, cwd), {
      targets: ['a.db', 'b.db'],
      source: 'db',
      found: null,
      looked: [],
    });
    assert.deepEqual(resolveStores([], { ...env, CONVSEARCH_DB: 'e.db' }, cwd).targets, ['e.db']);
    const none = resolveStores(undefined, { ...env, CONVSEARCH_DB: '' }, cwd);
    assert.deepEqual([none.source, none.targets, none.looked.map((l) => l.exists)], ['none', [], [false, false]]);
    mkdirSync(join(cfg, 'pydantic-clai2'));
    const clai = store(join(cfg, 'pydantic-clai2', 'sessions.db'), 'run-clai');
    assert.deepEqual(resolveStores(undefined, env, cwd).targets, [clai]);
    const here = store(join(cwd, 'sessions.db'), 'run-here');
    const first = resolveStores(undefined, env, cwd);
    assert.deepEqual([first.source, first.targets, first.looked.length, first.found?.runs], ['found', [here], 1, 1]);
    // `all` looks past the one found
    assert.deepEqual(
      resolveStores(undefined, env, cwd, true).looked.map((l) => [l.target, l.kind]),
      [
        [here, 'sqlite'],
        [clai, 'sqlite'],
      ],
    );
  });

  test('looking at a store leaves it and its directory as they were: no -wal, -shm or journal', () => {
    const cwd = tempDir();
    const here = store(join(cwd, 'sessions.db'));
    const before = { names: readdirSync(cwd).sort(), bytes: readFileSync(here), mtime: statSync(here).mtimeMs };
    const r = resolveStores(undefined, { XDG_CONFIG_HOME: tempDir() }, cwd, true);
    assert.equal(r.found?.target, here);
    assert.deepEqual({ names: readdirSync(cwd).sort(), bytes: readFileSync(here), mtime: statSync(here).mtimeMs }, before);
  });

  test('a FIFO named sessions.db is skipped without being opened (an open would block)', { skip: process.platform === 'win32' }, () => {
    const cwd = tempDir();
    const fifo = join(cwd, 'sessions.db');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    const r = resolveStores(undefined, { XDG_CONFIG_HOME: tempDir() }, cwd);
    assert.deepEqual(
      r.looked.map((l) => [l.exists, l.skipped]),
      [
        [true, 'not a regular file or directory'],
        [false, null],
      ],
    );
    assert.equal(r.source, 'none');
  });

  test('a relative $CONVSEARCH_DB is looked at in the given directory', () => {
    const cwd = tempDir();
    store(join(cwd, 'mine.db'));
    const r = resolveStores(undefined, { CONVSEARCH_DB: 'mine.db', XDG_CONFIG_HOME: tempDir() }, cwd, true);
    assert.deepEqual(
      r.looked.map((l) => [l.source, l.kind, l.runs]),
      [
        ['env', 'sqlite', 1],
        ['cwd', null, null],
        ['clai2', null, null],
      ],
    );
    assert.deepEqual(r.targets, ['mine.db']);
  });
});
