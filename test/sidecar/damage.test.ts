import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { searchJson } from '../../src/output/json.js';
import { toolText } from '../../src/output/tool-text.js';
import type { SearchOptions } from '../../src/search/search.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { cli } from '../helpers/cli.js';
import { randomOptions, threadedStore } from '../helpers/random-stores.js';
import { searchReader, tempDir } from '../helpers/stores.js';

const SIDES = ['-wal', '-shm', '-journal'];

/** A store, a good index of it, and queries whose replayed answers are known. */
function fixture(seed: number) {
  const { path, runs } = threadedStore(seed);
  const dir = tempDir();
  const indexPath = join(dir, 'idx.db');
  const random = rng(seed * 31);
  const queries: SearchOptions[] = Array.from({ length: 4 }, () => randomOptions(random, runs));
  // words every run has, so that the queries read postings, documents and the corpus cache
  queries.push({ ...queries[0]!, query: 'user tool lookup', scope: 'all', conversationId: null, runId: null, maxMatches: 50 });
  const store = openSqliteReader(path);
  try {
    searchReader(store, queries[0]!, { path: indexPath }); // builds it
  } finally {
    store.close();
  }
  const good = join(dir, 'good.db');
  copyFileSync(indexPath, good);
  const store2 = openSqliteReader(path);
  const want = queries.map((o) => searchReader(store2, o, false));
  store2.close();
  return { path, indexPath, good: readFileSync(good), queries, want };
}

function damage(good: Buffer, random: () => number): { bytes: Buffer; what: string } {
  if (random() < 0.25) {
    const cut = Math.floor(random() * good.length);
    return { bytes: good.subarray(0, cut), what: `truncated to ${cut}` };
  }
  const bytes = Buffer.from(good);
  const flips: number[] = [];
  for (let k = 0, n = 1 + Math.floor(random() * 3); k < n; k++) {
    const bit = Math.floor(random() * bytes.length * 8);
    bytes[bit >> 3]! ^= 1 << (bit & 7);
    flips.push(bit);
  }
  return { bytes, what: `bits ${flips.join(', ')} flipped` };
}

describe('a damaged index is detected and rebuilt, never believed', () => {
  test('random bit flips and truncations of a good index: every answer equals the replay (many seeds)', () => {
    const f = fixture(3);
    const random = rng(2024);
    let warned = 0;
    for (let trial = 0; trial < 300; trial++) {
      const { bytes, what } = damage(f.good, random);
      for (const s of SIDES) rmSync(f.indexPath + s, { force: true });
      writeFileSync(f.indexPath, bytes);
      const store = openSqliteReader(f.path);
      try {
        const notes: string[] = [];
        const hooks = { onWarning: (m: string) => notes.push(m), onFallback: (m: string) => notes.push(`fallback: ${m}`) };
        f.queries.forEach((o, q) => {
          const got = searchReader(store, o, { path: f.indexPath }, hooks);
          assert.equal(toolText(got), toolText(f.want[q]!), `trial ${trial} (${what}), query ${q}`);
          assert.deepEqual(searchJson(got), searchJson(f.want[q]!), `trial ${trial} (${what}), query ${q}`);
        });
        assert.ok(notes.length <= 1, `trial ${trial} (${what}): at most one warning: ${notes.join(' | ')}`);
        assert.ok(
          notes.every((n) => !n.startsWith('fallback')),
          `trial ${trial} (${what}): rebuilt, not bypassed: ${notes.join(' | ')}`,
        );
        warned += notes.length;
      } finally {
        store.close();
      }
    }
    assert.ok(warned > 100, `most damage is noticed (${warned} of 300 warned)`);
  });

  test('through the CLI: the same output as --no-index, exit 0, at most one warning line, never an internal or store error', async () => {
    const f = fixture(5);
    const random = rng(77);
    const args = (extra: string[]) => [
      'search',
      'user',
      'tool',
      '--db',
      f.path,
      '--scope',
      'all',
      '--format',
      'tool',
      '-m',
      '50',
      ...extra,
    ];
    const want = await cli(args(['--no-index']));
    for (let trial = 0; trial < 40; trial++) {
      const { bytes, what } = damage(f.good, random);
      for (const s of SIDES) rmSync(f.indexPath + s, { force: true });
      writeFileSync(f.indexPath, bytes);
      const r = await cli(args(['--index', f.indexPath]));
      assert.equal(r.stdout, want.stdout, `trial ${trial} (${what})`);
      assert.equal(r.status, want.status, `trial ${trial} (${what}): ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /error|\n\s+at /, `trial ${trial} (${what})`);
      const notes = r.stderr.split('\n').filter((l) => /warning: index /.test(l));
      assert.ok(notes.length <= 1, `trial ${trial} (${what}): ${r.stderr}`);
      assert.equal(
        r.stderr
          .split('\n')
          .filter((l) => !/warning: index /.test(l))
          .join('\n'),
        want.stderr,
        `trial ${trial} (${what})`,
      );
      const list = await cli(['runs', '--json', '--db', f.path, '--index', f.indexPath]);
      assert.equal(list.status, 0, list.stderr);
    }
  });

  test("a tampered schema (a renamed column) is the index's damage, never a database error of the store", async () => {
    const f = fixture(7);
    writeFileSync(f.indexPath, f.good);
    const db = new Database(f.indexPath);
    db.exec('ALTER TABLE runs RENAME COLUMN run_id TO rid');
    db.close();
    const args = ['search', 'user', '--db', f.path, '--scope', 'all', '--format', 'tool'];
    const want = await cli([...args, '--no-index']);
    const r = await cli([...args, '--index', f.indexPath]);
    assert.equal(r.stdout, want.stdout);
    assert.equal(r.status, want.status);
    assert.match(
      r.stderr,
      /^convsearch: warning: index .* was damaged \(the index schema is not the one this version writes\); rebuilt it\n/,
    );
    assert.equal(r.stderr.split('\n').slice(1).join('\n'), want.stderr);
    assert.ok(statSync(f.indexPath).size > 0);
  });

  test('rows rewritten with valid SQLite but wrong content (a same-size edit of stored text) are caught by their checksums', async () => {
    const f = fixture(9);
    writeFileSync(f.indexPath, f.good);
    const db = new Database(f.indexPath);
    const changed = db.prepare("UPDATE messages SET fields = replace(fields, 'e', 'f') WHERE fields LIKE '%e%'").run().changes;
    db.prepare("UPDATE runs SET run_id = replace(run_id, 'r', 's')").run();
    db.close();
    assert.ok(changed > 0);
    const args = ['search', 'user', 'tool', '--db', f.path, '--scope', 'all', '--json', '-m', '50'];
    const want = await cli([...args, '--no-index']);
    const r = await cli([...args, '--index', f.indexPath]);
    assert.equal(r.stdout, want.stdout);
    assert.match(r.stderr, /was damaged \(a (runs|messages|corpus_cache) row fails its checksum\); rebuilt it/);
  });
});
