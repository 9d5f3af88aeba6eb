// StreamGate (src/upstreams/http/stream-gate.ts): places taken at once or in order, a waiter that
// aborts takes nothing, every place given back once; streamPlaces keeps connections for calls.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamGate, streamPlaces } from '../../src/upstreams/http/stream-gate.js';

test('places: taken up to max, waited for in order, an aborted waiter leaves the queue, given back to the next', async () => {
  const gate = new StreamGate(2);
  assert.equal(gate.tryTake(), true);
  assert.equal(gate.tryTake(), true);
  assert.equal(gate.tryTake(), false);
  const order: string[] = [];
  const a = new AbortController();
  const b = new AbortController();
  const first = gate.take(a.signal).then(() => order.push('a'));
  const second = gate.take(b.signal).then(
    () => order.push('b'),
    (err: unknown) => order.push(`b aborted: ${(err as Error).message}`),
  );
  const c = new AbortController();
  const third = gate.take(c.signal).then(() => order.push('c'));
  b.abort(new Error('session ended'));
  await second;
  gate.give();
  await first;
  gate.give();
  await third;
  assert.deepEqual(order, ['b aborted: session ended', 'a', 'c']);
  assert.equal(gate.size, 2, 'each waiter took the place given back');
  gate.give();
  gate.give();
  assert.equal(gate.size, 0);
  gate.give();
  assert.equal(gate.size, 0, 'never below zero');
  await assert.rejects(gate.take(AbortSignal.abort(new Error('gone'))), /gone/);
});

test('streamPlaces: 1/divisor of the connections kept for calls, at least one; at least one place', () => {
  assert.equal(streamPlaces(512, 16), 480);
  assert.equal(streamPlaces(4, 16), 3);
  assert.equal(streamPlaces(2, 16), 1);
  assert.equal(streamPlaces(1, 16), 1);
});
