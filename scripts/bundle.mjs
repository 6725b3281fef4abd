/**
 * `npm run build`'s second step: bundles the command line into dist/bundle/ with esbuild, so that a run
 * loads one file instead of resolving and compiling ~90 ES modules (the start-up cost issue 11 measured).
 * Thread entry points are bundles of their own beside it; the modules that start them name them by
 * `new URL('./x.js', import.meta.url)`, which this script rewrites to the entry's bundle name and checks:
 * a URL that names no entry fails the build rather than a user's search. Native better-sqlite3 and the
 * server drivers stay in node_modules, except pg inside the Postgres driver threads' bundles and ioredis inside the Redis one's (DRIVER_INSIDE).
 * Last, V8's code caches of the bundle and of the driver threads' bundles are written beside them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist', 'bundle');

/** Bundle name (in dist/bundle/) → its source. `convsearch` is what bin/convsearch.js loads. */
const ENTRIES = {
  convsearch: 'src/cli/main.ts',
  // what bin/convsearch.js runs before it loads convsearch.cjs: the driver threads the command line names
  prestart: 'src/prestart.ts',
  'digest-worker': 'src/search/digest-worker.ts',
  'build-worker': 'src/sidecar/build-worker.ts',
  'sync-worker': 'src/store/sync-worker.ts',
  'page-hash-worker': 'src/store/sqlite/page-hash-worker.ts',
  'postgres-driver': 'src/store/postgres/driver.ts',
  'index-driver': 'src/sidecar/shared/pg-driver.ts',
  'redis-driver': 'src/store/redis/driver.ts',
};
const BUNDLE_OF = new Map(Object.entries(ENTRIES).map(([name, src]) => [join(ROOT, src), name]));

const WORKER_URL = /new URL\('(\.\.?\/[^']+)\.js', import\.meta\.url\)/g;

/** Points every `new URL('./x.js', import.meta.url)` at the bundle built from x.ts. */
const threadEntries = {
  name: 'thread-entries',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const errors = [];
      const contents = source.replace(WORKER_URL, (whole, spec) => {
        const target = join(dirname(args.path), `${spec}.ts`);
        const name = BUNDLE_OF.get(target);
        if (name === undefined) {
          errors.push({ text: `${whole} names ${relative(ROOT, target)}, which is no bundle entry (scripts/bundle.mjs ENTRIES)` });
          return whole;
        }
        return `new URL('./${name}.cjs', import.meta.url)`;
      });
      return { contents, loader: 'ts', errors };
    });
  },
};

/**
 * Builtins most commands never call, loaded on first use: each is a module whose getters require the
 * real one (commander requires child_process for executable subcommands we have none of; the threads,
 * hashing and compression run only when a command replays or checks a store; the server drivers' TLS
 * only for a server that asks for it: its load was ~3.5 ms of a Redis driver thread's start). ~2 ms
 * each at start.
 */
const LAZY_BUILTINS = ['child_process', 'worker_threads', 'crypto', 'zlib', 'tls'];
const require = createRequire(import.meta.url);
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(b) {
    const filter = new RegExp(`^(node:)?(${LAZY_BUILTINS.join('|')})$`);
    const name = (path) => path.replace(/^node:/, '');
    b.onResolve({ filter }, (args) => {
      if (args.namespace === 'lazy-builtin-getters') return { path: args.path, external: true };
      if (args.namespace === 'lazy-builtin') return { path: name(args.path), namespace: 'lazy-builtin-getters' };
      return { path: name(args.path), namespace: 'lazy-builtin' };
    });
    // one ES module per builtin that every importer shares: each ES module importing a CommonJS one
    // copies its every export (esbuild's __toESM), and crypto's seventy-odd, copied for each of the
    // seventeen modules that import it, took ~3 ms of every start (--cpu-prof)
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({ contents: `export * from 'node:${args.path}';\n`, loader: 'js' }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin-getters' }, (args) => {
      const names = Object.keys(require(`node:${args.path}`));
      const getters = names.map((n) => `  get ${JSON.stringify(n)}() { return load()[${JSON.stringify(n)}]; },`).join('\n');
      return {
        contents: `let real;\nconst load = () => (real ??= require('node:${args.path}'));\nmodule.exports = {\n${getters}\n};\n`,
        loader: 'js',
      };
    });
  },
};

