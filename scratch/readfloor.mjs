import Database from 'better-sqlite3';
const db = new Database('/tmp/convsearch-bench/synthetic-750mb-seed42.db', {readonly:true});
const mode = process.argv[2];
const runs = db.prepare('SELECT run_id FROM runs').pluck().all();
const st = mode==='blob' ? db.prepare("SELECT seq, CAST(messages AS BLOB) m FROM snapshots WHERE run_id=? AND state='complete' ORDER BY seq").raw()
 : db.prepare("SELECT seq, messages m FROM snapshots WHERE run_id=? AND state='complete' ORDER BY seq").raw();
let t=performance.now(), n=0;
for (const r of runs) for (const row of st.iterate(r)) n+=row[1].length;
console.log(mode, (performance.now()-t).toFixed(0),'ms', n, process.resourceUsage().maxRSS/1024|0, 'MB');
