#!/usr/bin/env node
'use strict';
/**
 * Runs the bundle (npm run build: tsc, then scripts/bundle.mjs) compiled from V8's code cache that the
 * build wrote beside it: one file to load, and little to compile, at every start. CommonJS (see
 * bin/package.json): an ES module entry would start Node's module loader too.
 */
const { readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { Script } = require('node:vm');
const { createRequire, wrap } = require('node:module');

const BUNDLE = join(__dirname, '..', 'dist', 'bundle', 'convsearch.cjs');

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

if (require.main === module) loadBundle().main(process.argv);
else module.exports = { loadBundle };
