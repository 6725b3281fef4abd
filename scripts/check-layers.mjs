#!/usr/bin/env node
// The layer rule of src/ (README "Architecture"): every folder imports only from itself and the folders
// before it in LAYERS, so the folder graph has no cycle; src/cli/ reaches the library through src/api/
// only. Prints each offending import and exits 1; exits 0 when the tree keeps the rule.
//
//   node scripts/check-layers.mjs [--src DIR]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bottom to top. The entry files at the top of src/ (the package entry) come last. */
export const LAYERS = ['py', 'text', 'store', 'parallel', 'history', 'render', 'search', 'sidecar', 'api', 'output', 'cli', '.'];
/** Folders the command line must not import directly: it goes through the API. */
export const CLI_FORBIDDEN = ['py', 'text', 'store', 'parallel', 'history', 'render', 'search', 'sidecar'];

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
      if (from === 'cli' && CLI_FORBIDDEN.includes(to)) problems.push(`${where}: cli/ imports ${to}/ directly; go through api/ (${m[1]})`);
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
    console.error(`check-layers: ${problems.length} import(s) break the layer order ${LAYERS.slice(0, -1).join(' → ')}`);
    process.exit(1);
  }
  console.log(`check-layers: ok (${LAYERS.slice(0, -1).join(' → ')})`);
}
