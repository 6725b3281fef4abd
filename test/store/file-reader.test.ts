/**
 * The FileStepStore reader on hand-made trees: what upstream skips (and we count), a live writer's
 * files (atomic renames, prunes), read-only proof (bytes and times unchanged; a read-only tree read by
 * an unprivileged user gives the same answers).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StoreError } from '../../src/store/errors.js';
import { FileStoreReader } from '../../src/store/file/reader.js';
import { openStoreReader } from '../../src/store/open-reader.js';
import type { StoreSnapshot } from '../../src/store/reader.js';
import { FIXTURES, treeState } from '../helpers/servers.js';
import { tempDir } from '../helpers/stores.js';
import { snapshotText, writeRun, writeSnapshot } from '../helpers/file-store.js';

const seqs = (it: Iterable<StoreSnapshot>): number[] => [...it].map((s) => s.seq);

describe('FileStepStore reader', () => {
  it('orders snapshot files by Python int() of the stem; ignores temp and foreign names; counts a repeated seq', () => {
    const root = tempDir();
    writeRun(root, 'r1');
    for (const name of ['10.json', '2.json', ' 3.json', '0_4.json', 'x.json', '.json', '5.json.abc.tmp', '6.JSON', 'notes.txt']) {
      writeFileSync(join(root, 'r1', 'snapshots', name), snapshotText('r1', 1, name));
    }
    writeFileSync(join(root, 'r1', 'snapshots', '02.json'), snapshotText('r1', 1, 'dup'));
    const r = new FileStoreReader(root);
    assert.deepEqual(seqs(r.completeSnapshots('r1')), [2, 3, 4, 10]);
    assert.deepEqual(
      r.notices().map((n) => [n.kind, n.seq]),
      [['foreign-snapshot-entry', 2]],
    );
    // the first name in code point order wins: "02.json" < "2.json"
    assert.match([...r.completeSnapshots('r1')][0]!.messages as string, /dup/);
    r.close();
  });

  it('puts what cannot be read with the complete snapshots, as unreadable with a reason; state rules per upstream', () => {
    const root = tempDir();
    writeRun(root, 'r1');
    writeSnapshot(root, 'r1', '0.json', snapshotText('r1', 0, 'ok'));
    writeSnapshot(root, 'r1', '1.json', snapshotText('r1', 1, 'paused', 'paused'));
    writeSnapshot(root, 'r1', '2.json', snapshotText('r1', 2, 'stopped', 'interrupted'));
    writeSnapshot(root, 'r1', '3.json', snapshotText('r1', 3, 'old', null));
    writeFileSync(join(root, 'r1', 'snapshots', '4.json'), Buffer.from([0x7b, 0xff, 0x7d]));
    writeSnapshot(root, 'r1', '5.json', '{"run_id": "r1", "step_index": 5');
    writeSnapshot(root, 'r1', '6.json', snapshotText('r1', 6, 'bad step').replace('"step_index": 6', '"step_index": 6.0'));
    mkdirSync(join(root, 'r1', 'snapshots', '7.json'));
    const r = new FileStoreReader(root);
    const complete = [...r.completeSnapshots('r1')];
    assert.deepEqual(
      complete.map((s) => [s.seq, typeof s.messages === 'string' ? 'ok' : (s as unknown as { problem: string }).problem.split(' (')[0]]),
      [
        [0, 'ok'],
        [1, 'unknown snapshot state "paused"'],
        [3, 'ok'],
        [4, 'snapshot payload is not valid UTF-8'],
        [5, 'snapshot payload is not a JSON object'],
        [6, 'snapshot step_index is not an integer'],
        [7, 'cannot read snapshot file'],
      ],
    );
    assert.deepEqual(seqs(r.interruptedSnapshots('r1')), [2]);
    assert.deepEqual(r.countsByRun().get('r1'), { complete: 7, interrupted: 1 });
    assert.deepEqual(r.watermarks().get('r1'), { count: 8, maxSeq: 7 });
    assert.deepEqual(r.completeUpToSeq('r1', 3), { count: 3, maxSeq: 3 });
    r.close();
  });

  it('reads counts and steps from file heads, equal to full reads, for large snapshots', () => {
    const root = tempDir();
    writeRun(root, 'big');
    for (let i = 0; i < 4; i++)
      writeSnapshot(root, 'big', `${i}.json`, snapshotText('big', 10 + i, `m${i}`, i === 2 ? 'interrupted' : 'complete', 20_000));
    const heads = new FileStoreReader(root);
    assert.deepEqual(heads.countsByRun().get('big'), { complete: 3, interrupted: 1 });
    assert.deepEqual(heads.lastSteps().get('big'), 13);
    assert.deepEqual(heads.completeUpToSeq('big', 2), { count: 2, maxSeq: 1 });
    const full = new FileStoreReader(root);
    assert.deepEqual(
      [...full.completeSnapshots('big')].map((s) => s.stepIndex),
      [10, 11, 13],
    );
    assert.deepEqual(full.countsByRun(), heads.countsByRun());
  });

  it('one record per run id (the directory named after it wins), unreachable ids noticed, bad records fail the listing', () => {
    const root = tempDir();
    writeRun(root, 'a');
    writeRun(root, 'a-copy', { runId: 'a', startedAt: '2024-01-01T00:00:00+00:00' });
    writeRun(root, 'odd', { runId: 'we/ird' });
    mkdirSync(join(root, 'media'));
    writeFileSync(join(root, 'stray.txt'), 'not a run');
    const r = new FileStoreReader(root);
    assert.deepEqual(
      r.runs().map((x) => [x.runId, x.startedAt]),
      [
        ['a', '2025-01-01T00:00:00+00:00'],
        ['we/ird', '2025-01-01T00:00:00+00:00'],
      ],
    );
    assert.deepEqual([...r.completeSnapshots('we/ird')], []);
    assert.deepEqual(
      r.notices().map((n) => [n.kind, n.runId]),
      [
        ['duplicate-run', 'a'],
        ['unreachable-run', 'we/ird'],
      ],
    );
    writeRun(root, 'bad', { runId: 7 });
    assert.throws(
      () => new FileStoreReader(root).runs(),
      (e: unknown) => e instanceof StoreError && /bad\/run\.json.*run_id/.test(e.message),
    );
    assert.throws(() => new FileStoreReader(join(root, 'stray.txt')), StoreError);
    assert.throws(() => new FileStoreReader(join(root, 'nope')), StoreError);
  });

  it('a directory whose name is not UTF-8 is read by its bytes, as os.listdir would (not passed over)', () => {
    const root = tempDir();
    writeRun(root, 'a');
    // a record whose id is fine, in a directory named with a byte that is not UTF-8
    writeRun(root, 'tmp');
    const odd = Buffer.concat([Buffer.from(`${root}/run-`), Buffer.from([0xff])]);
    renameSync(join(root, 'tmp'), odd);
    writeFileSync(
      Buffer.concat([odd, Buffer.from('/run.json')]),
      readFileSync(join(root, 'a', 'run.json'))
        .toString()
        .replace('"a"', '"b"'),
    );
    assert.deepEqual(
      new FileStoreReader(root).runs().map((x) => x.runId),
      ['a', 'b'],
    );
    // its record not UTF-8: a bad record, which fails the listing as upstream's does, named by its bytes
    writeFileSync(Buffer.concat([odd, Buffer.from('/run.json')]), Buffer.from([0x7b, 0xff, 0x7d]));
    assert.throws(
      () => new FileStoreReader(root).runs(),
      (e: unknown) => e instanceof StoreError && e.message.includes("b'run-\\xff'/run.json: run record is not valid UTF-8"),
    );
  });

  it('under a live writer: a file pruned after the listing is skipped and counted, a new one unseen, a replaced one flags unchanged()', () => {
    const root = tempDir();
    writeRun(root, 'r');
    for (let i = 0; i < 3; i++) writeSnapshot(root, 'r', `${i}.json`, snapshotText('r', i, `s${i}`));
    const r = new FileStoreReader(root);
    const before = r.stamp();
    rmSync(join(root, 'r', 'snapshots', '0.json'));
    writeSnapshot(root, 'r', '3.json', snapshotText('r', 3, 's3'));
    assert.deepEqual(seqs(r.completeSnapshots('r')), [1, 2]);
    assert.deepEqual(
      r.notices().map((n) => [n.kind, n.seq]),
      [['vanished-snapshot', 0]],
    );
    assert.equal(r.unchanged(), true);
    assert.equal(r.stamp(), before, 'the view is the listing');
    writeSnapshot(root, 'r', '2.json', snapshotText('r', 2, 'rewritten'));
    assert.deepEqual(seqs(r.completeSnapshots('r')), [1, 2]);
    assert.equal(r.unchanged(), false);
    const fresh = new FileStoreReader(root);
    assert.notEqual(fresh.stamp(), before);
    assert.deepEqual(seqs(fresh.completeSnapshots('r')), [1, 2, 3]);
  });

  it('the stamp changes with every change a search could see', () => {
    const root = tempDir();
    writeRun(root, 'r');
    writeSnapshot(root, 'r', '0.json', snapshotText('r', 0, 'a'));
    const fp = (): string => new FileStoreReader(root).stamp();
    const seen = new Set([fp()]);
    const changes: Array<() => void> = [
      () => writeSnapshot(root, 'r', '1.json', snapshotText('r', 1, 'b')),
      () => writeSnapshot(root, 'r', '1.json', snapshotText('r', 1, 'c')),
      () => writeRun(root, 'r', { conversationId: 'c' }),
      () => writeRun(root, 'q'),
      () => mkdirSync(join(root, 'media')),
      () => writeFileSync(join(root, 'media', `${'a'.repeat(64)}.bin`), 'x'),
      () => rmSync(join(root, 'r', 'snapshots', '0.json')),
    ];
    for (const change of changes) {
      change();
      const f = fp();
      assert.ok(!seen.has(f), `stamp changed after ${change.toString()}`);
      seen.add(f);
    }
  });

  it('leaves the tree as it was (bytes, modes, times), and a read-only tree read by an unprivileged user answers the same', () => {
    const root = tempDir();
    chmodSync(root, 0o755);
    const store = join(root, 'media');
    cpSync(join(FIXTURES, 'file', 'media'), store, { recursive: true });
    // times in the past, so that any write would show
    const walk = (p: string): void => {
      utimesSync(p, 1_600_000_000, 1_600_000_000);
    };
    walk(store);
    const before = treeState(store);
    const summary = (r: ReturnType<typeof openStoreReader>): string =>
      JSON.stringify({
        runs: r.runs(),
        snaps: r.runs().map((run) => [[...r.completeSnapshots(run.runId)], [...r.interruptedSnapshots(run.runId)]]),
        counts: [...r.countsByRun()],
        steps: [...r.lastSteps()],
        marks: [...r.watermarks()],
        fp: r.stamp(),
        media: [
          '8e12ad50fbe27f192fb4d1f0f0aadd071e8c4571787d7bc41db87d0cde5b4b73',
          'a999af7472065bb4b7d107d1566180b6d8add48a742ca85063991f43e44c28f3',
        ].map((s) => r.media(s)?.length),
      });
    const r = openStoreReader(store);
    summary(r);
    r.close();
    assert.equal(treeState(store), before);
    // (chmod changes ctimes, which the stamp covers: read again after it)
    spawnSync('chmod', ['-R', 'a-w', store]);
    const readOnly = treeState(store);
    const again = openStoreReader(store);
    const mine = summary(again);
    again.close();
    const script = join(root, 'read.mjs');
    const reader = new URL('../../src/store/open-reader.js', import.meta.url).href;
    writeFileSync(
      script,
      `import { openStoreReader } from ${JSON.stringify(reader)};\nconst r = openStoreReader(process.argv[2]);\n` +
        `const summary = ${summary.toString()};\nprocess.stdout.write(summary(r));\n`,
    );
    chmodSync(script, 0o644);
    const asNobody = process.getuid?.() === 0 ? ['runuser', '-u', 'nobody', '--', process.execPath] : [process.execPath];
    const child = spawnSync(asNobody[0]!, [...asNobody.slice(1), script, store], {
      encoding: 'utf8',
      cwd: fileURLToPath(new URL('.', import.meta.url)),
    });
    assert.equal(child.status, 0, child.stderr);
    assert.ok(child.stdout === mine, 'the unprivileged read answers the same');
    assert.equal(treeState(store), readOnly);
    spawnSync('chmod', ['-R', 'u+w', store]);
  });
});
