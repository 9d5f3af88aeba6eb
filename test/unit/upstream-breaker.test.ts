// The circuit breaker's states on a fake clock (closed, open, half-open, one trial), and the
// reconnect delays' bounds (exponential, capped, with jitter) as a property.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { backoffDelayMs } from '../../src/upstreams/backoff.js';
import { createBreaker } from '../../src/upstreams/breaker.js';

function breaker() {
  let now = 1_000;
  const b = createBreaker({ failures: 3, cooldownMs: 500, now: () => now });
  return { b, advance: (ms: number) => (now += ms) };
}

test('N failures in a row open the breaker; a success in between starts the count over', () => {
  const { b } = breaker();
  assert.deepEqual(b.admit(), { ok: true, trial: false });
  assert.equal(b.failure(false), false);
  assert.equal(b.failure(false), false);
  assert.equal(b.success(false), false);
  assert.equal(b.failures, 0);
  assert.equal(b.failure(false), false);
  assert.equal(b.failure(false), false);
  assert.equal(b.state, 'closed');
  assert.equal(b.failure(false), true, 'the third in a row opens it');
  assert.equal(b.state, 'open');
  assert.deepEqual(b.admit(), { ok: false, retryInMs: 500 });
  assert.equal(b.peek(), false);
});

test('after the cool-down exactly one trial passes; its success closes the breaker', () => {
  const { b, advance } = breaker();
  for (let i = 0; i < 3; i++) b.failure(false);
  advance(499);
  assert.deepEqual(b.admit(), { ok: false, retryInMs: 1 });
  advance(1);
  assert.equal(b.state, 'half-open');
  assert.equal(b.peek(), true);
  assert.deepEqual(b.admit(), { ok: true, trial: true });
  assert.equal(b.peek(), false);
  assert.deepEqual(b.admit(), { ok: false, retryInMs: 500 }, 'one trial at a time');
  assert.equal(b.success(true), true);
  assert.equal(b.state, 'closed');
  assert.deepEqual(b.admit(), { ok: true, trial: false });
});

test('a failed trial opens the breaker for another cool-down; a trial without a verdict frees the slot', () => {
  const { b, advance } = breaker();
  for (let i = 0; i < 3; i++) b.failure(false);
  advance(500);
  assert.deepEqual(b.admit(), { ok: true, trial: true });
  b.release(true);
  assert.deepEqual(b.admit(), { ok: true, trial: true }, 'released: the next call is the trial');
  assert.equal(b.failure(true), true);
  assert.equal(b.state, 'open');
  assert.equal(b.retryInMs(), 500);
  advance(500);
  assert.equal(b.state, 'half-open');
  // A call admitted while closed that fails late does not reopen or count as the trial.
  assert.equal(b.failure(false), false);
  assert.equal(b.state, 'half-open');
});

test('reconnect delays: in [cap/2, cap] for cap = min(max, min × 2^attempt), never above max, never below 1 ms', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 100 }),
      fc.integer({ min: 1, max: 60_000 }),
      fc.integer({ min: 1, max: 600_000 }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (attempt, minMs, maxMs, r) => {
        const d = backoffDelayMs(attempt, minMs, maxMs, () => r);
        const cap = Math.min(maxMs, minMs * 2 ** Math.min(attempt, 30));
        assert.ok(Number.isInteger(d));
        assert.ok(d >= Math.max(1, Math.floor(cap / 2)) && d <= Math.max(1, Math.ceil(cap)), `${d} for cap ${cap}`);
        assert.ok(d <= Math.max(1, maxMs));
      },
    ),
  );
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6].map((a) => backoffDelayMs(a, 100, 1_000, () => 0)),
    [50, 100, 200, 400, 500, 500, 500],
  );
  assert.deepEqual(
    [0, 1, 2, 3, 4].map((a) => backoffDelayMs(a, 100, 1_000, () => 0.999999)),
    [100, 200, 400, 800, 1000],
  );
});
