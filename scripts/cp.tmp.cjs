const Database = require('better-sqlite3');
const db = new Database(process.argv[2], { readonly: true });
const rows = db.prepare('SELECT digests FROM pages WHERE id >= ? AND id < ? ORDER BY id').pluck().all(2 * 2 ** 24, 3 * 2 ** 24);
const total = rows.reduce((a, b) => a + b.length, 0);
console.log(rows.length, total);
for (let r = 0; r < 4; r++) {
  let t = performance.now();
  const bytes = Buffer.allocUnsafe(total); let at = 0;
  for (const b of rows) { b.copy(bytes, at); at += b.length; }
  const c1 = performance.now() - t; t = performance.now();
  const b2 = Buffer.allocUnsafe(total); at = 0;
  for (const b of rows) { b2.set(b, at); at += b.length; }
  const c2 = performance.now() - t; t = performance.now();
  const b3 = Buffer.allocUnsafe(total); b3.fill(0); at = 0;
  for (const b of rows) { b.copy(b3, at); at += b.length; }
  const c3 = performance.now() - t; t = performance.now();
  const rows2 = db.prepare('SELECT digests FROM pages WHERE id >= ? AND id < ? ORDER BY id').pluck().all(2 * 2 ** 24, 3 * 2 ** 24);
  const c4 = performance.now() - t;
  console.log('copy', c1.toFixed(1), 'set', c2.toFixed(1), 'prefault+copy', c3.toFixed(1), 'read', c4.toFixed(1));
}
{
  const js = rows.map((b) => Buffer.from(b));
  for (let r = 0; r < 3; r++) {
    let t = performance.now();
    const bytes = Buffer.allocUnsafe(total); let at = 0;
    for (const b of js) { b.copy(bytes, at); at += b.length; }
    const c1 = performance.now() - t; t = performance.now();
    const big = Buffer.concat(rows, total);
    const c2 = performance.now() - t;
    console.log('js-made copy', c1.toFixed(1), 'concat', c2.toFixed(1));
  }
}
