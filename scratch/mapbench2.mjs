import { Vocabulary, rng } from '../dist/scripts/bench/synthetic-store.js';
const v = new Vocabulary(60000, rng(42));
const r = rng(1);
const docs = [];
for (let d = 0; d < 57000; d++) docs.push(v.text(r, 80));
const RE = /[\p{L}\p{N}_]+/gu;
let t = performance.now(); let n = 0;
for (const d of docs) for (const m of d.toLowerCase().matchAll(RE)) n++;
console.log('matchAll only', (performance.now() - t).toFixed(0), n);
t = performance.now(); n = 0;
const A = /[a-z0-9_]+/g;
for (const d of docs) { const l = d.toLowerCase(); A.lastIndex = 0; let m; while ((m = A.exec(l))) n++; }
console.log('exec ascii', (performance.now() - t).toFixed(0), n);
t = performance.now(); n = 0;
const global = new Map();
for (const d of docs) for (const m of d.toLowerCase().matchAll(RE)) { const k = m[0]; global.set(k, (global.get(k) ?? 0) + 1); }
console.log('global map', (performance.now() - t).toFixed(0), global.size);
t = performance.now();
for (const d of docs) { const tf = new Map(); for (const m of d.toLowerCase().matchAll(RE)) { const k = m[0]; tf.set(k, (tf.get(k) ?? 0) + 1); } }
console.log('per-doc map', (performance.now() - t).toFixed(0));
t = performance.now();
for (const d of docs) { const tf = new Map(); for (const k of d.toLowerCase().split(/[^a-z0-9_]+/)) { if (k) tf.set(k, (tf.get(k) ?? 0) + 1); } }
console.log('split per-doc map', (performance.now() - t).toFixed(0));
console.log(docs[0].slice(0,200));
