/**
 * What a store reader skips or reads leniently where the reference is silent (a second record of a run
 * id, a run id that names no directory, a snapshot file that is not UTF-8) reaches the user: counted
 * warnings on stderr, `store-notice` and `unreadable-snapshot` entries in the JSON, the reader's own reason.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSession } from '../../src/api/session.js';
import { cli } from '../helpers/cli.js';
import { snapshotText, writeRun, writeSnapshot } from '../helpers/file-store.js';
import { tempDir } from '../helpers/stores.js';

function noticedTree(): string {
  const root = tempDir();
  writeRun(root, 'a', { conversationId: 'c' });
  writeSnapshot(root, 'a', '0.json', snapshotText('a', 0, 'needle in a'));
  writeFileSync(join(root, 'a', 'snapshots', '1.json'), Buffer.from([0x7b, 0xff, 0x7d]));
  writeRun(root, 'a-copy', { runId: 'a', startedAt: '2024-01-01T00:00:00+00:00' });
  writeRun(root, 'odd', { runId: 'we/ird' });
  return root;
}

type Doc = { warnings: Array<{ kind: string; notice?: string; run_id: string | null; reason?: string }> };

describe('store notices', () => {
  test('the library hands them back as warnings of every call', () => {
    const session = openSession(noticedTree(), { index: false });
    try {
      const kinds = (ws: ReadonlyArray<{ kind: string; notice?: string }>): string[] =>
        ws.map((w) => (w.kind === 'store-notice' ? `${w.kind}:${w.notice}` : w.kind));
      const expected = ['store-notice:duplicate-run', 'store-notice:unreachable-run'];
      assert.deepEqual(
        kinds(session.listRuns().warnings).filter((k) => k.startsWith('store-notice')),
        expected,
      );
      assert.deepEqual(
        kinds(session.listConversations().warnings).filter((k) => k.startsWith('store-notice')),
        expected,
      );
      const outcome = session.search({ query: 'needle', scope: 'all' });
      assert.deepEqual(kinds(outcome.warnings), ['unreadable-snapshot', ...expected]);
      const unreadable = outcome.warnings.find((w) => w.kind === 'unreadable-snapshot');
      // the reader's reason, not a parser's complaint about a missing text
      assert.equal(unreadable?.kind === 'unreadable-snapshot' && unreadable.reason, 'snapshot payload is not valid UTF-8');
    } finally {
      session.close();
    }
  });

  for (const index of [[], ['--no-index']]) {
    test(`the command line prints one counted line per kind and lists each in JSON ${index.join(' ')}`, async () => {
      const db = noticedTree();
      const human = await cli(['search', 'needle', '--db', db, '--scope', 'all', ...index]);
      assert.equal(human.status, 0, human.stderr);
      assert.match(human.stderr, /warning: 1 run record\(s\) repeating a run id already seen, ignored \(.*a.*; use --json for details\)/);
      assert.match(human.stderr, /warning: 1 run\(s\) whose snapshots cannot be located, skipped \(.*we\/ird.*\)/);
      assert.match(human.stderr, /warning: skipped 1 unreadable snapshot in run a \(seq 1;/);
      for (const args of [
        ['search', 'needle', '--scope', 'all', '--json'],
        ['runs', '--json'],
        ['show', 'a', '--json'],
      ]) {
        // show replays its run whatever the index (it takes no index flags)
        const r = await cli([...args, '--db', db, ...(args[0] === 'show' ? [] : index)]);
        assert.equal(r.status, 0, r.stderr);
        const doc = JSON.parse(r.stdout) as Doc;
        assert.deepEqual(
          doc.warnings.filter((w) => w.kind === 'store-notice').map((w) => [w.notice, w.run_id]),
          [
            ['duplicate-run', 'a'],
            ['unreachable-run', 'we/ird'],
          ],
          args.join(' '),
        );
      }
    });
  }
});
