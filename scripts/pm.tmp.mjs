import Database from 'better-sqlite3';
import { IndexTables } from '../dist/src/sidecar/tables.js';
import { SqliteIndexDb } from '../dist/src/sidecar/index-db.js';
const db = new Database(process.argv[2], { readonly: true }); if (process.argv[3]) db.exec(process.argv[3]);
const t0 = new IndexTables(new SqliteIndexDb(db));
for (let r = 0; r < 5; r++) {
  const t = new IndexTables(new SqliteIndexDb(db));
  let a = performance.now(); const m = t.pageMap(); let b = performance.now();
  const k = t.knownRuns(); let c = performance.now();
  console.log('pageMap', (b - a).toFixed(1), 'knownRuns', (c - b).toFixed(1), m.pages.length, k.runs.size);
}
