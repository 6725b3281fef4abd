#!/usr/bin/env node
// The layer rule of src/ (README "Architecture"): every folder imports only from itself and the folders
// before it in LAYERS, so the folder graph has no cycle; src/cli/ reaches the library through the
// package entry src/lib.ts only, so that whatever the command line does, a library user can do. Prints each offending import and exits 1; exits 0 when the tree keeps the rule.
//
//   node scripts/check-layers.mjs [--src DIR]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bottom to top. `.` is the files at the top of src/: the package entry, lib.ts, under the command line. */
export const LAYERS = ['py', 'text', 'store', 'parallel', 'history', 'render', 'search', 'sidecar', 'api', 'output', '.', 'cli'];
/** The one file of src/ outside its own folder that the command line may import. */
export const CLI_ENTRY = 'lib.ts';

/** What only bin/ may touch: the process's output streams and its exit status (src/ writes to a sink). */
const PROCESS_IO = /\bprocess\.(stdout|stderr|exitCode|exit)\b/g;
/** Worker-thread entry points: there process.exit() ends the thread, not the process. */
const THREAD_ENTRIES = ['store/sync-worker.ts'];

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|new URL\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

function files(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The layer folder of a path under src (`.` for the files at its top). */
function layerOf(src, path) {
  const parts = relative(src, path).split(sep);
  return parts.length === 1 ? '.' : parts[0];
}

/** Every edge that breaks the rule, as `file:line: message`. */
export function check(src) {
  const problems = [];
  const edges = new Map(); // folder -> Set(folder)
  for (const file of files(src)) {
    const from = layerOf(src, file);
    const text = readFileSync(file, 'utf8');
    for (const m of THREAD_ENTRIES.includes(relative(src, file).split(sep).join('/')) ? [] : text.matchAll(PROCESS_IO)) {
      const line = text.slice(0, m.index).split('\n').length;
      const source = text.split('\n')[line - 1].trim();
      if (source.startsWith('//') || source.startsWith('*')) continue;
      problems.push(`${relative(process.cwd(), file)}:${line}: touches ${m[0]}; only bin/ binds the sink to the process`);
    }
    for (const m of text.matchAll(IMPORT)) {
      const target = resolve(dirname(file), m[1]);
      const line = text.slice(0, m.index).split('\n').length;
      const where = `${relative(process.cwd(), file)}:${line}`;
      if (relative(src, target).startsWith('..')) {
        problems.push(`${where}: imports ${m[1]}, outside src/`);
        continue;
      }
      const to = layerOf(src, target);
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from).add(to);
      const rf = LAYERS.indexOf(from);
      const rt = LAYERS.indexOf(to);
      if (rf < 0) problems.push(`${where}: folder ${from}/ is not in the layer order (scripts/check-layers.mjs, README Architecture)`);
      else if (rt < 0) problems.push(`${where}: imports ${to}/, which is not in the layer order`);
      else if (rt > rf) problems.push(`${where}: ${from}/ imports ${to}/, a layer above it (${m[1]})`);
      if (from === 'cli' && relative(src, target).replace(/\.js$/, '.ts') !== CLI_ENTRY)
        problems.push(`${where}: cli/ imports ${m[1]}; the command line imports the library through src/${CLI_ENTRY} only`);
    }
  }
  for (const cycle of cycles(edges)) problems.push(`folder cycle: ${cycle.join(' -> ')}`);
  return problems;
}

/** Cycles of the folder graph (each reported once, from its smallest folder). */
function cycles(edges) {
  const found = [];
  const seen = new Set();
  const walk = (start, node, path) => {
    for (const next of edges.get(node) ?? []) {
      if (next === start) {
        const key = [...path].sort().join(',');
        if (!seen.has(key)) {
          seen.add(key);
          found.push([...path, start]);
        }
      } else if (!path.includes(next) && next > start) walk(start, next, [...path, next]);
    }
  };
  for (const start of [...edges.keys()].sort()) walk(start, start, [start]);
  return found;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--src');
  const src = resolve(i > 0 ? process.argv[i + 1] : join(dirname(fileURLToPath(import.meta.url)), '..', 'src'));
  const problems = check(src);
  for (const p of problems) console.error(p);
  if (problems.length) {
    console.error(`check-layers: ${problems.length} problem(s) with the layer order ${LAYERS.join(' → ')}`);
    process.exit(1);
  }
  console.log(`check-layers: ok (${LAYERS.join(' → ')})`);
}
