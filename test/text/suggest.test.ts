import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closestIds, editDistance } from '../../src/text/suggest.js';

describe('did-you-mean suggestions', () => {
  test('edit distance counts code points, and stops early past the bound', () => {
    assert.equal(editDistance('kitten', 'sitting'), 3);
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(editDistance('a😀b', 'a😁b'), 1);
    assert.equal(editDistance('abcdef', 'uvwxyz', 2), 3);
  });

  test('the closest ids first, case differences ranked after exact-case ones', () => {
    assert.deepEqual(closestIds('conv-X', ['conv-x1', 'conv-y', 'billing', 'conv-X1']), ['conv-X1', 'conv-x1', 'conv-y']);
    assert.deepEqual(closestIds('m000', ['m-000', 'm-001', 'zzzzzz']), ['m-000', 'm-001']);
    // a typed prefix finds the long ids it begins, however far their tails go
    assert.deepEqual(closestIds('conv-pay', ['conv-payments-refunds', 'conv-ops-billing-api']), ['conv-payments-refunds']);
    assert.deepEqual(closestIds('co', ['conv-payments-refunds']), []);
  });

  test('nothing close, nothing suggested; the id itself is never suggested', () => {
    assert.deepEqual(closestIds('run-ops-3', ['conv-alpha', 'conv-beta']), []);
    assert.deepEqual(closestIds('run-1', ['run-1']), []);
    assert.equal(closestIds('run-1', ['run-2', 'run-3', 'run-4', 'run-5']).length, 3);
  });
});
