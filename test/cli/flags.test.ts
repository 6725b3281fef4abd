import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../../src/cli/errors.js';
import { indexChoice, parseB, parseCount, parseK1, parseLimit, parseScore, resolveDb, timeBounds } from '../../src/cli/flags.js';

const usage = (message: string) => (e: unknown) => e instanceof UsageError && e.message === message;

describe('cli/flags value parsers', () => {
  test('counts: integers, signs and surrounding blanks; negatives in the reference words', () => {
    assert.equal(parseCount('--max-matches', '5', 'max_matches'), 5);
    assert.equal(parseCount('--max-matches', ' 7 ', 'max_matches'), 7);
    assert.equal(parseCount('--max-matches', '+3', 'max_matches'), 3);
    assert.throws(() => parseCount('--max-matches', '-1', 'max_matches'), usage('max_matches must be non-negative, got -1.'));
    assert.throws(() => parseCount('--context', '1.5', 'context_lines'), usage('--context expects an integer, got "1.5"'));
    assert.throws(() => parseCount('--context', '', 'context_lines'), usage('--context expects an integer, got ""'));
    assert.throws(
      () => parseCount('--max-matches', '99999999999999999999', 'max_matches'),
      usage('--max-matches is out of range: 99999999999999999999'),
    );
  });

  test('bm25 k1: finite and non-negative, Python float spellings accepted, Python repr in the message', () => {
    assert.equal(parseK1('1.2'), 1.2);
    assert.equal(parseK1('0'), 0);
    assert.equal(parseK1('.5'), 0.5);
    assert.equal(parseK1('5.'), 5);
    assert.equal(parseK1('2E1'), 20);
    assert.throws(() => parseK1('-1'), usage('bm25_k1 must be a non-negative finite number, got -1.0.'));
    assert.throws(() => parseK1('inf'), usage('bm25_k1 must be a non-negative finite number, got inf.'));
    assert.throws(() => parseK1(' NaN '), usage('bm25_k1 must be a non-negative finite number, got nan.'));
    assert.throws(() => parseK1('1e400'), usage('bm25_k1 must be a non-negative finite number, got inf.'));
    assert.throws(() => parseK1('abc'), usage('--bm25-k1 expects a number, got "abc"'));
    assert.throws(() => parseK1('0x10'), usage('--bm25-k1 expects a number, got "0x10"'));
  });

  test('bm25 b: between 0 and 1 inclusive', () => {
    assert.equal(parseB('0.75'), 0.75);
    assert.equal(parseB('1'), 1);
    assert.equal(parseB('0'), 0);
    assert.throws(() => parseB('1.5'), usage('bm25_b must be between 0.0 and 1.0, got 1.5.'));
    assert.throws(() => parseB('-infinity'), usage('bm25_b must be between 0.0 and 1.0, got -inf.'));
    assert.throws(() => parseB('nan'), usage('bm25_b must be between 0.0 and 1.0, got nan.'));
  });

  test('Object.prototype names are not number spellings', () => {
    for (const raw of ['constructor', '__proto__', 'hasownproperty']) {
      assert.throws(() => parseK1(raw), usage(`--bm25-k1 expects a number, got "${raw}"`));
      assert.throws(() => parseB(raw), usage(`--bm25-b expects a number, got "${raw}"`));
      assert.throws(() => parseScore('--min-score', raw), usage(`--min-score expects a number, got "${raw}"`));
    }
  });

  test('scores: any finite number, negative included', () => {
    assert.equal(parseScore('--min-score', '-2.5'), -2.5);
    assert.equal(parseScore('--min-score', '+0.25e1'), 2.5);
    assert.throws(() => parseScore('--min-score', 'inf'), usage('--min-score expects a finite number, got "inf"'));
    assert.throws(() => parseScore('--min-score', 'nan'), usage('--min-score expects a finite number, got "nan"'));
  });

  test('limits: unsigned integers only', () => {
    assert.equal(parseLimit('--limit', '10'), 10);
    assert.equal(parseLimit('--limit', '0'), 0);
    for (const raw of ['-1', '+1', '', '1.0', 'ten']) {
      assert.throws(() => parseLimit('--limit', raw), usage(`--limit expects a non-negative integer, got ${JSON.stringify(raw)}`));
    }
    assert.throws(() => parseLimit('--limit', '9007199254740992'), usage('--limit is out of range: 9007199254740992'));
  });

  test('time bounds: absent is null, a bare --until date covers its day, an empty range is refused', () => {
    const now = 1_800_000_000_000_000;
    assert.deepEqual(timeBounds({}, now), { since: null, until: null });
    assert.deepEqual(timeBounds({ since: '2025-03-01', until: '2025-03-01' }, now), {
      since: 1740787200000000,
      until: 1740873599999999,
    });
    assert.deepEqual(timeBounds({ since: '1h' }, now), { since: now - 3_600_000_000, until: null });
    assert.throws(
      () => timeBounds({ since: '2025-03-02', until: '2025-03-01' }, now),
      usage('--since 2025-03-02 is after --until 2025-03-01: nothing can match'),
    );
    assert.throws(
      () => timeBounds({ until: 'tomorrow' }, now),
      usage('--until expects an ISO 8601 date or time (2025-03-01, 2025-03-01T09:30Z) or a duration (90m, 7d), got "tomorrow"'),
    );
  });

  test('--db: every flag use, else a non-empty $CONVSEARCH_DB', () => {
    const flags = ['a.db', 'postgresql://h/db'];
    const got = resolveDb(flags, { CONVSEARCH_DB: 'env.db' }, '/nonexistent').targets;
    assert.deepEqual(got, flags);
    assert.notEqual(got, flags);
    assert.deepEqual(resolveDb(undefined, { CONVSEARCH_DB: 'env.db' }, '/nonexistent').targets, ['env.db']);
    assert.deepEqual(resolveDb([], { CONVSEARCH_DB: 'env.db' }, '/nonexistent').targets, ['env.db']);
  });

  test('--index and --no-index choose the sidecar', () => {
    assert.equal(indexChoice({ index: false, verify: true }, {}), false);
    assert.deepEqual(indexChoice({}, {}), { path: undefined, verify: false, fresh: false });
    assert.deepEqual(indexChoice({ index: '/tmp/i.db', verify: true }, {}), { path: '/tmp/i.db', verify: true, fresh: false });
    assert.deepEqual(indexChoice({ fresh: true }, {}), { path: undefined, verify: false, fresh: true });
    assert.equal(indexChoice({ index: false, fresh: true }, {}), false);
  });

  test('$CONVSEARCH_INDEX names the index when --index does not; --index and --no-index win', () => {
    const env = { CONVSEARCH_INDEX: 'postgres://indexer@db/x' };
    assert.deepEqual(indexChoice({}, env), { path: 'postgres://indexer@db/x', verify: false, fresh: false });
    assert.deepEqual(indexChoice({ index: '/tmp/i.db' }, env), { path: '/tmp/i.db', verify: false, fresh: false });
    assert.equal(indexChoice({ index: false }, env), false);
    assert.deepEqual(indexChoice({}, { CONVSEARCH_INDEX: '' }), { path: undefined, verify: false, fresh: false });
  });
});
