import fs from 'fs';
const p = JSON.parse(fs.readFileSync(process.argv[2],'utf8'));
const byId = new Map(p.nodes.map(n=>[n.id,n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children||[]) parent.set(c, n.id);
const selfT = new Map(); for (let i=0;i<p.samples.length;i++) selfT.set(p.samples[i],(selfT.get(p.samples[i])||0)+(p.timeDeltas[i]||0));
const incl = new Map();
for (const n of p.nodes){ const t=(selfT.get(n.id)||0)/1000; if(!t) continue; const seen=new Set(); let id=n.id; while(id!==undefined){ const cf=byId.get(id).callFrame; const k=`${cf.functionName||'(anon)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber}`; if(!seen.has(k)){seen.add(k); incl.set(k,(incl.get(k)||0)+t);} id=parent.get(id);} }
for (const [k,v] of [...incl].sort((a,b)=>b[1]-a[1]).slice(0,+process.argv[3]||40)) console.log(v.toFixed(0).padStart(7),k);
