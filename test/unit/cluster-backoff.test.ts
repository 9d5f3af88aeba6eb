// Reconnect backoff (src/cluster/redis.ts reconnectDelayMs): exponential, jittered, never above the cap.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { reconnectDelayMs } from '../../src/cluster/redis.js';

test('each delay lies in [cap/2, cap] with cap = min(max, base × 2^attempt)', () => {
  fc.assert(
    fc.property(
      fc.nat({ max: 10_000 }),
      fc.integer({ min: 1, max: 10_000 }),
      fc.integer({ min: 1, max: 600_000 }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (attempt, base, max, r) => {
        const cap = Math.min(max, base * 2 ** Math.min(attempt, 30));
        const d = reconnectDelayMs(attempt, base, max, () => r);
        assert.ok(d >= Math.floor(cap / 2) && d <= Math.ceil(cap), `${d} outside [${cap / 2}, ${cap}]`);
        assert.ok(d <= max);
      },
    ),
  );
});

test('the sequence doubles until the cap, and jitter spreads replicas apart', () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6, 7].map((a) => reconnectDelayMs(a, 100, 5_000, () => 0)),
    [50, 100, 200, 400, 800, 1_600, 2_500, 2_500],
  );
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6, 7].map((a) => reconnectDelayMs(a, 100, 5_000, () => 0.999999)),
    [100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000],
  );
  // Huge attempt counts do not overflow to Infinity or NaN.
  assert.equal(
    reconnectDelayMs(1e9, 100, 5_000, () => 0.5),
    3_750,
  );
});
