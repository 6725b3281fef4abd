#!/usr/bin/env node
'use strict';
/**
 * Runs the bundle (npm run build: tsc, then scripts/bundle.mjs) compiled from V8's code cache that the
 * build wrote beside it: one file to load, and little to compile, at every start. CommonJS (see
 * bin/package.json): an ES module entry would start Node's module loader too.
 */
const { closeSync, fstatSync, readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { Script } = require('node:vm');
const { createRequire, wrap } = require('node:module');

const BUNDLE = join(__dirname, '..', 'dist', 'bundle', 'convsearch.cjs');
/** The driver threads a command line names, started before BUNDLE loads (src/prestart.ts). */
const PRESTART = join(__dirname, '..', 'dist', 'bundle', 'prestart.cjs');

/** The bundle's exports; `script` is there for the build, which writes its code cache. */
function loadBundle() {
  let cachedData;
  try {
    // written by the same build as the bundle; V8 refuses it if the length, Node or V8 flags differ
    cachedData = readFileSync(`${BUNDLE}.cache`);
  } catch {
    cachedData = undefined;
  }
  const script = new Script(wrap(readFileSync(BUNDLE, 'utf8')), { filename: BUNDLE, cachedData });
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, createRequire(BUNDLE), module, BUNDLE, dirname(BUNDLE));
  return { ...module.exports, script };
}

/** The working directory, or '' when it is gone (removed under the process): no default place is looked for in it. */
function workingDirectory() {
  try {
    return process.cwd();
  } catch {
    return '';
  }
}

/**
 * The command's sink bound to this process: the only place that touches process.stdout, process.stderr
 * and the exit status. `bulkWrite` is called before an index is written in bulk.
 */
function processSink(bulkWrite) {
  const closed = new Set();
  // a reader that goes away (`| head -1`) is not an error: stop writing, keep the exit status
  const text = (stream) => {
    stream.on('error', (e) => {
      if (e.code === 'EPIPE') closed.add(stream);
      else throw e;
    });
    return {
      write: (s) => {
        if (!closed.has(stream)) stream.write(s);
      },
      get isTTY() {
        return Boolean(stream.isTTY);
      },
      get columns() {
        return stream.columns;
      },
      stream: stream.isTTY ? stream : undefined,
    };
  };
  return {
    stdout: text(process.stdout),
    stderr: text(process.stderr),
    env: process.env,
    cwd: workingDirectory(),
    readStdin: () => readFileSync(0, 'utf8'),
    bulkWrite,
  };
}

/**
 * At exit Node puts back the terminal modes it found at start on every stdio fd that is a terminal
 * (its ResetStdio). When convsearch feeds a pipe (`| fzf`, `| less`, fzf's preview), the program reading
 * it shares that terminal and has switched it to raw mode in the meantime: the reset would undo that
 * under it (keys echoed, Enter read as Ctrl-J). Node leaves alone an fd that no longer refers to what it
 * found, so a convsearch writing into a pipe closes its terminal fds as it exits. Nothing is written
 * after 'exit'. Writing to files or /dev/null only, it feeds no program: node:tty (which loads node:net,
 * ~8 ms) is not loaded for it.
 */
function leaveTerminalAloneAtExit() {
  if (process.stdout.isTTY) return; // convsearch draws on the terminal itself: nobody downstream to disturb
  if (!feedsProgram()) return;
  process.on('exit', () => {
    const { isatty } = require('node:tty');
    for (const fd of [0, 2]) {
      if (!isatty(fd)) continue;
      try {
        closeSync(fd);
      } catch {
        // already closed: nothing to protect
      }
    }
  });
}

/** Whether stdout or stderr is a pipe or a socket: another program may read what convsearch writes. */
function feedsProgram() {
  return [1, 2].some((fd) => {
    try {
      const s = fstatSync(fd);
      return s.isFIFO() || s.isSocket();
    } catch {
      return false; // closed: nobody reads it
    }
  });
}

