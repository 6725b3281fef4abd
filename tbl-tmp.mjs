import { withSession } from '/work/main/dist/src/lib.js';
import { runsTable } from '/work/main/dist/src/output/tables.js';
import { Chalk } from '/work/main/node_modules/chalk/source/index.js';
const listing = await withSession('/tmp/mm.db', { index: { path: '/tmp/idx/mm.idx' } }, (s) => s.listRuns({ sort: 'started', reverse: false, limit: null }));
const runs = listing.runs;
const style = { chalk: new Chalk({ level: 0 }), width: null };
let t = performance.now();
const table = runsTable(runs, style);
const t1 = performance.now();
let n = 0; let chunk = '';
for (const line of table.lines) { chunk += line + '\n'; if (chunk.length > 65536) { n += Buffer.byteLength(chunk); chunk = ''; } }
const t2 = performance.now();
console.log(`rows ${(t1 - t).toFixed(1)} draw ${(t2 - t1).toFixed(1)} bytes ${n}`);
t = performance.now(); const tb2 = runsTable(runs, style); for (const line of tb2.lines) chunk += line; console.log('second', (performance.now() - t).toFixed(1));
