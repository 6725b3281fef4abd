/**
 * `--explain` (issue 12 §1): each hit's score taken apart by query term. The parts add up to the score,
 * and every figure is checked against what other commands say: N is the messages searched, df the
 * count of a one-word search, tf and dl the hit text's tokens. Both paths print the same bytes.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { cli, ROOT } from '../helpers/cli.js';
import { checkShape, EXPLAIN, SEARCH_DOC } from '../helpers/shapes.js';
import { tokenize } from '../../src/text/tokenize.js';

const DEMO = join(ROOT, 'examples', 'sessions.db');

interface TermDoc {
  term: string;
  tf: number;
  df: number;
  idf: number;
  contribution: number;
}
interface ExplainDoc {
  score: number;
  n: number;
  dl: number;
  avgdl: number;
  k1: number;
  b: number;
  terms: TermDoc[];
}
interface Doc {
  total_messages: number;
  hits: Array<{ score: number; text: string; explain: ExplainDoc | null }>;
}

async function both(args: string[]): Promise<string> {
  const a = await cli(args);
  const b = await cli([...args, '--no-index']);
  const c = await cli([...args, '--no-index'], { env: { CONVSEARCH_THREADS: '2' } });
  assert.equal(b.stdout, a.stdout, args.join(' '));
  assert.equal(c.stdout, a.stdout, `threads: ${args.join(' ')}`);
  return a.stdout;
}

const CASES: string[][] = [
  ['refund', 'idempotency', 'key', '--scope', 'all'],
  ['billing', 'api', 'memory', 'oom', '--conversation', 'conv-ops-billing-api'],
  ['cache', 'policy', 'node', 'nothere', '--scope', 'all', '--bm25-k1', '0.9', '--bm25-b', '0.3'],
  ['refund', 'webhook', '--run', 'run-pay-2'],
];

describe('--explain', () => {
  for (const c of CASES) {
    test(`the parts add up to the score: ${c.join(' ')}`, async () => {
      const doc = JSON.parse(await both(['search', ...c, '--db', DEMO, '-m', '50', '-C', '0', '--explain', '--json'])) as Doc;
      checkShape(doc, SEARCH_DOC);
      assert.ok(doc.hits.length > 1);
      const words = c.slice(
        0,
        c.findIndex((w) => w.startsWith('--')),
      );
      for (const h of doc.hits) {
        const e = h.explain!;
        checkShape(e, EXPLAIN);
        const sum = e.terms.reduce((acc, t) => acc + t.contribution, 0);
        assert.ok(Math.abs(sum - h.score) < 1e-9, `${sum} vs ${h.score}`);
        assert.equal(e.score, h.score, 'summed in query order: the very score');
        assert.equal(e.n, doc.total_messages);
        const tokens = tokenize(h.text);
        assert.equal(e.dl, tokens.length);
        assert.deepEqual(
          e.terms.map((t) => t.term),
          words,
        );
        for (const t of e.terms) {
          assert.equal(t.tf, tokens.filter((x) => x === t.term).length, t.term);
          assert.ok(Math.abs(t.idf - Math.log((e.n - t.df + 0.5) / (t.df + 0.5) + 1)) < 1e-12);
          const expected = t.tf === 0 ? 0 : (t.idf * t.tf * (e.k1 + 1)) / (t.tf + e.k1 * (1 - e.b + (e.b * e.dl) / e.avgdl));
          assert.equal(t.contribution, expected);
        }
      }
      // df: how many messages of the scope hold the term, which is what a one-word search counts
      const scope = c.slice(c.findIndex((w) => w.startsWith('--')));
      for (const t of doc.hits[0]!.explain!.terms) {
        const count = await cli(['search', t.term, ...scope, '--db', DEMO, '--count']);
        assert.equal(Number(count.stdout), t.df, t.term);
      }
    });
  }

  test('human output: a block under each header; --format tool and --plain ignore it', async () => {
    const base = ['search', 'refund', 'idempotency', '--db', DEMO, '--scope', 'all', '-m', '2', '-C', '0'];
    const out = await both([...base, '--explain', '--color', 'never']);
    assert.match(
      out,
      /^#1 · score [\d.]+ · .*\n {4}explain: N \d+ · dl \d+ · avgdl [\d.]+ · k1 1\.5 · b 0\.75\n {6}refund +tf \d+ +df \d+ +idf [\d.]+ +\+ [\d.]+\n {6}idempotency +tf \d+ +df \d+ +idf [\d.]+ +\+ [\d.]+\n {6}= [\d.]+\n> \[/,
    );
    assert.equal(out.match(/explain:/g)!.length, 2);
    assert.equal(await both([...base, '--explain', '--format', 'tool']), await both([...base, '--format', 'tool']));
    assert.equal(await both([...base, '--explain', '--plain']), await both([...base, '--plain']));
    const plain = JSON.parse(await both([...base, '--json'])) as Doc & { explain: boolean };
    assert.ok(plain.hits.every((h) => h.explain === null));
    assert.equal(plain.explain, false);
  });
});
