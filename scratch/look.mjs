import Database from 'better-sqlite3';
const db = new Database('/tmp/convsearch-bench/synthetic-750mb-seed42.db', {readonly:true});
const conv = db.prepare('SELECT conversation_id FROM runs LIMIT 1 OFFSET 500').get().conversation_id;
const runs = db.prepare('SELECT run_id FROM runs WHERE conversation_id=? ORDER BY started_at').all(conv);
for (const r of runs.slice(0,3)) {
  const snaps = db.prepare('SELECT seq, state, length(messages) n, messages FROM snapshots WHERE run_id=? ORDER BY seq').all(r.run_id);
  console.log('run', r.run_id, snaps.map(s=>`${s.state[0]}:${s.n}:${JSON.parse(s.messages).length}`).join(' '));
}
const s = db.prepare('SELECT messages FROM snapshots WHERE run_id=? ORDER BY seq').all(runs[1].run_id);
const a = JSON.parse(s[0].messages), b = JSON.parse(s[1].messages);
console.log(JSON.stringify(a.slice(-2)).slice(0,1500));
console.log('---');
console.log(JSON.stringify(b.slice(a.length-2, a.length+1)).slice(0,2500));
