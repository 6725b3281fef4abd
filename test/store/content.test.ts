import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { test } from 'node:test';
import { draws } from '../helpers/draws.js';
import { tempDir } from '../helpers/stores.js';
import { ContentDigester, EMPTY_DIGEST, OverlaidMap, sharedStart } from '../../src/store/content.js';

test('a run with no rows digests to EMPTY_DIGEST (what the readers write for no media), the SHA-256 of nothing in base64', () => {
  assert.deepEqual(new ContentDigester(0).finish(), { count: 0, maxSeq: 0, digest: EMPTY_DIGEST, prefix: EMPTY_DIGEST });
  assert.equal(EMPTY_DIGEST, createHash('sha256').digest('base64'));
});

test('totalDigest hashes in batches, bucket by bucket (FNV-1a of the key mod 256), the bytes hashCell makes of each key, then its count, last seq and digest: the same digest as one update per cell', async () => {
  const { hashCell, totalDigest } = await import('../../src/store/content.js');
  const runs = new Map<string, { count: number; maxSeq: number; digest: string; prefix: string }>();
  // more than one batch (64K characters), keys with lone and paired surrogates, NULs, a non-text key's form
  for (let i = 0; i < 3000; i++) runs.set(`run-${i}-${'x'.repeat(i % 40)}`, { count: i, maxSeq: i * 3, digest: `d${i}`, prefix: '' });
  for (const key of ['\uD800', 'a\uDC00', '\uD83D\uDE00z', '\u0000number:7', '', 'é\uD800'])
    runs.set(key, { count: 1, maxSeq: 2, digest: EMPTY_DIGEST, prefix: '' });
  const media = { count: 4, maxSeq: 0, digest: 'm', prefix: 'm' };
  const bucket = (key: string): number => {
    let h = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    return (h >>> 0) % 256;
  };
  const one = createHash('sha256').update(`table\n${media.count}:${media.digest}\n`);
  for (let b = 0; b < 256; b++) {
    const h = createHash('sha256');
    for (const key of [...runs.keys()].filter((k) => bucket(k) === b).sort()) {
      const r = runs.get(key)!;
      hashCell(h, key);
      h.update(`${r.count}:${r.maxSeq}:${r.digest}\n`);
    }
    one.update(h.digest());
  }
  assert.equal(totalDigest(runs, media, 'table'), one.digest('base64'));
});

/** A run's rows as snapshots grow: each text the previous one's messages and one more, the JSON array closed. */
function growingTexts(parts: readonly string[]): string[] {
  const out: string[] = [];
  for (let k = 1; k <= parts.length; k++) out.push(`[${parts.slice(0, k).join(',')}]`);
  return out;
}

function digestOf(texts: readonly unknown[], cut = 0): { digest: string; prefix: string } {
  const d = new ContentDigester(cut);
  for (let i = 0; i < texts.length; i++) d.add(i + 1, [i + 1, i, 'ts', 'complete', typeof texts[i], texts[i]]);
  const { digest, prefix } = d.finish();
  return { digest, prefix };
}

