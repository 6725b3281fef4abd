/**
 * `--query-file` (issue 12 §5): the query words from a file or standard input, so that words with
 * leading dashes or another program's output need no quoting; the same answer as the words typed.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/ux-store.js';

const DEMO = join(ROOT, 'examples', 'sessions.db');
const scope = ['--db', DEMO, '--scope', 'all'];

describe('--query-file', () => {
  test('a file: the same answer as the words typed, on both paths; whitespace of any kind separates words', async () => {
    const file = join(tempDir(), 'query.txt');
    writeFileSync(file, 'refund\n\tidempotency   key\n');
    for (const extra of [[], ['--no-index']]) {
      const typed = await cli(['search', 'refund', 'idempotency', 'key', ...scope, '--json', ...extra]);
      const read = await cli(['search', '--query-file', file, ...scope, '--json', ...extra]);
      assert.equal(read.status, 0, read.stderr);
      assert.equal(read.stdout, typed.stdout);
      assert.equal(JSON.parse(read.stdout).query, 'refund idempotency key');
    }
  });

  test('standard input, with words that look like flags', async () => {
    const piped = await cli(['search', '--query-file', '-', ...scope, '--plain'], { input: '--limit -m\nrefund\n' });
    const typed = await cli(['search', ...scope, '--plain', '--', '--limit', '-m', 'refund']);
    assert.equal(piped.status, 0, piped.stderr);
    assert.equal(piped.stdout, typed.stdout);
    assert.ok(piped.stdout.length > 0);
    const json = await cli(['search', '--query-file', '-', ...scope, '--json'], { input: '--limit -m refund' });
    assert.equal(JSON.parse(json.stdout).query, '--limit -m refund');
    // with --phrase, the file still gives the query
    const phrase = await cli(['search', '--query-file', '-', '--phrase', 'idempotency key', ...scope, '--count'], {
      input: 'idempotency key',
    });
    assert.equal(phrase.stdout, (await cli(['search', 'idempotency', 'key', '--phrase', 'idempotency key', ...scope, '--count'])).stdout);
  });

  test('errors: words and a file, a file that cannot be read, no words', async () => {
    const cases: Array<[string[], string | undefined, RegExp]> = [
      [['refund', '--query-file', '-'], 'x', /pass the query words as arguments or in --query-file, not both/],
      [['--query-file', '/nonexistent/q.txt'], undefined, /cannot read --query-file \/nonexistent\/q\.txt: ENOENT/],
      [['--query-file', '-'], ' \n\t', /--query-file - \(standard input\) holds no query words/],
      [[], undefined, /search needs query words \(or --query-file, or --phrase\)/],
    ];
    for (const [args, input, message] of cases) {
      const r = await cli(['search', ...args, ...scope], { input });
      assert.equal(r.status, 2, args.join(' '));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, new RegExp(`^convsearch: error: ${message.source}.*\\n$`));
    }
  });
});
