// BoundedMemo: each key computed once, at most `max` keys held, emptied (not grown) past the bound.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoundedMemo } from '../../src/core/memo.js';

test('BoundedMemo: computes a key once, keeps null values, and empties itself past its bound', () => {
  const memo = new BoundedMemo<string | null>(3);
  let computed = 0;
  const of = (k: string) =>
    memo.get(k, () => {
      computed++;
      return k === 'bad' ? null : k.toUpperCase();
    });
  assert.deepEqual([of('a'), of('a'), of('bad'), of('bad')], ['A', 'A', null, null]);
  assert.equal(computed, 2, 'a null value is remembered like any other');
  of('b');
  assert.equal(memo.size, 3);
  // A fourth key: the memory is emptied first, so it never holds more than 3.
  assert.equal(of('c'), 'C');
  assert.equal(memo.size, 1);
  assert.equal(of('a'), 'A');
  assert.equal(computed, 5, 'a forgotten key is computed again, with the same answer');
});