test('sharedStart: the texts agree up to what it returns, which never ends between the halves of a surrogate pair', async () => {
  const { sharedStart } = await import('../../src/store/content.js');
  const cases: Array<[string, string]> = [
    ['[1]', '[1,2]'],
    ['[1,2]', '[1,3]'],
    ['a\uD83D\uDE00]', 'a\uD83D\uDE01]'],
    ['\uD83D\uDE00'.repeat(9000), `${'\uD83D\uDE00'.repeat(8192)}\uD83D\uDE01${'x'.repeat(20000)}`],
    [`${'x'.repeat(16383)}\uD83D\uDE00${'x'.repeat(30000)}`, `${'x'.repeat(16383)}\uD83D\uDE01${'x'.repeat(30000)}`],
    ['', 'abc'],
    ['abc', ''],
  ];
  for (const [prev, text] of cases) {
    const l = sharedStart(prev, text);
    assert.ok(l >= 0 && l <= Math.min(prev.length, text.length));
    assert.equal(text.slice(0, l), prev.slice(0, l));
    const c = l > 0 ? text.charCodeAt(l - 1) : 0;
    assert.ok(!(c >= 0xd800 && c <= 0xdbff), `ends inside a pair at ${l}`);
  }
  // the longest common start
  assert.equal(sharedStart('[1]', '[1,2]'), 2);
  assert.equal(sharedStart('x'.repeat(40000), `${'x'.repeat(20000)}y`), 20000);
  assert.equal(sharedStart(`${'x'.repeat(17000)}ab`, `${'x'.repeat(17000)}ac`), 17001);
  // one ending after a pair's first half stops before it
  assert.equal(
    sharedStart(`${'x'.repeat(16383)}\uD83D\uDE00${'x'.repeat(30000)}`, `${'x'.repeat(16383)}\uD83D\uDE01${'x'.repeat(30000)}`),
    16383,
  );
  assert.equal(sharedStart('a\uD83D\uDE00]', 'a\uD83D\uDE01]'), 1);
});

test('a row text that repeats the previous one is bound as exactly as one hashed whole: one character changed anywhere in any row changes the digest', () => {
  // messages of a few kinds: short ASCII, long (past the 16,384-character steps), accents, emoji pairs
  const parts = [
    '{"a":"hello"}',
    `{"b":"${'long text '.repeat(3000)}"}`,
    '{"c":"é, ü and 😀 and 😁"}',
    `{"d":"${'😀'.repeat(9000)}"}`,
    '{"e":1}',
  ];
  const texts = growingTexts(parts);
  // a restamped message: the last row rewrites its first message, so the usual append does not apply there
  texts.push(texts[texts.length - 1]!.replace('hello', 'hellO'));
  const base = digestOf(texts).digest;
  assert.equal(digestOf(texts).digest, base, 'the same rows give the same digest');
  const rnd = draws(7);
  for (let trial = 0; trial < 300; trial++) {
    const row = rnd(texts.length);
    const t = texts[row]!;
    const at = rnd(t.length);
    const edits = [
      t.slice(0, at) + (t[at] === 'x' ? 'y' : 'x') + t.slice(at + 1), // same length
      t.slice(0, at) + t.slice(at + 1), // one character less
      `${t.slice(0, at)}\uDE00${t.slice(at)}`, // a lone surrogate more
    ];
    for (const edited of edits) {
      if (edited === t) continue;
      const changed = texts.slice();
      changed[row] = edited;
      assert.notEqual(digestOf(changed).digest, base, `row ${row} edited at ${at}`);
    }
  }
});

test('a text whose shared start ends inside a surrogate pair: the pair is hashed whole, so two different second halves never collide', () => {
  const prefix = 'x'.repeat(16383);
  const a = digestOf([`${prefix}\uD83D\uDE00${'y'.repeat(20000)}`, `${prefix}\uD83D\uDE01${'y'.repeat(20000)}`]).digest;
  const b = digestOf([`${prefix}\uD83D\uDE00${'y'.repeat(20000)}`, `${prefix}\uD83D\uDE02${'y'.repeat(20000)}`]).digest;
  assert.notEqual(a, b);
  const c = digestOf(['[\uD83D\uDE00]', '[\uD83D\uDE01]']).digest;
  const d = digestOf(['[\uD83D\uDE00]', '[\uD83D\uDE02]']).digest;
  assert.notEqual(c, d);
});

test('the prefix digest at the cut is the digest of the rows up to it, the texts after it hashed against their predecessors', () => {
  const texts = growingTexts(['{"a":1}', '{"b":2}', '{"c":3}', '{"d":4}']);
  for (let cut = 1; cut < texts.length; cut++) assert.equal(digestOf(texts, cut).prefix, digestOf(texts.slice(0, cut)).digest);
  // a row that is not text between two texts: the next text is hashed whole, and still bound
  const mixed = [texts[0]!, null, texts[1]!];
  assert.notEqual(digestOf(mixed).digest, digestOf([texts[0]!, null, texts[2]!]).digest);
});

