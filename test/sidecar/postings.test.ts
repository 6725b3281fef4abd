import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { decodePostings, encodeGroups, liveGroups, SegmentBuilder } from '../../src/sidecar/postings.js';

type Entry = [runKey: number, pos: number, tf: number];

/** Random runs of documents: run keys ascending with gaps, positions ascending from 0, tfs mostly 1, some large. */
function randomSegment(seed: number): { builder: SegmentBuilder; want: Map<string, Entry[]> } {
  const random = rng(seed);
  const builder = new SegmentBuilder();
  const want = new Map<string, Entry[]>();
  const terms = Array.from({ length: 12 }, (_, k) => `t${k}`);
  let runKey = 0;
  for (let r = 0; r < 20; r++) {
    runKey += 1 + Math.floor(random() * 300);
    builder.beginRun(runKey);
    let pos = -1;
    for (let d = 0; d < 1 + Math.floor(random() * 30); d++) {
      pos += 1 + Math.floor(random() * (random() < 0.1 ? 5000 : 3));
      const tf = new Map<string, number>();
      for (const t of terms) if (random() < 0.3) tf.set(t, random() < 0.7 ? 1 : 2 + Math.floor(random() * (random() < 0.2 ? 300 : 5)));
      const words = [...tf].flatMap(([t, f]) => Array<string>(f).fill(t));
      const length = builder.addDocument(pos, [`${words.join(' ')} .`]);
      assert.equal(length, words.length);
      for (const [t, f] of tf) (want.get(t) ?? want.set(t, []).get(t)!).push([runKey, pos, f]);
    }
  }
  return { builder, want };
}

function decoded(data: Uint8Array, wantRun?: (runKey: number) => boolean): Entry[] {
  const out: Entry[] = [];
  decodePostings(data, (runKey, pos, tf) => out.push([runKey, pos, tf]), wantRun);
  return out;
}

describe('postings encoding', () => {
  test('what a segment writes decodes to every (run, position, tf) it was given, in order', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const { builder, want } = randomSegment(seed);
      const got = new Map([...builder.postings()].map(([t, data]) => [t, decoded(data)]));
      assert.deepEqual(got, want, `seed ${seed}`);
    }
  });

  test('position 0, tf 1 and huge values round-trip; groups of skipped runs are passed over', () => {
    const b = new SegmentBuilder();
    b.beginRun(0);
    b.addDocument(0, ['a']);
    b.beginRun(2 ** 40);
    b.addDocument(0, ['A a, A!']);
    b.addDocument(2 ** 30, ['b a']);
    b.beginRun(7);
    b.addDocument(3, ['a']);
    const data = new Map(b.postings()).get('a')!;
    assert.deepEqual(decoded(data), [
      [0, 0, 1],
      [2 ** 40, 0, 3],
      [2 ** 40, 2 ** 30, 1],
      [7, 3, 1],
    ]);
    assert.deepEqual(
      decoded(data, (k) => k !== 2 ** 40),
      [
        [0, 0, 1],
        [7, 3, 1],
      ],
    );
    assert.deepEqual(decoded(new Map(b.postings()).get('b')!), [[2 ** 40, 2 ** 30, 1]]);
  });

  test('a segment of more postings than one storage chunk holds (65,536) decodes in full', () => {
    const b = new SegmentBuilder();
    const want = new Map<string, Entry[]>();
    const vocabulary = Array.from({ length: 500 }, (_, k) => `w${k}`);
    for (let run = 0; run < 40; run++) {
      b.beginRun(1000 + run);
      for (let pos = 0; pos < 100; pos++) {
        const words = vocabulary.filter((_, k) => (k * 7 + run * 13 + pos * 31) % 17 < 1 + (pos % 3));
        b.addDocument(pos, [words.join(' ')]);
        for (const w of words) (want.get(w) ?? want.set(w, []).get(w)!).push([1000 + run, pos, 1]);
      }
    }
    const total = [...want.values()].reduce((n, l) => n + l.length, 0);
    assert.ok(total > 2 * 65_536, `${total} postings`);
    assert.deepEqual(new Map([...b.postings()].map(([t, data]) => [t, decoded(data)])), want);
  });

  test("terms' postings buffers grow inside shared slabs up to 4 KB: thousands of terms hold a few ArrayBuffers, and decode exactly", () => {
    const b = new SegmentBuilder();
    const want = new Map<string, Entry[]>();
    // 3,000 terms, each in 40–400 documents of one run (postings of ~80 bytes to ~1 KB: several doublings
    // each), and two terms in every document (past 4 KB: buffers of their own)
    const terms = Array.from({ length: 3000 }, (_, k) => `t${k}`);
    b.beginRun(7);
    for (let pos = 0; pos < 4000; pos++) {
      const words = ['every', 'all', ...terms.filter((_, k) => pos % (10 + (k % 90)) === 0)];
      b.addDocument(pos, [words.join(' ')]);
      for (const w of words) (want.get(w) ?? want.set(w, []).get(w)!).push([7, pos, 1]);
    }
    const blobs = [...b.postings()];
    assert.deepEqual(new Map(blobs.map(([t, data]) => [t, decoded(data)])), want);
    const buffers = new Set(blobs.map(([, data]) => data.buffer));
    const bytes = blobs.reduce((n, [, data]) => n + data.length, 0);
    // one ArrayBuffer a term was ~3,000 of them; slabs of 64 KB hold every buffer but the two largest
    assert.ok(buffers.size <= 2 + Math.ceil((4 * bytes) / 65536), `${buffers.size} ArrayBuffers for ${blobs.length} terms, ${bytes} bytes`);
  });

  test('merged groups (compaction) encode exactly like a segment built from the same documents', () => {
    const { builder, want } = randomSegment(99);
    for (const [term, data] of builder.postings()) {
      const groups = new Map<number, number[]>();
      for (const [runKey, pos, tf] of want.get(term)!) (groups.get(runKey) ?? groups.set(runKey, []).get(runKey)!).push(pos, tf);
      assert.deepEqual(encodeGroups(groups), data, term);
    }
  });

  test("a merge keeps the wanted runs' groups as their bytes: exactly what encoding the decoded entries makes", () => {
    for (const seed of [5, 6, 7]) {
      const random = rng(seed);
      const { builder } = randomSegment(seed);
      for (const [term, data] of builder.postings()) {
        for (const share of [0, 0.5, 1]) {
          const wanted = new Set<number>();
          for (const [runKey] of decoded(data)) if (random() < share) wanted.add(runKey);
          const want = (runKey: number): boolean => wanted.has(runKey);
          const groups = new Map<number, number[]>();
          for (const [runKey, pos, tf] of decoded(data, want)) (groups.get(runKey) ?? groups.set(runKey, []).get(runKey)!).push(pos, tf);
          assert.deepEqual(Buffer.from(liveGroups(data, want)), encodeGroups(groups), `${term} ${share}`);
        }
        // every group wanted: the blob itself, not a copy
        assert.equal(
          liveGroups(data, () => true),
          data,
        );
      }
    }
    assert.throws(() => liveGroups(Uint8Array.from([5, 4, 0x83]), () => true), /end in the middle of an entry/);
    assert.throws(() => liveGroups(Uint8Array.from([5, 3]), () => false), /end in the middle of an entry/);
  });
});
