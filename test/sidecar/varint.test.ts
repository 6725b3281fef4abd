import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readVarints, VarintWriter } from '../../src/sidecar/varint.js';

const encode = (...ns: number[]): number[] => {
  const w = new VarintWriter();
  for (const n of ns) w.write(n);
  return [...w.bytes()];
};

describe('sidecar/varint', () => {
  test('unsigned LEB128: seven bits a byte, low group first, high bit means more', () => {
    assert.deepEqual(encode(0), [0x00]);
    assert.deepEqual(encode(1), [0x01]);
    assert.deepEqual(encode(127), [0x7f]);
    assert.deepEqual(encode(128), [0x80, 0x01]);
    assert.deepEqual(encode(300), [0xac, 0x02]);
    assert.deepEqual(encode(16383), [0xff, 0x7f]);
    assert.deepEqual(encode(16384), [0x80, 0x80, 0x01]);
  });

  test('values past 32 bits are not truncated by bitwise arithmetic', () => {
    assert.deepEqual(encode(2 ** 31), [0x80, 0x80, 0x80, 0x80, 0x08]);
    assert.deepEqual(encode(2 ** 32), [0x80, 0x80, 0x80, 0x80, 0x10]);
    assert.deepEqual(encode(Number.MAX_SAFE_INTEGER), [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    assert.deepEqual(readVarints(Uint8Array.from(encode(Number.MAX_SAFE_INTEGER, 2 ** 32 + 5))), [Number.MAX_SAFE_INTEGER, 2 ** 32 + 5]);
  });

  test('the buffer grows from a tiny capacity and everything written reads back in order', () => {
    const w = new VarintWriter(1);
    const values: number[] = [];
    for (let i = 0; i < 5000; i++) values.push((i * 2654435761) % 2 ** 40);
    for (const v of values) w.write(v);
    assert.deepEqual(readVarints(w.bytes()), values);
    assert.equal(w.bytes().length, w.length);
  });

  test('raw bytes are appended between varints, growing the buffer as needed', () => {
    const w = new VarintWriter(2);
    w.write(200);
    w.writeBytes(Uint8Array.from([0x05, 0x06, 0x07, 0x08, 0x09]));
    w.write(1);
    assert.deepEqual([...w.bytes()], [0xc8, 0x01, 0x05, 0x06, 0x07, 0x08, 0x09, 0x01]);
    w.writeBytes(new Uint8Array(0));
    assert.equal(w.length, 8);
  });

  test('an empty writer and an empty buffer hold nothing', () => {
    assert.equal(new VarintWriter().bytes().length, 0);
    assert.deepEqual(readVarints(new Uint8Array(0)), []);
  });
});