test('addAscii digests a row whose text is ASCII bytes exactly as add does its string, whatever the rows around it, and wherever the cut', () => {
  const rnd = draws(21);
  const ascii = (n: number): string => Array.from({ length: n }, () => String.fromCharCode(32 + rnd(95))).join('');
  for (let trial = 0; trial < 200; trial++) {
    // texts that mostly repeat their predecessor and append (the harness's way), sometimes not, sometimes
    // shorter, equal, empty, past the 16,384-character steps, not ASCII, or not text at all
    const rows: unknown[] = [];
    let text = `[${ascii(rnd(50))}`;
    for (let i = 0, n = 1 + rnd(12); i < n; i++) {
      const kind = rnd(10);
      if (kind < 5) text = `${text.slice(0, -1 || undefined)},${ascii(rnd(3) === 0 ? 20000 + rnd(5000) : rnd(300))}]`;
      else if (kind === 5) text = text.slice(0, rnd(text.length + 1));
      else if (kind === 6) text = ascii(rnd(40));
      else if (kind === 7) {
        rows.push(rnd(2) === 0 ? `${text}é😀` : `\uD83D${text}`);
        continue;
      } else if (kind === 8) {
        rows.push(rnd(3) === 0 ? null : rnd(2) === 0 ? Buffer.from(text) : 42);
        continue;
      }
      rows.push(text);
    }
    const cut = rnd(rows.length + 2);
    const strings = new ContentDigester(cut, true);
    const bytes = new ContentDigester(cut, true);
    rows.forEach((t, i) => {
      const cells = [
        i + 1,
        rnd(3) === 0 ? null : i,
        'ts',
        rnd(4) === 0 ? 'interrupted' : 'complete',
        typeof t === 'string' ? 'text' : typeof t,
      ];
      strings.add(i + 1, [...cells, t]);
      if (typeof t === 'string' && /^[\x00-\x7f]*$/.test(t)) bytes.addAscii(i + 1, cells, Buffer.from(t, 'latin1'));
      else bytes.add(i + 1, [...cells, t]);
      if (rnd(8) === 0) {
        strings.release();
        bytes.release();
      }
    });
    assert.deepEqual(bytes.finish(), strings.finish(), `trial ${trial}`);
  }
});

test('resume goes on from a run digest and its last text as if the rows were digested in one: for any split, text kind and form (string or ASCII bytes)', () => {
  const rnd = draws(22);
  const ascii = (n: number): string => Array.from({ length: n }, () => String.fromCharCode(32 + rnd(95))).join('');
  const cellsOf = (i: number): unknown[] => [i * 3 + 1, i, 'ts', i % 5 === 4 ? 'interrupted' : 'complete', 'text'];
  for (let trial = 0; trial < 200; trial++) {
    const rows: unknown[] = [];
    let text = `[${ascii(rnd(50))}`;
    for (let i = 0, n = 2 + rnd(10); i < n; i++) {
      const kind = rnd(8);
      if (kind < 5) text = `${text.slice(0, -1 || undefined)},${ascii(rnd(3) === 0 ? 20000 + rnd(5000) : rnd(300))}]`;
      else if (kind === 5) text = ascii(rnd(40));
      else if (kind === 6) {
        rows.push(`${text}é😀`);
        continue;
      } else {
        rows.push(rnd(2) === 0 ? null : Buffer.from(text));
        continue;
      }
      rows.push(text);
    }
    /** `d` with rows `from`…`to` added. */
    const added = (d: ContentDigester, from: number, to = rows.length): ContentDigester => {
      for (let i = from; i < to; i++) d.add(i * 3 + 1, [...cellsOf(i), rows[i]]);
      return d;
    };
    const all = added(new ContentDigester(0), 0).finish();
    const k = 1 + rnd(rows.length);
    const known = added(new ContentDigester(0), 0, k).finish();
    // the last text as SQLite's reader gives it: a text as a string or (ASCII) as bytes; a BLOB shares nothing
    const last = rows[k - 1];
    const forms = typeof last === 'string' ? [last, ...(/^[\x00-\x7f]*$/.test(last) ? [Buffer.from(last, 'latin1')] : [])] : [null];
    for (const form of forms) {
      assert.deepEqual(
        added(ContentDigester.resume(known, form)!, k).finish(),
        { count: all.count, maxSeq: all.maxSeq, digest: all.digest, prefix: known.digest },
        `trial ${trial}, split ${k}`,
      );
    }
    // a next text that shares a start with the last: gone on from without the last text, another digest
    if (typeof last === 'string' && typeof rows[k] === 'string' && sharedStart(last, rows[k] as string) > 0) {
      assert.notEqual(added(ContentDigester.resume(known, null)!, k).finish().digest, all.digest, `trial ${trial}: what is shared is said`);
    }
  }
  // only a chain's digest is gone on from: not another backend's, not that of no rows
  assert.equal(ContentDigester.resume({ count: 2, maxSeq: 2, digest: 'pg:abc', prefix: 'pg:abc' }, null), null);
  assert.equal(ContentDigester.resume({ count: 0, maxSeq: 0, digest: EMPTY_DIGEST, prefix: EMPTY_DIGEST }, null), null);
});

