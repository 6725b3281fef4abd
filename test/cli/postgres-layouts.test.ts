/**
 * The command line over the two upstream Postgres table layouts (docs/backends.md, "Table names"): every
 * golden case of the bundled parity stores gives the SQLite answer (bytes, exit status, ranked hits and
 * scores) from the mixed-case layout, as backend-parity.test.ts checks the lower-case one; `runs` and `show` of
 * every run agree across SQLite and both layouts; tables spelled with the exact case of the prefix come
 * out as a store-notice warning; a bad prefix or media table is one error line, exit 2, password masked.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, FIXTURES, ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { goldenCases, hitProblems, jsonArgs, readGolden } from '../helpers/golden.js';
import { layoutSql } from '../helpers/pg-layouts.js';
import { STORES, startPostgres, type PgServer, need } from '../helpers/servers.js';

const GOLDEN = join(FIXTURES, 'parity', 'golden');
const SECRET = 'Layout-S3cret';
let pg: PgServer | string = 'not started';

before(async () => {
  pg = await startPostgres();
  if (typeof pg === 'string') return;
  for (const store of STORES) {
    pg.createDb(`old_${store}`, join(FIXTURES, 'backends', 'postgres', `${store}.sql`));
    pg.createDb(`new_${store}`, layoutSql(store, 'Steps'));
  }
  pg.createDb('twins', layoutSql('small', 'Steps'));
  pg.createDb('recipe', layoutSql('media', 'Agents', 'AgentBlobs'));
  pg.psql('twins', 'CREATE TABLE "Steps_runs" (LIKE steps_runs); CREATE TABLE "Steps_snapshots" (LIKE steps_snapshots)');
  pg.psql('postgres', `CREATE ROLE layout_user LOGIN PASSWORD '${SECRET}'`);
});

after(() => {
  if (typeof pg !== 'string') pg.stop();
});

const oldUrl = (s: PgServer, store: string): string => s.url(`old_${store}`);
const newUrl = (s: PgServer, store: string, prefix = 'Steps'): string => s.url(`new_${store}`, undefined, undefined, `?table=${prefix}`);

// one case, and one command, at a time: in-process commands block on the server, and more in flight only
// start more driver threads (as in backend-parity.test.ts)
describe('golden cases from the mixed-case layout', () => {
  for (const file of goldenCases(GOLDEN)) {
    test(file.slice(GOLDEN.length + 1), async (t) => {
      const s = need(t, pg);
      if (!s) return;
      const c = readGolden(file);
      const at = c.args.indexOf('--db');
      const store = c.args[at + 1]!.replace(/\.db$/, '');
      const withDb = (db: string): string[] => c.args.map((a, i) => (i === at + 1 ? db : a));
      const fresh = await cli([...withDb(newUrl(s, store, store.length % 2 ? 'STEPS' : 'Steps')), '--no-index']);
      assert.equal(fresh.stdout, c.output + '\n');
      assert.equal(fresh.status, c.exit, fresh.stderr);
      // the lower-case layout gives these bytes too: backend-parity.test.ts checks it against the same golden answers
      const j = await cli(jsonArgs(withDb(newUrl(s, store))));
      assert.equal(j.status, c.exit, j.stderr);
      assert.deepEqual(hitProblems(c, j.stdout), []);
    });
  }
});

describe('runs and show across SQLite and both layouts', () => {
  test('runs --json and show --json of every run are the same bytes from all three', async (t) => {
    const s = need(t, pg);
    if (!s) return;
    for (const store of STORES) {
      const dbs: string[] = [join(FIXTURES, 'parity', `${store}.db`), oldUrl(s, store), newUrl(s, store)];
      const runs: CliResult[] = [];
      for (const db of dbs) runs.push(await cli(['runs', '--json', '--db', db]));
      for (const r of runs) assert.equal(r.status, 0, r.stderr);
      assert.equal(runs[1]!.stdout, runs[0]!.stdout, `${store}: runs, lower-case layout`);
      assert.equal(runs[2]!.stdout, runs[0]!.stdout, `${store}: runs, mixed-case layout`);
      const ids = (JSON.parse(runs[0]!.stdout) as { runs: Array<{ run_id: string }> }).runs.map((r) => r.run_id);
      assert.ok(ids.length > 0);
      for (const id of ids) {
        const shown: CliResult[] = [];
        for (const db of dbs) shown.push(await cli(['show', id, '--json', '--db', db]));
        for (const r of shown) assert.equal(r.status, 0, r.stderr);
        assert.equal(shown[1]!.stdout, shown[0]!.stdout, `${store} ${id}: show, lower-case layout`);
        assert.equal(shown[2]!.stdout, shown[0]!.stdout, `${store} ${id}: show, mixed-case layout`);
      }
    }
  });
});

describe('tables of the other spelling, and bad names', () => {
  test('exact-case twins beside the folded tables: the folded ones are read, the twins reported as a store notice', async (t) => {
    const s = need(t, pg);
    if (!s) return;
    const twins = s.url('twins', undefined, undefined, '?table=Steps');
    const plain = await cli(['search', 'billing', '--scope', 'all', '--no-index', '--db', newUrl(s, 'small')]);
    const r = await cli(['search', 'billing', '--scope', 'all', '--no-index', '--db', twins]);
    assert.equal(r.status, plain.status, r.stderr);
    assert.equal(r.stdout, plain.stdout);
    assert.match(
      r.stderr,
      /convsearch: warning: 2 table\(s\) spelled with the exact case of the prefix, not read \(PostgresStepStore reads the lower-case ones\) \("Steps_runs" is not read: PostgresStepStore's unquoted names resolve to steps_runs; "Steps_snapshots" is not read/,
    );
    const j = await cli(['search', 'billing', '--scope', 'all', '--json', '--db', twins]);
    const warnings = (JSON.parse(j.stdout) as { warnings: Array<{ notice?: string; detail?: string }> }).warnings;
    assert.deepEqual(
      warnings.filter((w) => w.notice === 'case-twin-table').map((w) => w.detail),
      [
        `"Steps_runs" is not read: PostgresStepStore's unquoted names resolve to steps_runs`,
        `"Steps_snapshots" is not read: PostgresStepStore's unquoted names resolve to steps_snapshots`,
      ],
    );
  });

  test('an invalid prefix or media table: one error line, exit 2, the password masked', async (t) => {
    const s = need(t, pg);
    if (!s) return;
    const cases: Array<[string, string]> = [
      ['?table=Steps-v2', 'invalid table prefix "Steps-v2"'],
      [`?table=${'S'.repeat(41)}`, 'invalid table prefix'],
      ['?table=9steps', 'invalid table prefix "9steps"'],
      ['?table=Steps&media=9blobs', 'invalid media table "9blobs"'],
    ];
    for (const [extra, says] of cases) {
      const url: string = s.url('new_small', 'layout_user', SECRET, extra);
      for (const args of [['runs'], ['search', 'billing', '--scope', 'all', '--json']]) {
        // the first as a process of its own: what a user sees, no stack trace
        const r: CliResult = args[0] === 'runs' ? runCli([...args, '--db', url]) : await cli([...args, '--db', url]);
        assert.equal(r.status, 2, r.stderr);
        assert.equal(r.stdout, '');
        const lines = r.stderr.trimEnd().split('\n');
        assert.equal(lines.length, 1, r.stderr);
        assert.ok(lines[0]!.startsWith('convsearch: error: postgresql://layout_user:***@127.0.0.1:'), r.stderr);
        assert.ok(lines[0]!.includes(says), r.stderr);
        assert.ok(!r.stderr.includes(SECRET), r.stderr);
      }
    }
  });
});

describe('the recipe of docs/backends.md', () => {
  test('a mixed-case prefix and media table: the recipe runs as written (its server swapped for the test one) and reads the store', async (t) => {
    const s = need(t, pg);
    if (!s) return;
    const doc = readFileSync(join(ROOT, 'docs', 'backends.md'), 'utf8');
    const line = doc.split('\n').find((l) => l.startsWith('convsearch ') && l.includes('?table=Agents&media=AgentBlobs'));
    assert.ok(line, 'the recipe is in docs/backends.md');
    // split like the shell: words, and single-quoted words as they are
    const words = [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!).slice(1);
    const at = words.findIndex((w) => w.startsWith('postgresql://'));
    const query = new URL(words[at]!).search;
    assert.equal(query, '?table=Agents&media=AgentBlobs');
    const recipe = await cli(words.map((w, i) => (i === at ? s.url('recipe', undefined, undefined, query) : w)));
    const lower = await cli(words.map((w, i) => (i === at ? s.url('old_media') : w)));
    assert.equal(recipe.status, 0, recipe.stderr);
    assert.equal(recipe.stderr, lower.stderr);
    assert.equal(recipe.stdout, lower.stdout, 'the store under the mixed-case names reads as under the default ones');
    // and the media table named by ?media= is the one read: a binary part's restored size shows in show --json
    const shownNew = await cli(['show', 'run-media-1', '--json', '--db', s.url('recipe', undefined, undefined, query)]);
    const shownOld = await cli(['show', 'run-media-1', '--json', '--db', s.url('old_media')]);
    assert.equal(shownNew.status, 0, shownNew.stderr);
    assert.equal(shownNew.stdout, shownOld.stdout);
  });
});
