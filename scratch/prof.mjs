import fs from 'fs';
const f = process.argv[2];
const p = JSON.parse(fs.readFileSync(f,'utf8'));
const self = new Map(); const byId = new Map();
for (const n of p.nodes) byId.set(n.id, n);
const dt = new Map();
for (let i=0;i<p.samples.length;i++){ dt.set(p.samples[i], (dt.get(p.samples[i])||0) + (p.timeDeltas[i]||0)); }
let total=0;
for (const n of p.nodes){ const t=(dt.get(n.id)||0)/1000; total+=t; const cf=n.callFrame; const k=`${cf.functionName||'(anon)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber}`; self.set(k,(self.get(k)||0)+t);}
const arr=[...self].sort((a,b)=>b[1]-a[1]).slice(0, +process.argv[3]||30);
console.log('total ms', total.toFixed(0));
for (const [k,v] of arr) console.log(v.toFixed(0).padStart(7), k);