test("RowStats counts states and the last step as SQLite's SUM(state = …) and MAX(step_index) with stepOf do, over random cells of every type", async () => {
  const { RowStats } = await import('../../src/store/content.js');
  const { stepOf } = await import('../../src/store/sqlite/steps.js');
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(':memory:');
  // no column affinity: every cell is stored as the type it is given
  db.exec('CREATE TABLE t (run INTEGER, state, step)');
  const states: unknown[] = ['complete', 'interrupted', 'Complete', 'complete ', 'paused', '', null, 1, 2.5, Buffer.from('complete')];
  const steps: unknown[] = [null, 0, 1, 2, 7, -3, 2.5, 9.75, 2 ** 40, '3', 'two', '', Buffer.from([1]), Buffer.alloc(0)];
  const random = draws(7);
  const insert = db.prepare('INSERT INTO t VALUES (?, ?, ?)');
  for (let run = 0; run < 400; run++) {
    // a few runs of numbers only, so that a number is the maximum often
    const only = run % 3 === 0 ? steps.filter((s) => typeof s === 'number' || s === null) : steps;
    for (let k = random(6); k > 0; k--) insert.run(run, states[random(states.length)], only[random(only.length)]);
  }
  const want = db
    .prepare(
      "SELECT run, SUM(state = 'complete') AS complete, SUM(state = 'interrupted') AS interrupted, MAX(step) AS step FROM t GROUP BY run",
    )
    .all() as Array<{ run: number; complete: number | null; interrupted: number | null; step: unknown }>;
  const got = new Map<number, InstanceType<typeof RowStats>>();
  for (const [run, state, step] of db.prepare('SELECT run, state, step FROM t ORDER BY rowid').raw().all() as Array<
    [number, unknown, unknown]
  >) {
    const s = got.get(run) ?? got.set(run, new RowStats()).get(run)!;
    s.add(state, step);
  }
  assert.ok(want.length > 300);
  let texts = 0;
  for (const w of want) {
    if (typeof w.step !== 'number') texts++;
    // (a SUM of NULL comparisons only is NULL: countsAndSteps reads it as 0)
    const expected = { complete: w.complete ?? 0, interrupted: w.interrupted ?? 0, lastStep: stepOf(w.step) };
    assert.deepEqual(got.get(w.run)!.finish(), expected, `run ${w.run}`);
  }
  // both kinds of maximum were met: a number, and a text or BLOB
  assert.ok(texts > 20 && texts < want.length - 20);
  db.close();
});

