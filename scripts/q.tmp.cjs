const Database = require('better-sqlite3');
const db = new Database(process.argv[2], { readonly: true });
const Q = {
  list: 'SELECT rowid, run_id, conversation_id, parent_run_id, agent_name, metadata, started_at FROM runs ORDER BY started_at ASC, rowid ASC',
  listType: 'SELECT rowid, run_id, conversation_id, parent_run_id, agent_name, typeof(metadata), started_at FROM runs ORDER BY started_at ASC, rowid ASC',
  text: `SELECT group_concat(rowid || ',' || quote(run_id) || ',' || quote(conversation_id) || ',' || quote(parent_run_id) || ',' ||
         quote(agent_name) || ',' || quote(started_at) || ',' || typeof(metadata), char(10) ORDER BY rowid) FROM runs`,
  both: `SELECT rowid, run_id, conversation_id, parent_run_id, agent_name, typeof(metadata), started_at, rowid || ',' || quote(run_id) || ',' || quote(conversation_id) || ',' || quote(parent_run_id) || ',' ||
         quote(agent_name) || ',' || quote(started_at) || ',' || typeof(metadata) FROM runs ORDER BY started_at ASC, rowid ASC`,
};
for (let r = 0; r < 3; r++) for (const [k, q] of Object.entries(Q)) {
  const t = performance.now();
  const s = db.prepare(q).raw();
  const rows = k === 'text' ? s.pluck().get() : s.all();
  let extra = 0;
  if (k === 'both') { const idx = rows.map((_, i) => i).sort((a, b) => rows[a][0] - rows[b][0]); let out = ''; for (let i = 0; i < idx.length; i++) out += (i ? '\n' : '') + rows[idx[i]][7]; extra = out.length; }
  console.log(k, (performance.now() - t).toFixed(1), extra || (typeof rows === 'string' ? rows.length : rows.length));
}
