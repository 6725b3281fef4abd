import { SegmentBuilder } from '../dist/src/index/postings.js';
import { termFrequencies } from '../dist/src/search/tokenize.js';
import { Vocabulary, rng } from '../dist/scripts/bench/synthetic-store.js';
const v = new Vocabulary(60000, rng(42));
const r = rng(1);
const docs = [];
for (let d = 0; d < 57000; d++) docs.push(v.text(r, 80));
let t = performance.now();
const tfs = docs.map((d) => termFrequencies(d).tf);
console.log('tf', performance.now() - t);
t = performance.now();
const b = new SegmentBuilder();
let k = 0;
for (let run = 0; run < 2140; run++) { b.beginRun(run); for (let p = 0; p < 27 && k < tfs.length; p++) b.addDocument(p, tfs[k++]); }
console.log('add', performance.now() - t, tfs.reduce((n, m) => n + m.size, 0));
t = performance.now();
let n = 0; for (const [term, data] of b.postings()) n += data.length;
console.log('postings', performance.now() - t, n);
