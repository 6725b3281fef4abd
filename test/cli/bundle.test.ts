import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, ROOT, runCli } from '../helpers/cli.js';
import { installPacked } from '../helpers/packed.js';
import { FLAGS } from '../../src/cli/flags.js';
import { tempDir } from '../helpers/stores.js';
import { FIXTURES, SQLITE_FIXTURES, startPostgres, startRedis, type PgServer, type RedisServer } from '../helpers/servers.js';

const BUNDLE = join(ROOT, 'dist', 'bundle');

describe('the bundled command line (npm run build: scripts/bundle.mjs)', () => {
  test('bin/convsearch.js runs the bundle, which carries the version of package.json', () => {
    assert.match(readFileSync(BIN, 'utf8'), /join\(__dirname, '\.\.', 'dist', 'bundle', 'convsearch\.cjs'\)/);
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = runCli(['--version']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${version}\n`);
    assert.ok(readFileSync(join(BUNDLE, 'convsearch.cjs'), 'utf8').includes(JSON.stringify(version)), 'the version is built in');
  });

  test('--version alone is answered without loading the bundle, with the version the bundle carries; with more, the bundle answers', () => {
    const require = createRequire(import.meta.url);
    const { VERSION_FLAGS } = require(BIN) as { VERSION_FLAGS: string[] };
    assert.deepEqual([...VERSION_FLAGS].sort(), FLAGS.version.spelling.split(', ').sort(), 'the spellings flags.ts declares');
    const dir = tempDir();
    // a preload that says whether the bundle was read
    const probe = join(dir, 'probe.cjs');
    writeFileSync(
      probe,
      `const fs = require('node:fs'); const read = fs.readFileSync;
fs.readFileSync = function (p, ...a) { if (String(p).endsWith('convsearch.cjs')) process.stderr.write('bundle read\\n'); return read.call(this, p, ...a); };`,
    );
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const args of [['--version'], ['-V']]) {
      const r = spawnSync(process.execPath, ['-r', probe, BIN, ...args], { encoding: 'utf8' });
      assert.equal(r.status, 0);
      assert.equal(r.stdout, `${version}\n`);
      assert.equal(r.stderr, '', `${args[0]}: the bundle was not read`);
    }
    const more = spawnSync(process.execPath, ['-r', probe, BIN, '--version', '--no-color'], { encoding: 'utf8' });
    assert.equal(more.stdout, `${version}\n`);
    assert.equal(more.stderr, 'bundle read\n');
  });

  test('the bundle compiles from the code cache the build wrote: V8 accepts it under the flags bin/convsearch.js loads it with (none)', () => {
    // V8 refuses a code cache taken under other flags: the command line sets HEAP_GROWING after the bundle is compiled
    const script = `const bin = require(${JSON.stringify(BIN)});
process.stdout.write(String(bin.loadBundle().script.cachedDataRejected));`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    assert.equal(r.stderr, '');
    assert.equal(r.stdout, 'false');
  });

  test('the code cache holds what a warm search, runs and conversations run: they compile nothing more', () => {
    // the build takes the cache after these ran on its demo store; here another store and query
    const dir = mkdtempSync(join(tmpdir(), 'convsearch-cache-'));
    try {
      const db = join(SQLITE_FIXTURES, 'small.db');
      const index = join(dir, 'small.index.db');
      // the index is built by a process of its own: a warm run is what the cache is for
      assert.equal(runCli(['search', 'billing', '--scope', 'all', '--db', db, '--index', index]).status, 0);
      // loaded as bin/convsearch.js loads it: under no V8 flag (it sets its heap flag afterwards)
      const script = `const bin = require(${JSON.stringify(BIN)});
const b = bin.loadBundle();
if (b.script.cachedDataRejected !== false) throw new Error('the code cache was refused');
const quiet = { write() {} };
const sink = { ...bin.processSink(), stdout: quiet, stderr: quiet };
const sizes = [b.script.createCachedData().length];
(async () => {
  for (const args of [['search', 'lookup', 'user', '--scope', 'all'], ['runs'], ['conversations']]) {
    const status = await b.main(['node', 'convsearch', ...args, '--db', ${JSON.stringify(db)}, '--index', ${JSON.stringify(index)}], sink);
    sizes.push(status, b.script.createCachedData().length);
  }
  process.stdout.write(JSON.stringify(sizes));
})();`;
      const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
      assert.equal(r.stderr, '');
      const [loaded, ...after] = JSON.parse(r.stdout) as number[];
      // a function compiled after the load would be in the cache taken again: the same size means none was
      assert.deepEqual(after, [0, loaded, 0, loaded, 0, loaded]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('loading the bundle makes no word segmenter: ICU break data is loaded when the cjk tokenizer first runs', () => {
    const db = join(SQLITE_FIXTURES, 'small.db');
    const script = `const made = [];
const Real = Intl.Segmenter;
Intl.Segmenter = class extends Real { constructor(...a) { super(...a); made.push(a[0]); } };
const bin = require(${JSON.stringify(BIN)});
const b = bin.loadBundle();
const atLoad = made.length;
const quiet = { write() {} };
b.main(['node', 'convsearch', 'search', 'billing', '--scope', 'all', '--tokenizer', 'cjk', '--no-index', '--db', ${JSON.stringify(db)}], { ...bin.processSink(), stdout: quiet, stderr: quiet })
  .then((status) => process.stdout.write(JSON.stringify({ atLoad, status, after: made.length })));`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    assert.equal(r.stderr, '');
    assert.deepEqual(JSON.parse(r.stdout), { atLoad: 0, status: 0, after: 1 });
  });

  test('loading the bundle parses no pattern with a Unicode property class (\\p{…}): each is made on first use', () => {
    // V8 parses a pattern when its literal is evaluated, looking up ICU's property tables: at a module's
    // top level that was ~2 ms of every start. The heap after the load holds the patterns made.
    const script = `const b = require(${JSON.stringify(BIN)}).loadBundle();
const s = require('node:v8').getHeapSnapshot();
const parts = [];
s.on('data', (d) => parts.push(d));
s.on('end', () => {
  const { snapshot, nodes, strings } = JSON.parse(Buffer.concat(parts).toString('utf8'));
  const fields = snapshot.meta.node_fields;
  const type = fields.indexOf('type'), name = fields.indexOf('name'), regexp = snapshot.meta.node_types[0].indexOf('regexp');
  const made = [];
  for (let i = 0; i < nodes.length; i += fields.length) if (nodes[i + type] === regexp) made.push(strings[nodes[i + name]]);
  process.stdout.write(JSON.stringify({ made: made.length, unicode: made.filter((p) => p.includes('\\\\p{')) }));
});`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', maxBuffer: 1 << 26 });
    assert.equal(r.stderr, '');
    const { made, unicode } = JSON.parse(r.stdout) as { made: number; unicode: string[] };
    assert.ok(made > 10, `the snapshot lists the patterns made at load (${made})`);
    assert.deepEqual(unicode, []);
  });

  test('loading the bundle and searching into a file load no terminal, socket or TLS module; the lazy builtins load when first called', () => {
    // chalk's colour sniffing (node:tty, and node:net with it) is left out: output/color.ts decides
    const db = join(SQLITE_FIXTURES, 'small.db');
    const out = join(tempDir(), 'loaded.json');
    const script = `const loaded = () => process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13));
const bin = require(${JSON.stringify(BIN)});
const b = bin.loadBundle();
const atLoad = loaded();
const quiet = { write() {} };
b.main(['node', 'convsearch', 'search', 'billing', '--scope', 'all', '--no-index', '--db', ${JSON.stringify(db)}], { ...bin.processSink(), stdout: quiet, stderr: quiet })
  .then((status) => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({ atLoad, status, after: loaded() })));`;
    // stdout and stderr on /dev/null, as into a file (a pipe would be a socket: node:net)
    const r = spawnSync(process.execPath, ['-e', script], { stdio: 'ignore' });
    assert.equal(r.status, 0);
    const { atLoad, status, after } = JSON.parse(readFileSync(out, 'utf8')) as { atLoad: string[]; status: number; after: string[] };
    assert.equal(status, 0);
    const never = ['tty', 'net', 'tls', 'child_process'];
    assert.deepEqual(
      atLoad.filter((m) => [...never, 'crypto', 'zlib', 'worker_threads'].includes(m)),
      [],
      'no lazy builtin is loaded by the load itself',
    );
    assert.deepEqual(
      after.filter((m) => never.includes(m)),
      [],
    );
    // the search hashed (the store's label, the replay's keys): the shared lazy module loaded crypto then
    assert.ok(after.includes('crypto'), 'crypto loaded on first use');
  });

  test("the Redis driver's bundle puts ioredis' Commander prototype in dictionary mode before its method loop (scripts/bundle.mjs)", () => {
    // the build fails when the loop's text is not found; this holds that the statement is in the bundle
    const code = readFileSync(join(BUNDLE, 'redis-driver.cjs'), 'utf8');
    const patched = /([\w$]+)\.prototype\.__dictionaryMode=0;delete \1\.prototype\.__dictionaryMode;([\w$]+)\.forEach\(function\(/.exec(
      code,
    );
    assert.ok(patched, 'the statement stands right before the loop');
    assert.equal(code.split('__dictionaryMode=0').length, 2, 'once');
  });

  test('every thread entry a bundle starts lies beside it', () => {
    const named = new Set<string>();
    for (const file of readdirSync(BUNDLE).filter((f) => f.endsWith('.cjs'))) {
      for (const m of readFileSync(join(BUNDLE, file), 'utf8').matchAll(/new URL\("\.\/([^"]+)",__bundleUrl\)/g)) named.add(m[1]!);
    }
    // the digest and index-build workers, the page map's hashing helper, the server bridge, its two store drivers and the shared index's
    assert.deepEqual([...named].sort(), [
      'build-worker.cjs',
      'digest-worker.cjs',
      'index-driver.cjs',
      'page-hash-worker.cjs',
      'postgres-driver.cjs',
      'redis-driver.cjs',
      'sync-worker.cjs',
    ]);
    for (const name of named) assert.ok(existsSync(join(BUNDLE, name)), `${name} is missing from dist/bundle`);
  });
});

describe('better-sqlite3 in the bundle: its JavaScript bundled, the installed addon of that version loaded directly (src/store/sqlite/native.ts)', () => {
  /** Runs the packed and installed command (helpers/packed.ts) with a hook that lists, at exit, every module file the process loaded. */
  function loadedBy(consumer: string, args: string[]): { status: number | null; stdout: string; stderr: string; modules: string[] } {
    const log = join(consumer, 'modules.json');
    const hook = join(consumer, 'hook.cjs');
    writeFileSync(
      hook,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(log)}, JSON.stringify(Object.keys(require.cache))));\n`,
    );
    const r = spawnSync(
      process.execPath,
      ['--require', hook, join(consumer, 'node_modules', 'convsearch', 'bin', 'convsearch.js'), ...args],
      {
        cwd: consumer,
        encoding: 'utf8',
        env: { ...process.env, CONVSEARCH_INDEX: '', CONVSEARCH_DB: '' },
      },
    );
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, modules: JSON.parse(readFileSync(log, 'utf8')) as string[] };
  }
  const db = join(SQLITE_FIXTURES, 'small.db');
  const search = (index: string): string[] => ['search', 'billing', '--scope', 'all', '--db', db, '--index', index];
  const packageJs = (modules: string[]): string[] => modules.filter((m) => /[\\/](better-sqlite3[\\/]lib|bindings)[\\/]/.test(m));
  const addon = (modules: string[]): string[] =>
    modules.filter((m) => m.endsWith(join('better-sqlite3', 'build', 'Release', 'better_sqlite3.node')));

  test('installed as npm installs it: the search (store and index) loads the addon, and neither the package modules nor bindings', () => {
    const { consumer } = installPacked();
    const want = runCli(search(join(tempDir(), 'want.index.db')));
    assert.equal(want.status, 0, want.stderr);
    const index = join(consumer, 'index', 'small.index.db');
    for (const build of [true, false]) {
      const r = loadedBy(consumer, search(index));
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, want.stdout, build ? 'a build' : 'a warm search');
      assert.deepEqual(packageJs(r.modules), []);
      assert.equal(addon(r.modules).length, 1);
    }
  });

  test('another better-sqlite3 version installed: the bundle leaves its JavaScript and loads the installed package as it loads itself', () => {
    const { consumer } = installPacked();
    const installed = join(consumer, 'node_modules', 'better-sqlite3');
    const real = join(ROOT, 'node_modules', 'better-sqlite3');
    rmSync(installed);
    mkdirSync(installed);
    const manifest = JSON.parse(readFileSync(join(real, 'package.json'), 'utf8')) as { version: string };
    writeFileSync(join(installed, 'package.json'), JSON.stringify({ ...manifest, version: `${manifest.version}-other` }));
    for (const part of ['lib', 'build']) symlinkSync(join(real, part), join(installed, part));
    const want = runCli(search(join(tempDir(), 'want.index.db')));
    const r = loadedBy(consumer, search(join(consumer, 'index', 'small.index.db')));
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, want.stdout);
    assert.ok(
      packageJs(r.modules).some((m) => m.endsWith(join('lib', 'database.js'))),
      'the installed package JavaScript',
    );
    assert.ok(
      packageJs(r.modules).some((m) => m.endsWith(join('bindings', 'bindings.js'))),
      'which found its addon itself',
    );
  });
});