/**
 * chalk works out at import whether the terminal takes colour (its `#supports-color`, which loads
 * node:tty and with it node:net: ~8 ms of every start, measured with --cpu-prof). convsearch never asks
 * it: output/color.ts decides and hands chalk a level. The bundle's chalk is given a module that says
 * "no colour" to its unused default instances instead.
 */
const noColorSniffing = {
  name: 'no-color-sniffing',
  setup(b) {
    b.onResolve({ filter: /^#supports-color$/ }, () => ({ path: 'supports-color', namespace: 'no-color-sniffing' }));
    b.onLoad({ filter: /.*/, namespace: 'no-color-sniffing' }, () => ({
      contents: 'export default { stdout: false, stderr: false };\n',
      loader: 'js',
    }));
  },
};

/**
 * ioredis' Commander adds two methods a command (some 600) to its class prototype one at a time. V8
 * keeps a prototype's properties in fast mode and copies its descriptors at each function-valued
 * property added, so the loop is quadratic: 16-28 ms of every Redis command's driver thread start
 * (--cpu-prof), where the same properties on a prototype first put in dictionary mode (a property added
 * and deleted) take 0.3 ms; V8 makes the prototype fast again once it is used as one. The loop is
 * found by its text: a driver whose text differs fails the build, to be looked at again.
 */
const COMMANDER_LOOP = 'commands.forEach(function (commandName) {';
const prototypeInDictionaryMode = {
  name: 'prototype-in-dictionary-mode',
  setup(b) {
    b.onLoad({ filter: /[\\/]ioredis[\\/]built[\\/]utils[\\/]Commander\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (source.split(COMMANDER_LOOP).length !== 2)
        return { errors: [{ text: `${relative(ROOT, args.path)} no longer holds "${COMMANDER_LOOP}" once: see scripts/bundle.mjs` }] };
      const dictionary = 'Commander.prototype.__dictionaryMode = 0;\ndelete Commander.prototype.__dictionaryMode;\n';
      return { contents: source.replace(COMMANDER_LOOP, dictionary + COMMANDER_LOOP), loader: 'js' };
    });
  },
};

const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
/** The better-sqlite3 whose JavaScript the bundle carries: the bundle uses it with the addon of that version only. */
const BETTER_SQLITE3_VERSION = JSON.parse(readFileSync(require.resolve('better-sqlite3/package.json'), 'utf8')).version;

// no chunk of an earlier build left beside this one's
rmSync(OUT, { recursive: true, force: true });

/**
 * Thread entries that carry their driver inside (bundle name → the packages bundled into it): `pg` is
 * some twenty modules to resolve, read and compile in a fresh thread at every Postgres command (30–130 ms
 * measured here); one file with a code cache (below) is a few. pg's optional native and Cloudflare
 * sockets are never loaded on Node and stay outside.
 */
const DRIVER_INSIDE = { 'postgres-driver': ['pg'], 'index-driver': ['pg'], 'redis-driver': ['ioredis'] };
const NEVER_LOADED = ['pg-native', 'pg-cloudflare'];
// drivers only the server backends load: resolved from node_modules at run time. better-sqlite3's
// JavaScript is bundled (src/store/sqlite/native.ts loads its addon); `bindings`, which it asks only
// when given no addon, is not
const EXTERNAL = ['bindings', 'pg', 'ioredis'];

const entries = (names) => Object.fromEntries(names.map((name) => [name, join(ROOT, ENTRIES[name])]));
const builds = [
  { entryPoints: entries(Object.keys(ENTRIES).filter((n) => !(n in DRIVER_INSIDE))), external: EXTERNAL },
  ...Object.entries(DRIVER_INSIDE).map(([name, inside]) => ({
    entryPoints: entries([name]),
    external: [...EXTERNAL.filter((x) => !inside.includes(x)), ...NEVER_LOADED],
  })),
];

for (const each of builds)
  await build({
    ...each,
    outdir: OUT,
    bundle: true,
    platform: 'node',
    // CommonJS, not ESM: an ES module importing a builtin gets a facade that reads every export, and
    // node:fs's lazy getters then load the stream modules (~10 ms of a start measured with --cpu-prof)
    format: 'cjs',
    outExtension: { '.js': '.cjs' },
    target: 'node20',
    // less to parse at every start
    minify: true,
    // what import.meta.url meant to each module: the bundle's own URL (thread entries lie beside it)
    banner: { js: "const __bundleUrl = require('node:url').pathToFileURL(__filename).href;" },
    define: {
      CONVSEARCH_VERSION: JSON.stringify(VERSION),
      BETTER_SQLITE3_VERSION: JSON.stringify(BETTER_SQLITE3_VERSION),
      'import.meta.url': '__bundleUrl',
    },
    plugins: [threadEntries, lazyBuiltins, noColorSniffing, prototypeInDictionaryMode],
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
  });

// bin/convsearch.js runs the bundle through vm.Script, which has no loader for import(): none may be left.
// The one allowed is text, not code of the bundle: the pool's loader (parallel/pool.ts BOOT), which a worker
// thread evaluates on its own, where import() works.
const main = join(OUT, 'convsearch.cjs');
const code = readFileSync(main, 'utf8').replaceAll('import(workerData.script)', '');
if (/\bimport\(/.test(code)) throw new Error(`${main} has a dynamic import(), which bin/convsearch.js cannot run`);

// V8's code cache for the bundle: bin/convsearch.js compiles from it. It holds the functions compiled by
// the time it is taken, so it is taken after the commands run most often have run, from an index
// already current (a search, runs, conversations: the code of a warm run, not of a build, which a
// process of its own made first); what else a command needs compiles as it runs. Written here only,
// right after the bundle it matches, under the V8 flags bin/convsearch.js loads the bundle with: none
// (V8 refuses a cache taken under others; it sets its heap flag afterwards).
const BIN = join(ROOT, 'bin', 'convsearch.js');
const DEMO = join(ROOT, 'examples', 'sessions.db');
const work = mkdtempSync(join(tmpdir(), 'convsearch-build-'));
try {
  const index = join(work, 'demo.index.db');
  const cli = (args) => ['node', 'convsearch', ...args, '--db', DEMO, '--index', index];
  const warm = [['search', 'refund', 'idempotency', '--scope', 'all'], ['runs'], ['conversations']];
  const env = { ...process.env, CONVSEARCH_DB: '', CONVSEARCH_INDEX: '', CONVSEARCH_THREADS: '1' };
  const built = spawnSync(process.execPath, [BIN, ...cli(warm[0]).slice(2)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env,
    encoding: 'utf8',
  });
  if (built.status !== 0) throw new Error(`building the demo index for the code cache failed (exit ${built.status}): ${built.stderr}`);
  const cache = spawnSync(
    process.execPath,
    [
      '-e',
      `const bin = require(${JSON.stringify(BIN)});
const b = bin.loadBundle();
const quiet = { write() {} };
const sink = { ...bin.processSink(), stdout: quiet, stderr: quiet };
(async () => {
  for (const argv of ${JSON.stringify([['node', 'convsearch', '--help'], ...warm.map(cli)])}) {
    const status = await b.main(argv, sink);
    if (status > 1) throw new Error(argv.join(' ') + ' exited ' + status);
  }
  require('node:fs').writeFileSync(${JSON.stringify(`${main}.cache`)}, b.script.createCachedData());
})();`,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'], env },
  );
  if (cache.status !== 0) throw new Error(`writing the code cache failed (exit ${cache.status})`);
} finally {
  rmSync(work, { recursive: true, force: true });
}

// the same for the bundles that carry their driver (a driver thread runs them through store/cached-module.ts,
// tsc's output of which writes the cache here), taken after their top level has run, under the same flags
const driverCache = spawnSync(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    `import { runCached, writeCache } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'src', 'store', 'cached-module.js')).href)};
for (const file of ${JSON.stringify(Object.keys(DRIVER_INSIDE).map((name) => join(OUT, `${name}.cjs`)))}) writeCache(file, runCached(file));`,
  ],
  { stdio: ['ignore', 'ignore', 'inherit'] },
);
if (driverCache.status !== 0) throw new Error(`writing the driver bundles' code caches failed (exit ${driverCache.status})`);
