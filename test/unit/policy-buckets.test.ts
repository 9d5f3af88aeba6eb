// The in-memory token-bucket store: refill, cap, retry times, a clock going back, the bound.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SwitchyardError } from '../../src/core/errors.js';
import { createMemoryBucketStore } from '../../src/policy/index.js';

test('a new bucket is full; it refills at the rate, capped at the burst', async () => {
  const s = createMemoryBucketStore({ maxBuckets: 10 });
  const t0 = 1_000_000;
  for (let i = 0; i < 3; i++) assert.deepEqual(await s.take('k', 1, 10, 3, t0), { ok: true, retryAfterMs: 0 });
  assert.deepEqual(await s.take('k', 1, 10, 3, t0), { ok: false, retryAfterMs: 100 });
  assert.deepEqual(await s.take('k', 1, 10, 3, t0 + 40), { ok: false, retryAfterMs: 60 });
  assert.deepEqual(await s.take('k', 1, 10, 3, t0 + 100), { ok: true, retryAfterMs: 0 });
  // A clock that goes back is a clock that stands still.
  assert.deepEqual(await s.take('k', 1, 10, 3, t0), { ok: false, retryAfterMs: 100 });
  // An hour later the bucket holds the burst, not more.
  const later = t0 + 3_600_000;
  for (let i = 0; i < 3; i++) assert.equal((await s.take('k', 1, 10, 3, later)).ok, true);
  assert.equal((await s.take('k', 1, 10, 3, later)).ok, false);
  // Keys are independent; a cost above one waits for that many tokens.
  assert.deepEqual(await s.take('other', 2, 1, 2, t0), { ok: true, retryAfterMs: 0 });
  assert.deepEqual(await s.take('other', 2, 1, 2, t0 + 500), { ok: false, retryAfterMs: 1_500 });
});

test('the store keeps at most maxBuckets: the least recently used is forgotten', async () => {
  const s = createMemoryBucketStore({ maxBuckets: 2 });
  for (const k of ['a', 'b']) await s.take(k, 1, 1, 1, 0);
  assert.equal((await s.take('a', 1, 1, 1, 0)).ok, false);
  await s.take('c', 1, 1, 1, 0); // evicts b, the least recently used
  assert.equal((await s.take('a', 1, 1, 1, 0)).ok, false);
  assert.equal((await s.take('b', 1, 1, 1, 0)).ok, true);
  assert.throws(
    () => createMemoryBucketStore({ maxBuckets: 0 }),
    (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_CONFIG_INVALID',
  );
});

test('property: over any run of takes, admitted requests never exceed burst + rate × elapsed', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.double({ min: 0.01, max: 100, noNaN: true }),
      fc.integer({ min: 1, max: 20 }),
      fc.array(fc.integer({ min: 0, max: 2_000 }), { minLength: 1, maxLength: 60 }),
      async (rate, burst, gaps) => {
        const s = createMemoryBucketStore({ maxBuckets: 1 });
        let now = 0;
        let admitted = 0;
        for (const gap of gaps) {
          now += gap;
          const r = await s.take('k', 1, rate, burst, now);
          if (r.ok) admitted++;
          else assert.ok(r.retryAfterMs >= 1);
          assert.ok(admitted <= burst + (rate * now) / 1000 + 1e-6, `${admitted} > ${burst} + ${rate} × ${now} ms`);
        }
      },
    ),
  );
});

test('property: a refused take succeeds exactly when its retryAfterMs has passed', async () => {
  await fc.assert(
    fc.asyncProperty(fc.double({ min: 0.01, max: 100, noNaN: true }), fc.integer({ min: 1, max: 5 }), async (rate, burst) => {
      const s = createMemoryBucketStore({ maxBuckets: 1 });
      for (let i = 0; i < burst; i++) await s.take('k', 1, rate, burst, 0);
      const refused = await s.take('k', 1, rate, burst, 0);
      assert.equal(refused.ok, false);
      if (refused.retryAfterMs > 1) assert.equal((await s.take('k', 1, rate, burst, refused.retryAfterMs - 1)).ok, false);
      assert.equal((await s.take('k', 1, rate, burst, refused.retryAfterMs)).ok, true);
    }),
  );
});
