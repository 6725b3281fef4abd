import Database from 'better-sqlite3';
import { splitTopLevelArray } from '../dist/src/history/json-parse.js';
const db = new Database('file:/tmp/convsearch-bench/synthetic-750mb-seed42.db?mode=ro&immutable=1', {readonly:true});
const runs = db.prepare('SELECT run_id, conversation_id FROM runs ORDER BY started_at, rowid').all();
const st = db.prepare("SELECT seq, state, messages FROM snapshots WHERE run_id=? ORDER BY seq");
let total=0, prefixReused=0, parsed=0, convHit=0, bytesTotal=0, bytesParsed=0, bytesConvMiss=0;
const convSeen = new Map();
const t=performance.now();
for (const r of runs) {
  let prev=null;
  let seen = convSeen.get(r.conversation_id); if(!seen){seen=new Set(); convSeen.set(r.conversation_id, seen);}
  for (const row of st.iterate(r.run_id)) {
    if (row.state!=='complete') continue;
    const v=row.messages; bytesTotal+=v.length;
    const ranges=splitTopLevelArray(v);
    total+=ranges.length;
    let reused=0;
    if(prev){ for(let k=Math.min(prev.r.length,ranges.length);k>0;k--){const e=prev.r[k-1][1]; if(ranges[k-1][1]===e && v.slice(0,e)===prev.v.slice(0,e)){reused=k;break;}}}
    prefixReused+=reused;
    for(let i=reused;i<ranges.length;i++){const s=v.slice(ranges[i][0],ranges[i][1]); parsed++; bytesParsed+=s.length; if(seen.has(s)) convHit++; else {seen.add(s); bytesConvMiss+=s.length;}}
    prev={v,r:ranges};
  }
}
console.log({total,prefixReused,parsed,convHit,bytesTotal,bytesParsed,bytesConvMiss, ms: performance.now()-t});
