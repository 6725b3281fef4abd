/**
 * Run ids stored as TEXT whose bytes are not UTF-8 (a writer that bound raw bytes as text). SQLite hands
 * them out with U+FFFD; the run must still be read by its own bytes, and said, not replayed empty.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cli } from '../../helpers/cli.js';
import { addRun, addSnapshot, assistantMsg, buildStore, userMsg } from '../../helpers/stores.js';
import { sha } from '../../helpers/evidence.js';

type Writer = Parameters<Parameters<typeof buildStore>[0]>[0];

/** Rewrites run `from`'s id, in every table that holds it, to the text of `bytes`. */
function setRawId(w: Writer, from: string, bytes: Buffer): void {
  for (const t of ['runs', 'snapshots']) w.db.prepare(`UPDATE ${t} SET run_id = CAST(? AS TEXT) WHERE run_id = ?`).run(bytes, from);
}

function oddStore(more: (w: Writer) => void = () => {}): string {
  return buildStore((w) => {
    addRun(w, 'plain', 'c1', 0);
    addSnapshot(w, 'plain', [userMsg('ordinary question', 1), assistantMsg('ordinary answer', 2)]);
    addRun(w, 'odd', 'c1', 10);
    addSnapshot(w, 'odd', [userMsg('where is the zyxwvut key', 11)]);
    addSnapshot(w, 'odd', [userMsg('where is the zyxwvut key', 11), assistantMsg('under the zyxwvut mat', 12)]);
    setRawId(w, 'odd', Buffer.from([0x72, 0x75, 0x6e, 0x2d, 0xff]));
    more(w);
  });
}

for (const index of [['--no-index'], []]) {
  const how = index.length ? 'without the index' : 'through the index';
  test(`a run whose id is not UTF-8 is read by its bytes and said once (${how})`, async () => {
    const db = oddStore();
    const before = sha(db);
    const runs = await cli(['runs', '--db', db, '--json', ...index]);
    assert.equal(runs.status, 0, runs.stderr);
    const odd = JSON.parse(runs.stdout).runs.find((r: { run_id: string }) => r.run_id === 'run-\uFFFD');
    assert.equal(odd.messages, 2, 'its two messages, not an empty run');
    assert.equal(odd.snapshots, 2);
    const warned = runs.stderr.split('\n').filter((l) => l.includes('not UTF-8'));
    assert.equal(warned.length, 1, runs.stderr);
    assert.match(warned[0]!, /b'run-\\xff', runs row 2/);

    const hit = await cli(['search', '--db', db, '--scope', 'all', '--json', 'zyxwvut', ...index]);
    assert.equal(hit.status, 0, hit.stderr);
    const out = JSON.parse(hit.stdout);
    assert.equal(out.summary.total_matches, 2, 'both of its messages match');
    assert.deepEqual(
      out.hits.map((h: { run_id: string }) => h.run_id),
      ['run-\uFFFD'],
    );
    assert.ok(
      out.warnings.some(
        (w: { notice?: string; detail?: string }) => w.notice === 'non-utf8-run-id' && w.detail === "stored as b'run-\\xff', runs row 2",
      ),
      JSON.stringify(out.warnings),
    );
    assert.equal(sha(db), before, 'the store is untouched');
  });
}

test('two run ids that are not UTF-8 and read as the same text: exit 2, one line naming both rows', async () => {
  const twin = oddStore((w) => {
    addRun(w, 'twin', 'c2', 20);
    addSnapshot(w, 'twin', [userMsg('zyxwvut twin', 21)]);
    setRawId(w, 'twin', Buffer.from([0x72, 0x75, 0x6e, 0x2d, 0xfe]));
  });
  for (const args of [['runs'], ['search', '--scope', 'all', 'zyxwvut'], ['search', '--scope', 'all', 'zyxwvut', '--no-index']]) {
    const r = await cli([...args, '--db', twin]);
    assert.equal(r.status, 2, r.stdout);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /runs rows 2 and 3 have run ids that are not UTF-8 \(run-\\xff, run-\\xfe\) and read as the same text/);
  }
});
