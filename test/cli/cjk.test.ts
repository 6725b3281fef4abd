import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cli } from '../helpers/cli.js';
import { buildCjkStore } from '../helpers/cjk-store.js';
import { openSqliteReader } from '../../src/store/sqlite/reader.js';
import { searchOptions, searchStores } from '../../src/api/search.js';
import { RequestError } from '../../src/api/errors.js';
import { queryTokensWith, tokenizerNamed, type TokenizerName } from '../../src/text/tokenizer.js';
import { HistorySource } from '../../src/history/source.js';
import { DigestCorpusSource } from '../../src/search/digest-source.js';
import { search as searchCorpus } from '../../src/search/search.js';
import { searchJson } from '../../src/output/json.js';

const db = buildCjkStore();
const search = (...args: string[]) => cli(['search', ...args, '--db', db, '--scope', 'all', '-C', '0']);
const plainHits = (stdout: string): string[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(':').slice(0, 2).join(':'));

test('--tokenizer cjk finds Chinese, Japanese (half-width too) and Korean words the default tokenizer cannot', async () => {
  const cases: Array<[string, string[]]> = [
    ['连接池', ['run-zh:1', 'run-zh:0']],
    ['ﾃﾞｰﾀﾍﾞｰｽ', ['run-ja:3', 'run-ja:2', 'run-ja:1']],
    ['데이터베이스', ['run-ko:0', 'run-ko:1']],
    ['환불', ['run-ko:2', 'run-ko:3']],
  ];
  for (const [q, want] of cases) {
    const r = await search(q, '--tokenizer', 'cjk', '--plain');
    assert.equal(r.status, 0, `${q}: ${r.stderr}`);
    assert.deepEqual(plainHits(r.stdout), want, q);
    const d = await search(q, '--plain');
    assert.ok(plainHits(d.stdout).length < want.length, `default tokenizer on ${q}: ${d.stdout}`);
  }
});

test('term frequency counts: the message repeating a word ranks first', async () => {
  const r = await search('データベース', '--tokenizer', 'cjk', '--json');
  const hits = JSON.parse(r.stdout).hits as Array<{ run_id: string; message_index: number }>;
  assert.deepEqual([hits[0]!.run_id, hits[0]!.message_index], ['run-ja', 3]);
});

test('with the index and with --no-index the output is the same, every format', async () => {
  for (const q of ['데이터베이스', '连接池 超时', 'ﾃﾞｰﾀﾍﾞｰｽ', '환불 처리']) {
    for (const format of [['--json'], ['--plain'], ['--color', 'always'], ['--ndjson']]) {
      const a = await search(q, '--tokenizer', 'cjk', ...format);
      const b = await search(q, '--tokenizer', 'cjk', ...format, '--no-index');
      assert.equal(a.status, 0, a.stderr);
      assert.equal(a.stdout, b.stdout, `${q} ${format.join(' ')}`);
      assert.equal(a.stderr, b.stderr);
    }
  }
});

test('JSON says which tokenizer ranked and whether that is parity; human output says off-parity once', async () => {
  const j = JSON.parse((await search('환불', '--tokenizer', 'cjk', '--json')).stdout);
  assert.equal(j.tokenizer, 'cjk');
  assert.equal(j.parity, false);
  const d = JSON.parse((await search('refund', '--json')).stdout);
  assert.equal(d.tokenizer, 'default');
  assert.equal(d.parity, true);
  const h = await search('환불', '--tokenizer', 'cjk');
  assert.equal(h.stderr.match(/off-parity/g)?.length, 1, h.stderr);
  assert.doesNotMatch((await search('환불')).stderr, /off-parity/);
});

test('highlighting marks what was counted, in the text as stored (half-width Katakana, Hangul inside a word)', async () => {
  const r = await search('データベース', '--tokenizer', 'cjk', '--color', 'always');
  assert.match(r.stdout, /\x1b\[31mﾃﾞｰﾀﾍﾞｰｽ\x1b\[39m/);
  const k = await search('데이터베이스', '--tokenizer', 'cjk', '--color', 'always');
  // the bigrams of the query cover the word's first six characters, painted as one span
  assert.match(k.stdout, /\x1b\[31m데이터베이스\x1b\[39m\x1b\[22m를/);
});

test('--phrase is tokenized like the query', async () => {
  const r = await search('환불', '--tokenizer', 'cjk', '--phrase', '영업일 기준', '--plain');
  assert.deepEqual(plainHits(r.stdout), ['run-ko:3']);
});

test('--format tool (the reference answer) refuses --tokenizer cjk; an unknown tokenizer is a usage error', async () => {
  const t = await search('환불', '--tokenizer', 'cjk', '--format', 'tool');
  assert.equal(t.status, 2);
  assert.match(t.stderr, /--format tool .*--tokenizer cjk/);
  const u = await search('환불', '--tokenizer', 'thai');
  assert.equal(u.status, 2);
  assert.match(u.stderr, /tokenizer/);
});

test('the library: SearchRequest.tokenizer ranks with the CJK tokenizer', () => {
  const store = openSqliteReader(db);
  try {
    const options = searchOptions({ query: '데이터베이스', scope: 'all', contextLines: 0, tokenizer: 'cjk' });
    const out = searchStores([{ label: db, store }], options, false);
    assert.equal(out.kind, 'found');
    assert.deepEqual(out.kind === 'found' ? out.hits.map((h) => `${h.run.runId}:${h.position}`) : [], ['run-ko:0', 'run-ko:1']);
  } finally {
    store.close();
  }
});

test('the library refuses a tokenizer it does not have', () => {
  assert.throws(() => searchOptions({ query: 'x', scope: 'all', tokenizer: 'thai' as TokenizerName }), RequestError);
});

test('worker threads digest with the CJK tokenizer: the same outcome as one thread', () => {
  const store = openSqliteReader(db);
  try {
    for (const query of ['데이터베이스', 'ﾃﾞｰﾀﾍﾞｰｽ', '连接池', '환불']) {
      const o = searchOptions({
        query,
        scope: 'all',
        contextLines: 0,
        tokenizer: 'cjk',
        filter: { phrases: [queryTokensWith(tokenizerNamed('cjk'), query)] },
      });
      const run = (threads: number) => {
        const source = new DigestCorpusSource(new HistorySource(store), queryTokensWith(tokenizerNamed('cjk'), query), {
          threads,
          minSnapshots: 0,
        });
        return JSON.stringify(searchJson(searchCorpus(source, o)));
      };
      const one = run(1);
      assert.match(one, /"hits":\[\{/, query);
      assert.equal(run(3), one, query);
    }
  } finally {
    store.close();
  }
});