test('readRunsTable gives, from one scan, the run list readRuns gives and the digest of its rows, for every kind of runs table', async () => {
  const { default: Database } = await import('better-sqlite3');
  const { readRuns, readRunsTable } = await import('../../src/store/sqlite/runs.js');
  const { runListDigests } = await import('../../src/store/run-list.js');
  const { StoreError } = await import('../../src/store/errors.js');
  type Db = InstanceType<typeof Database>;
  /**
   * The digest as runs.ts defines it, made here from what SQLite says of each row: when every row is a
   * run (text id, start and metadata, text or NULL names) with a rowid JavaScript holds exactly, each
   * row's JSON line; otherwise every row quoted inside SQLite, joined by newlines in one group_concat.
   */
  const expected = (db: Db): { form: 'json' | 'sql'; digest: string } => {
    const odd = db
      .prepare(
        `SELECT count(*) FROM runs WHERE typeof(run_id) != 'text' OR typeof(started_at) != 'text' OR typeof(metadata) != 'text'
           OR typeof(conversation_id) NOT IN ('text', 'null') OR typeof(parent_run_id) NOT IN ('text', 'null')
           OR typeof(agent_name) NOT IN ('text', 'null') OR abs(rowid) > 9007199254740991`,
      )
      .pluck()
      .get() as number;
    const h = createHash('sha256');
    if (odd === 0) {
      // the head, then each block of 256 rows' lines hashed on its own
      h.update('runs/json/blocks\n');
      const rows = db
        .prepare('SELECT rowid, run_id, conversation_id, parent_run_id, agent_name, started_at FROM runs ORDER BY rowid')
        .raw()
        .all() as unknown[][];
      for (let at = 0; at < rows.length; at += 256) {
        const block = createHash('sha256');
        for (const r of rows.slice(at, at + 256)) block.update(`${JSON.stringify(r)}\n`);
        h.update(block.digest());
      }
      return { form: 'json', digest: h.digest('base64') };
    }
    const text = db
      .prepare(
        `SELECT group_concat(rowid || ',' || quote(run_id) || ',' || quote(conversation_id) || ',' || quote(parent_run_id) || ',' ||
           quote(agent_name) || ',' || quote(started_at) || ',' || typeof(metadata), char(10) ORDER BY rowid) FROM runs`,
      )
      .pluck()
      .get() as string | null;
    return { form: 'sql', digest: h.update(`runs/sql\n${text ?? ''}`).digest('base64') };
  };
  /**
   * Both answers the one scan must equal (the same StoreError for a list readRuns refuses), and the form
   * the digest took; the list's digests cut at `cut` rows (store/run-list.ts) are the scan's exactly when
   * its rows are the list (`inOrder`: JSON form, rowid order is corpus order, SQLite and JavaScript order alike), else none.
   */
  const agree = (db: Db, what: string, form: 'json' | 'sql', inOrder = false): void => {
    const count = db.prepare('SELECT count(*) FROM runs').pluck().get() as number;
    const cut = count >> 1;
    const table = readRunsTable(db, 'x.db', cut);
    const want = expected(db);
    assert.equal(want.form, form, `${what}: form`);
    assert.equal(table.digest, want.digest, `${what}: digest`);
    let list: ReturnType<typeof readRuns>;
    try {
      list = readRuns(db, 'x.db');
    } catch (e) {
      assert.ok(e instanceof StoreError, what);
      assert.throws(() => table.runs(), { message: e.message }, what);
      assert.equal(table.listDigests(cut), null, `${what}: no list, no digests`);
      return;
    }
    assert.deepEqual(table.runs(), list, `${what}: runs`);
    assert.deepEqual(table.listDigests(cut), inOrder ? runListDigests(list, cut) : null, `${what}: the list's digests`);
    // the blocks an update goes on from are kept only for a table that is the list
    assert.deepEqual(table.blocks, inOrder ? runListDigests(list, cut).blocks : null, `${what}: the blocks`);
    if (inOrder) assert.equal(table.listDigests(cut)?.all, table.digest, `${what}: the list in rowid order is the table`);
    assert.equal(table.listDigests(cut + 1), null, `${what}: taken at the cut given only`);
  };
  const fresh = (collate = ''): Db => {
    const db = new Database(':memory:');
    db.exec(
      `CREATE TABLE runs (run_id TEXT, conversation_id TEXT, parent_run_id TEXT, agent_name TEXT, metadata TEXT, started_at TEXT ${collate})`,
    );
    db.exec('CREATE INDEX idx_runs_started ON runs(started_at)');
    return db;
  };
  const insert = (db: Db, rowid: number | bigint, v: unknown[]): void => {
    db.prepare(
      'INSERT INTO runs (rowid, run_id, conversation_id, parent_run_id, agent_name, metadata, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run(rowid, ...v);
  };
  const db = fresh();
  agree(db, 'empty', 'json', true);
  // rowids out of start order, with gaps, ties on started_at, quotes, NULLs, more text than one batch of the hash (64K characters)
  for (let i = 0; i < 2000; i++)
    insert(db, 7 * ((i * 811) % 2000) + 3, [
      `run-${i}`,
      i % 4 ? `c-${i % 7}` : null,
      i % 3 ? null : `p'${i}`,
      i % 5 ? "it's" : null,
      '{}',
      `2025-01-01T00:${String((i * 37) % 60).padStart(2, '0')}`,
    ]);
  agree(db, 'shuffled starts', 'json');
  db.prepare('UPDATE runs SET agent_name = ? WHERE rowid = 3').run('other');
  agree(db, 'an agent renamed', 'json');
  // started_at whose UTF-16 and UTF-8 orders differ, text beyond ASCII and NUL in the other columns
  insert(db, 20_001, ['r-astral', 'é日本\u0000z', null, '\uD83D\uDE00', '{}', '2025-01-01T00:00\uD83D\uDE00']);
  insert(db, 20_002, ['r-private', null, null, '', '{}', '2025-01-01T00:00\uFFFF']);
  agree(db, 'astral and private-use starts', 'json');
  const ordered = fresh();
  for (let i = 0; i < 300; i++) insert(ordered, i + 1, [`run-${i}`, null, null, 'a', '{}', `2025-02-01T${String(i).padStart(5, '0')}`]);
  agree(ordered, 'rows in start order', 'json', true);
  insert(ordered, 400, ['nul\u0000inside', null, null, null, '{}', 'z\u0000']);
  agree(ordered, 'NUL in a run id and a start', 'json', true);
  const bytes = fresh();
  insert(bytes, 1, ['a', null, null, null, '{}', 't']);
  bytes
    .prepare('INSERT INTO runs (rowid, run_id, metadata, started_at) VALUES (?, CAST(? AS TEXT), ?, ?)')
    .run(2, Buffer.from([0x61, 0xff, 0xfe, 0x62]), '{}', 's');
  bytes
    .prepare('INSERT INTO runs (rowid, run_id, metadata, started_at) VALUES (?, ?, ?, CAST(? AS TEXT))')
    .run(3, 'c', '{}', Buffer.from([0x73, 0xff]));
  agree(bytes, 'a run id and a start that are not UTF-8', 'json');
  const big = fresh();
  // two rowids past 2^53 that read as the same number, tied on started_at, after rows that sort after them
  insert(big, (1n << 60n) + 1n, ['huge rowid + 1', null, null, null, '{}', 'a']);
  insert(big, 1n << 60n, ['huge rowid', null, null, null, '{}', 'a']);
  insert(big, 2, ['small', null, null, null, '{}', 'b']);
  insert(big, 3, ['small, early', null, null, null, '{}', 'a']);
  agree(big, 'rowids past 2^53', 'sql');
  const typed = fresh();
  insert(typed, 1, ['fine', null, null, null, '{}', 'b']);
  insert(typed, 2, ['meta', null, null, null, Buffer.from('blob'), 'a']);
  agree(typed, 'metadata that is not text', 'sql');
  insert(typed, 3, [7, 'c', null, null, '{}', 42]);
  agree(typed, 'a run id and a start that are numbers', 'sql');
  const nocase = fresh('COLLATE NOCASE');
  for (const [i, t] of ['b', 'A', 'a', 'B', 'c'].entries()) insert(nocase, i + 1, [`r${i}`, null, null, null, '{}', t]);
  agree(nocase, 'started_at declared COLLATE NOCASE', 'json');
  for (const d of [db, ordered, bytes, big, typed, nocase]) d.close();
});

test("the runs table's digest changes with any edit of a value it covers, and is the same for the same rows laid out anew", async () => {
  const { default: Database } = await import('better-sqlite3');
  const { readRunsTable } = await import('../../src/store/sqlite/runs.js');
  const dir = tempDir('runs-digest-');
  const db = new Database(join(dir, 'a.db'));
  try {
    db.exec(
      'CREATE TABLE runs (run_id TEXT PRIMARY KEY, conversation_id TEXT, parent_run_id TEXT, agent_name TEXT, metadata TEXT, started_at TEXT)',
    );
    const insert = db.prepare('INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)');
    for (let i = 0; i < 500; i++)
      insert.run(`run-${i}`, i % 3 ? `c-${i % 9}` : null, i % 4 ? null : `run-${i - 1}`, i % 5 ? 'agent' : null, '{}', `2025-03-01T${i}`);
    // values that differ only after a NUL (quote(), which the SQL form hashes, ends a text there)
    insert.run('nul\u0000a', 'c\u0000x', null, 'a\u0000b', '{}', 't\u0000a');
    const digest = (): string => readRunsTable(db, 'a.db').digest;
    const original = digest();
    const rand = draws(21);
    const columns = ['run_id', 'conversation_id', 'parent_run_id', 'agent_name', 'started_at'] as const;
    const rowids = db.prepare('SELECT rowid FROM runs ORDER BY rowid').pluck().all() as number[];
    let edits = 0;
    for (let round = 0; round < 60; round++) {
      const rowid = round < 5 ? rowids.at(-1)! : rowids[rand(rowids.length)]!;
      const column = columns[round % columns.length]!;
      const was = db.prepare(`SELECT ${column} FROM runs WHERE rowid = ?`).pluck().get(rowid) as string | null;
      // the last row: its text after the NUL; others: a character, a NULL for a value, a value for a NULL
      const now =
        round < 5 ? `${was}z` : was === null ? 'x' : column !== 'run_id' && column !== 'started_at' && rand(2) === 0 ? null : `${was}'`;
      db.prepare(`UPDATE runs SET ${column} = ? WHERE rowid = ?`).run(now, rowid);
      assert.notEqual(digest(), original, `${column} of row ${rowid}: ${JSON.stringify(was)} → ${JSON.stringify(now)}`);
      db.prepare(`UPDATE runs SET ${column} = ? WHERE rowid = ?`).run(was, rowid);
      assert.equal(digest(), original, `${column} of row ${rowid} put back`);
      edits++;
    }
    assert.equal(edits, 60);
    // a row taken out and put back with another rowid is another table
    db.prepare('UPDATE runs SET rowid = 100000 WHERE rowid = ?').run(rowids[7]);
    assert.notEqual(digest(), original, 'a rowid changed');
    db.prepare('UPDATE runs SET rowid = ? WHERE rowid = 100000').run(rowids[7]);
    assert.equal(digest(), original);
    // the same rows in other pages of another file
    db.exec(`VACUUM INTO '${join(dir, 'b.db')}'`);
    const copy = new Database(join(dir, 'b.db'), { readonly: true });
    assert.equal(readRunsTable(copy, 'b.db').digest, original);
    copy.close();
  } finally {
    db.close();
  }
});

test('OverlaidMap holds what a copy of its base changed the same way holds, in the same order, for every kind of change', () => {
  const rand = draws(7);
  // how many rounds had a key of base changed, taken away, and a key added: each kind must be met
  const met = { changed: 0, gone: 0, added: 0 };
  for (let round = 0; round < 200; round++) {
    const base = new Map<string, number>();
    for (let i = rand(30); i > 0; i--) base.set(`k${rand(40)}`, rand(100));
    const changes = new Map<string, number>();
    const gone = new Set<string>();
    const copy = new Map(base);
    for (let i = rand(8); i > 0; i--) {
      const k = `k${rand(50)}`;
      // (a key is changed or gone, never both: a run is either present or not)
      if (rand(3) === 0) {
        if (changes.has(k)) continue;
        gone.add(k);
        copy.delete(k);
      } else {
        if (gone.has(k)) continue;
        // an undefined value is a value
        const v = rand(4) === 0 ? (undefined as unknown as number) : rand(100);
        changes.set(k, v);
        copy.set(k, v);
      }
    }
    const o = new OverlaidMap(base, changes, gone);
    const what = `round ${round}`;
    if ([...changes.keys()].some((k) => base.has(k))) met.changed++;
    if ([...gone].some((k) => base.has(k))) met.gone++;
    if ([...changes.keys()].some((k) => !base.has(k))) met.added++;
    assert.deepEqual([...o], [...copy], what);
    assert.deepEqual([...o.keys()], [...copy.keys()], what);
    assert.deepEqual([...o.values()], [...copy.values()], what);
    const seen: Array<[string, number]> = [];
    o.forEach((v, k, m) => {
      assert.equal(m, o);
      seen.push([k, v]);
    });
    assert.deepEqual(seen, [...copy], what);
    assert.equal(o.size, copy.size, what);
    for (let i = 0; i < 55; i++) {
      const k = `k${i}`;
      assert.equal(o.has(k), copy.has(k), `${what} has ${k}`);
      assert.equal(o.get(k), copy.get(k), `${what} get ${k}`);
    }
  }
  assert.ok(met.changed > 20 && met.gone > 20 && met.added > 20, JSON.stringify(met));
});

test('the content digest hashes again only the buckets of the runs laid over the kept entries, and gives what hashing every run gives', async () => {
  const { OverlaidMap, runBuckets, totalDigest } = await import('../../src/store/content.js');
  type Entry = { count: number; maxSeq: number; digest: string; prefix: string };
  const entry = (i: number): Entry => ({ count: i % 9, maxSeq: i * 2, digest: `d-${i}`, prefix: '' });
  // keys a byte encoding could get wrong, and many in the same buckets
  const base = new Map<string, Entry>();
  for (let i = 0; i < 3000; i++) base.set(i % 500 === 0 ? `run-${i}-\uD800-\u00e9` : `run-${i}`, entry(i));
  const kept = { base, buckets: runBuckets(base) };
  const media = { count: 2, maxSeq: 0, digest: 'm', prefix: 'm' };
  assert.equal(runBuckets(base, kept), kept.buckets, 'the kept entries themselves: the kept buckets');
  const cases: Array<[string, Map<string, Entry>, Set<string>]> = [
    ['a run added', new Map([['run-new', entry(7)]]), new Set()],
    ['a run changed', new Map([['run-17', { ...entry(17), digest: 'other' }]]), new Set()],
    ['a run gone', new Map(), new Set(['run-18'])],
    [
      'one of each, and a key with a lone surrogate',
      new Map([
        ['run-new-\uDFFF', entry(1)],
        ['run-500-\uD800-\u00e9', entry(3)],
      ]),
      new Set(['run-2999']),
    ],
  ];
  for (const [what, changes, gone] of cases) {
    const overlaid = new OverlaidMap(base, changes, gone);
    const plain = new Map<string, Entry>();
    overlaid.forEach((v, k) => {
      plain.set(k, v);
    });
    const going = runBuckets(overlaid, kept);
    assert.deepEqual(going, runBuckets(plain), `${what}: the buckets`);
    assert.equal(totalDigest(overlaid, media, 'table', going), totalDigest(plain, media, 'table'), `${what}: the digest`);
    assert.notEqual(totalDigest(plain, media, 'table'), totalDigest(base, media, 'table'), `${what}: the digest moved`);
    // buckets of other entries (kept of another map) are not taken
    assert.deepEqual(
      runBuckets(overlaid, { base: new Map(base), buckets: kept.buckets }),
      runBuckets(plain),
      `${what}: kept of another map`,
    );
  }
});