/**
 * V8 lets the heap grow to up to four times what survived the last full collection before it collects
 * again: an index build whose live data stays near 45 MB peaked at 350 MB RSS on 20,000 small runs. A
 * growth factor of 1.5 keeps it at 212–217 MB (50,000 runs: 260–268 MB) for the same CPU time; a factor
 * of 2 left 236 MB and 295–317 MB (bench: "peak RSS of a build"; 1.3 saved little more). A
 * process-wide flag, so it is set here, where the process is ours, never by the library, and only when
 * the command is about to write an index in bulk (the sink's bulkWrite, WorkHooks.onBulkWrite): under a
 * changed flag V8 refuses the code caches (the bundle's, and Node's own of the modules every thread
 * started after it loads, and of builtins loaded after it), and compiles them from source (an empty
 * worker thread: 124 M instructions without the flag, 292 M with it). Never while the driver threads
 * started ahead are still starting.
 */
const HEAP_GROWING = '--heap-growing-percent=50';

/**
 * Whether the command line (or $CONVSEARCH_DB, $CONVSEARCH_INDEX) may name a server: a store URL has a
 * scheme (`postgres:`, `redis:`), a shared index `://`, so each holds a colon. Without one, PRESTART
 * would start nothing, and its load (~2 ms: a bundle compiled without a cache) is skipped; main() runs
 * the same check in the bundle either way.
 */
function mayNameServer(args, env) {
  return [...args, env.CONVSEARCH_DB, env.CONVSEARCH_INDEX].some((a) => typeof a === 'string' && a.includes(':'));
}

/** The spellings of the version flag (src/cli/flags.ts; the bundle test checks they agree). */
const VERSION_FLAGS = ['-V', '--version'];

/**
 * `convsearch --version` alone: package.json's version, which the build also puts in the bundle (the
 * bundle test checks they agree), printed without loading the bundle (~30 ms of a 150 ms process).
 */
function printVersionAlone(args) {
  if (args.length !== 1 || !VERSION_FLAGS.includes(args[0])) return false;
  process.stdout.on('error', () => {}); // a reader gone (`| head -0`) is not an error
  process.stdout.write(`${require('../package.json').version}\n`);
  return true;
}

/** Runs the command line: the bundle's main() with this process as its sink. */
function run() {
  // a server's driver thread starts and imports its driver while the bundle loads: it is taken from there
  // (the prestart bundle only when the command line may name a server: otherwise it would start nothing)
  const early = mayNameServer(process.argv.slice(2), process.env) ? require(PRESTART) : null;
  early?.prestart(process.argv.slice(2), process.env);
  const bundle = loadBundle();
  let heapSet = false;
  const heap = () => {
    if (heapSet) return;
    heapSet = true;
    require('node:v8').setFlagsFromString(HEAP_GROWING);
  };
  const bulkWrite = () => (early ? early.whenThreadsUp(heap) : heap());
  bundle.main(process.argv, processSink(bulkWrite)).then(exitWhenFlushed);
}

/**
 * Ends the process with `status` once stdout and stderr have taken everything written to them (writes
 * to a pipe are asynchronous), without the teardown of a natural exit: V8 frees its heap, and first
 * runs the collections it had put off for idle time (a search at 50,000 runs: 0.49 s, of which ~40 ms
 * after its output). The command has closed what it opened; 'exit' handlers still run.
 */
function exitWhenFlushed(status) {
  process.exitCode = status;
  let pending = 2;
  const flushed = () => {
    if (--pending === 0) process.exit(status);
  };
  for (const stream of [process.stdout, process.stderr]) {
    // an empty write's callback comes after every write before it (or with the error of a stream gone)
    if (stream.writableLength === 0 || stream.destroyed) flushed();
    else stream.write('', flushed);
  }
}

if (require.main === module) {
  leaveTerminalAloneAtExit();
  if (!printVersionAlone(process.argv.slice(2))) run();
} else module.exports = { loadBundle, processSink, mayNameServer, HEAP_GROWING, VERSION_FLAGS };
