// Held calls: the requestState is bound to the request, single-use, and exact to the character.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CallQueue, HeldCalls, type HeldCall } from '../../src/core/calls.js';

const call = (): HeldCall => ({ queue: new CallQueue(), respond: () => {}, cancel: () => {}, pending: new Map(), inputRequests: {} });

test('take: only the exact state, for the same method and arguments, once', () => {
  const held = new HeldCalls(undefined, 10, 60_000);
  t_each: for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_') {
    const state = held.hold(call(), 'tools/call', { name: 'x', arguments: { a: 1 } });
    const altered = state.slice(0, -1) + c;
    if (altered === state) {
      assert.ok(held.take(state, 'tools/call', { name: 'x', arguments: { a: 1 } }));
      continue t_each;
    }
    assert.equal(held.take(altered, 'tools/call', { name: 'x', arguments: { a: 1 } }), undefined, c);
    assert.equal(held.take(state, 'tools/call', { name: 'x', arguments: { a: 2 } }), undefined);
    assert.ok(held.take(state, 'tools/call', { name: 'x', arguments: { a: 1 }, inputResponses: {} }));
    assert.equal(held.take(state, 'tools/call', { name: 'x', arguments: { a: 1 } }), undefined, 'single use');
  }
  held.clear();
});