describe('bin/convsearch.js starts the driver threads first (src/prestart.ts)', () => {
  /**
   * Runs bin/convsearch.js with a preload that logs, in order, each driver thread started, each session it is told to open, and the read of the bundle;
   * with `flags`, also each V8 flag set (on the main thread) and, on a driver thread, whether V8 took the code cache of the driver's bundle.
   */
  function startOrder(args: string[], env: NodeJS.ProcessEnv = {}, flags = false): string[] {
    const dir = mkdtempSync(join(tmpdir(), 'convsearch-prestart-'));
    try {
      const log = join(dir, 'log');
      const hook = join(dir, 'hook.cjs');
      writeFileSync(
        hook,
        `const fs = require('node:fs');
const wt = require('node:worker_threads');
const note = (s) => fs.appendFileSync(${JSON.stringify(log)}, s + '\\n');
const Worker = wt.Worker;
wt.Worker = class extends Worker {
  constructor(file, opts) {
    if (opts && opts.workerData && typeof opts.workerData.driver === 'string') note('thread ' + opts.workerData.driver.split('/').pop());
    super(file, opts);
  }
};
const post = wt.MessagePort.prototype.postMessage;
wt.MessagePort.prototype.postMessage = function (m, ...rest) {
  if (m && m.op === 'open') note('open');
  return post.call(this, m, ...rest);
};
const read = fs.readFileSync;
fs.readFileSync = function (p, ...rest) {
  if (wt.isMainThread && typeof p === 'string' && p.endsWith('convsearch.cjs')) note('bundle');
  return read.call(this, p, ...rest);
};
if (${flags}) {
  const v8 = require('node:v8');
  const set = v8.setFlagsFromString;
  v8.setFlagsFromString = (f) => { note('flag ' + f); return set(f); };
  const vm = require('node:vm');
  const Script = vm.Script;
  vm.Script = class extends Script {
    constructor(code, opts) {
      super(code, opts);
      if (opts && /-driver.cjs$/.test(opts.filename)) note((this.cachedDataRejected === false ? 'from its code cache: ' : 'compiled anew: ') + opts.filename.split('/').pop());
    }
  };
}
`,
      );
      spawnSync(process.execPath, ['--require', hook, BIN, ...args], {
        encoding: 'utf8',
        env: { ...process.env, CONVSEARCH_INDEX: '', CONVSEARCH_DB: '', ...env },
      });
      return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  // nothing listens on port 1: the command fails, after its threads started
  const db = join(SQLITE_FIXTURES, 'threaded.db');

  test('a shared index (--index, --index=, $CONVSEARCH_INDEX): its driver thread starts and connects before the bundle loads, and is the one the search uses', () => {
    const url = 'postgres://convsearch@127.0.0.1:1/none';
    for (const [args, env] of [
      [['search', 'x', '--db', db, '--index', url], {}],
      [['search', 'x', '--db', db, `--index=${url}`], {}],
      [['search', 'x', '--db', db], { CONVSEARCH_INDEX: url }],
    ] as const)
      assert.deepEqual(startOrder([...args], env), ['thread index-driver.cjs', 'open', 'bundle'], args.join(' '));
  });

  test('a server store: its driver thread starts before the bundle loads; --no-index and files start none', () => {
    assert.deepEqual(startOrder(['search', 'x', '--db', 'redis://127.0.0.1:1/0', '--no-index']), ['thread redis-driver.cjs', 'bundle']);
    assert.deepEqual(startOrder(['search', 'x', '--db', db, '--no-index', '--index', 'postgres://127.0.0.1:1/none']), ['bundle']);
    assert.deepEqual(startOrder(['search', 'x', '--db', db]), ['bundle']);
  });

  test('a command line that names no server (no colon in it, $CONVSEARCH_DB or $CONVSEARCH_INDEX) does not load the prestart bundle', () => {
    /** Whether bin/convsearch.js read dist/bundle/prestart.cjs on the main thread. */
    const loadsPrestart = (args: string[], env: NodeJS.ProcessEnv = {}): boolean => {
      const dir = tempDir();
      const hook = join(dir, 'hook.cjs');
      const log = join(dir, 'log');
      writeFileSync(
        hook,
        `const fs = require('node:fs');
const read = fs.readFileSync;
fs.readFileSync = function (p, ...rest) {
  if (require('node:worker_threads').isMainThread && typeof p === 'string' && p.endsWith('prestart.cjs')) fs.writeFileSync(${JSON.stringify(log)}, 'read');
  return read.call(this, p, ...rest);
};
`,
      );
      spawnSync(process.execPath, ['--require', hook, BIN, ...args], {
        env: { ...process.env, CONVSEARCH_INDEX: '', CONVSEARCH_DB: '', ...env },
      });
      return existsSync(log);
    };
    assert.equal(loadsPrestart(['search', 'x', '--db', db]), false);
    assert.equal(loadsPrestart(['runs', `--db=${db}`, '--index', join(tempDir(), 'x.index.db')]), false);
    assert.equal(loadsPrestart(['--version']), false);
    // a server named anywhere it can be: the launcher's prestart runs
    assert.equal(loadsPrestart(['search', 'x', '--db', 'redis://127.0.0.1:1/0', '--no-index']), true);
    assert.equal(loadsPrestart(['search', 'x', '--db', db], { CONVSEARCH_DB: 'redis://127.0.0.1:1/0' }), true);
    assert.equal(loadsPrestart(['search', 'x', '--db', db, '--index=postgres://127.0.0.1:1/none']), true);
  });

  test('a Postgres store: its session is opened ahead too, with the settings its reader asks for, unless the URL is refused or names one of several', () => {
    const url = 'postgres://convsearch@127.0.0.1:1/none';
    for (const [args, env] of [
      [['search', 'x', '--db', url, '--no-index'], {}],
      [['search', 'x', `--db=${url}?table=Steps`], {}],
      [['search', 'x'], { CONVSEARCH_DB: url }],
    ] as const)
      assert.deepEqual(startOrder([...args], env), ['thread postgres-driver.cjs', 'open', 'bundle'], args.join(' '));
    assert.deepEqual(startOrder(['search', 'x', '--db', `${url}?table=9steps`]), ['thread postgres-driver.cjs', 'bundle'], 'refused');
    assert.deepEqual(startOrder(['search', 'x', '--db', url, '--db', `${url}2`]), ['thread postgres-driver.cjs', 'bundle'], 'two stores');
  });

  test('the heap flag is set only for an index written in bulk: a search that builds nothing (--no-index, or an index that is current) starts its threads under no V8 flag', () => {
    const { HEAP_GROWING } = createRequire(import.meta.url)(BIN) as { HEAP_GROWING: string };
    const flag = `flag ${HEAP_GROWING}`;
    // a driver thread started ahead loads its driver from the build's code cache, and no flag follows
    const order = startOrder(['search', 'x', '--scope', 'all', '--db', 'postgres://convsearch@127.0.0.1:1/none', '--no-index'], {}, true);
    assert.deepEqual(
      order.filter((e) => e !== 'bundle' && e !== 'open'),
      ['thread postgres-driver.cjs', 'from its code cache: postgres-driver.cjs'],
    );
    assert.deepEqual(startOrder(['search', 'x', '--scope', 'all', '--db', db, '--no-index'], {}, true), ['bundle']);
    const dir = mkdtempSync(join(tmpdir(), 'convsearch-heapflag-'));
    try {
      const index = join(dir, 'threaded.idx');
      // the build: set once the bundle is compiled
      assert.deepEqual(startOrder(['search', 'x', '--scope', 'all', '--db', db, '--index', index], {}, true), ['bundle', flag]);
      assert.ok(existsSync(index), 'the index was built');
      // the same index, current: nothing written, no flag
      assert.deepEqual(startOrder(['search', 'x', '--scope', 'all', '--db', db, '--index', index], {}, true), ['bundle']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the bundled server bridge and drivers (real servers; skipped with a reason when absent)', () => {
  let pg: PgServer | string = 'not started';
  let redis: RedisServer | string = 'not started';
  before(async () => {
    pg = await startPostgres();
    redis = await startRedis({ tls: true });
    if (typeof pg !== 'string') pg.createDb('threaded', join(FIXTURES, 'postgres', 'threaded.sql'));
    if (typeof redis !== 'string') redis.load(0, join(FIXTURES, 'redis', 'threaded.redis'));
  });
  after(() => {
    if (typeof pg !== 'string') pg.stop();
    if (typeof redis !== 'string') redis.stop();
  });

  const search = (db: string): ReturnType<typeof runCli> =>
    runCli(['search', 'lookup', 'user', '--db', db, '--scope', 'all', '--no-index', '--json']);

  for (const kind of ['postgres', 'redis'] as const) {
    test(`a ${kind} store answers through the bundle as its SQLite twin does`, (t) => {
      const server = kind === 'postgres' ? pg : redis;
      if (typeof server === 'string') {
        t.skip(server);
        return;
      }
      const url = typeof pg !== 'string' && kind === 'postgres' ? pg.url('threaded') : (redis as RedisServer).url(0);
      const twin = search(join(SQLITE_FIXTURES, 'threaded.db'));
      const r = search(url);
      assert.equal(twin.status, 0, twin.stderr);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, twin.stdout);
    });
  }

  test('a rediss:// store answers through the bundle (node:tls loaded on first use, in the driver thread); a certificate nobody vouches for is one line and exit 2', (t) => {
    if (typeof redis === 'string') {
      t.skip(redis);
      return;
    }
    const { url, certificate } = redis.tls!;
    const twin = search(join(SQLITE_FIXTURES, 'threaded.db'));
    const args = ['search', 'lookup', 'user', '--db', url(0), '--scope', 'all', '--no-index', '--json'];
    const r = runCli(args, { env: { NODE_EXTRA_CA_CERTS: certificate } });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, twin.stdout);
    const refused = runCli(args);
    assert.equal(refused.status, 2);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /^convsearch: error: rediss:\/\/localhost:\d+\/0: self-signed certificate\n$/);
  });
});
