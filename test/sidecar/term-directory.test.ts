/**
 * The term directory's buckets (tables.ts): an update lists its new postings rows by splicing the
 * encoded bucket (addToBucket), which must give the very bytes that decoding, pushing the ids and
 * encoding again gives, whatever the terms (multi-byte, of equal byte lengths, new or known).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rng } from '../../scripts/bench/synthetic-store.js';
import { addToBucket, decodeBucket, encodeBucket } from '../../src/sidecar/tables.js';
import { IndexDamagedError } from '../../src/sidecar/errors.js';

/** What writeSegment did before addToBucket: decode, push each id, encode. */
function byMap(data: Uint8Array, added: ReadonlyArray<readonly [string, number]>): Buffer {
  const entries = decodeBucket(data);
  for (const [term, id] of added) {
    const ids = entries.get(term);
    if (ids) ids.push(id);
    else entries.set(term, [id]);
  }
  return encodeBucket(entries);
}

test('adding rows to a bucket by its bytes gives the bytes of decoding, adding and encoding it again', () => {
  const random = rng(7);
  const alphabet = ['a', 'b', 'é', '日', '😀', 'z', '0'];
  const word = (): string =>
    Array.from({ length: 1 + Math.floor(random() * 6) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  for (let round = 0; round < 300; round++) {
    const entries = new Map<string, number[]>();
    for (let k = Math.floor(random() * 30); k > 0; k--)
      entries.set(
        word(),
        Array.from({ length: 1 + Math.floor(random() * 5) }, () => Math.floor(random() * (random() < 0.2 ? 2 ** 40 : 300))),
      );
    const data = encodeBucket(entries);
    // known terms, new terms (some of a known term's byte length), each once, ids large and small
    const terms = new Set<string>();
    for (let k = Math.floor(random() * 8); k > 0; k--)
      terms.add(random() < 0.5 && entries.size > 0 ? [...entries.keys()][Math.floor(random() * entries.size)]! : word());
    const added = [...terms].map((t) => [t, 1 + Math.floor(random() * (random() < 0.3 ? 2 ** 35 : 200))] as const);
    assert.deepEqual(addToBucket(data, added), byMap(data, added), `round ${round}`);
  }
  assert.deepEqual(addToBucket(new Uint8Array(0), [['new', 5]]), encodeBucket(new Map([['new', [5]]])));
});

test('a bucket cut in the middle of an entry is damage, as when decoded', () => {
  const data = encodeBucket(new Map([['term', [1, 2, 300]]]));
  for (let cut = 1; cut < data.length; cut++) {
    assert.throws(() => decodeBucket(data.subarray(0, cut)), IndexDamagedError);
    assert.throws(() => addToBucket(data.subarray(0, cut), [['term', 9]]), IndexDamagedError, `cut at ${cut}`);
  }
});
