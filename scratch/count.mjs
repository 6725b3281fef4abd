import { openStore } from '../dist/src/store/open.js';
import { HistorySource } from '../dist/src/history/source.js';
const s = openStore(process.argv[2]);
const src = new HistorySource(s);
const t = performance.now();
let n=0; for (const r of src.runs()) n += src.replay(r.runId).messages.length;
console.log('replay ms', (performance.now()-t).toFixed(0), 'messages', n);
console.log({re: globalThis.__re, full: globalThis.__full, fullMB: globalThis.__fullb/1e6, miss: globalThis.__miss, reused: globalThis.__reused, snap: globalThis.__snap, noreuse: globalThis.__noreuse});
