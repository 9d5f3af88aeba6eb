// The Redis token bucket store (src/cluster/buckets.ts) against a real redis-server: exact
// take/refill arithmetic against a model, atomicity across two replicas, clock skew, TTL, outage.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SwitchyardError } from '../../src/core/errors.js';
import { createClusterRedis, type ClusterRedis } from '../../src/cluster/redis.js';
import { createRedisBucketStore } from '../../src/cluster/buckets.js';
import { recordingLog, startRedis } from '../helpers/redis.js';

async function connect(t: { after(fn: () => void | Promise<void>): void }, url: string): Promise<ClusterRedis> {
  const r = createClusterRedis({ url, log: recordingLog().log, reconnectBaseMs: 20, reconnectMaxMs: 200 });
  t.after(() => r.destroy());
  assert.equal(await r.waitUntilUp(10_000), true);
  return r;
}

const START_MS = 1_700_000_000_000;

test('a full bucket gives burst tokens, then refuses with the time until enough have refilled', async (t) => {
  const redis = await startRedis(t);
  const b = createRedisBucketStore({ redis: await connect(t, redis.url) });
  for (let i = 0; i < 3; i++) assert.deepEqual(await b.take('k', 1, 1, 3, START_MS), { ok: true, retryAfterMs: 0 });
  assert.deepEqual(await b.take('k', 1, 1, 3, START_MS), { ok: false, retryAfterMs: 1_000 });
  assert.deepEqual(await b.take('k', 1, 1, 3, START_MS + 400), { ok: false, retryAfterMs: 600 });
  assert.deepEqual(await b.take('k', 1, 1, 3, START_MS + 1_000), { ok: true, retryAfterMs: 0 });
  // A cost of 2 with 0.5 tokens there at 2 tokens/s: 750 ms to go.
  assert.deepEqual(await b.take('k2', 2, 2, 2, START_MS), { ok: true, retryAfterMs: 0 });
  assert.deepEqual(await b.take('k2', 2, 2, 2, START_MS + 250), { ok: false, retryAfterMs: 750 });
  // Refill stops at burst.
  assert.deepEqual(await b.take('k2', 2, 2, 2, START_MS + 3_600_000), { ok: true, retryAfterMs: 0 });
  assert.deepEqual(await b.take('k2', 1, 2, 2, START_MS + 3_600_000), { ok: false, retryAfterMs: 500 });
  // Cost 0 always passes (a probe).
  assert.deepEqual(await b.take('k2', 0, 2, 2, START_MS + 3_600_000), { ok: true, retryAfterMs: 0 });
});

test('take matches a reference token bucket over random sequences (fast-check)', async (t) => {
  const redis = await startRedis(t);
  const b = createRedisBucketStore({ redis: await connect(t, redis.url) });
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 20 }),
      fc.array(fc.record({ steps: fc.nat({ max: 30 }), cost: fc.nat({ max: 20 }) }), { minLength: 1, maxLength: 30 }),
      async (burst, ops) => {
        // 10 tokens/s and time in 100 ms steps keep every token count an integer: exact comparison.
        const key = `model-${run++}`;
        let tokens = burst;
        let now = START_MS;
        for (const { steps, cost } of ops) {
          const c = Math.min(cost, burst);
          now += steps * 100;
          tokens = Math.min(burst, tokens + steps);
          const want = tokens >= c ? { ok: true, retryAfterMs: 0 } : { ok: false, retryAfterMs: (c - tokens) * 100 };
          if (want.ok) tokens -= c;
          assert.deepEqual(await b.take(key, c, 10, burst, now), want);
        }
      },
    ),
    { numRuns: 60 },
  );
});

test('two replicas share one bucket atomically: 200 concurrent takes on a burst of 25 admit exactly 25', async (t) => {
  const redis = await startRedis(t);
  const a = createRedisBucketStore({ redis: await connect(t, redis.url) });
  const b = createRedisBucketStore({ redis: await connect(t, redis.url) });
  const results = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).take('shared', 1, 0.001, 25, START_MS)));
  assert.equal(results.filter((r) => r.ok).length, 25);
  assert.equal(results.filter((r) => !r.ok).length, 175);
});

test('a replica whose clock is behind adds no tokens and does not move the bucket back', async (t) => {
  const redis = await startRedis(t);
  const a = createRedisBucketStore({ redis: await connect(t, redis.url) });
  const behind = createRedisBucketStore({ redis: await connect(t, redis.url) });
  assert.deepEqual(await a.take('skew', 2, 1, 2, START_MS + 10_000), { ok: true, retryAfterMs: 0 });
  assert.deepEqual(await behind.take('skew', 1, 1, 2, START_MS), { ok: false, retryAfterMs: 1_000 });
  assert.deepEqual(await a.take('skew', 1, 1, 2, START_MS + 11_000), { ok: true, retryAfterMs: 0 });
});

test('bucket keys are digests and expire once the bucket would be full again', async (t) => {
  const redis = await startRedis(t);
  const r = await connect(t, redis.url);
  const b = createRedisBucketStore({ redis: r });
  await b.take('principal:alice@example.com', 1, 10, 50, START_MS);
  const keys = (await r.command(['KEYS', 'swy:tb:*'])) as string[];
  assert.equal(keys.length, 1);
  assert.match(keys[0], /^swy:tb:[A-Za-z0-9_-]{22}$/);
  const ttl = Number(await r.command(['PTTL', keys[0]]));
  // 50 tokens at 10/s: full after 5 s, plus 1 s of margin.
  assert.ok(ttl > 5_000 && ttl <= 6_000, String(ttl));
});

test('arguments no bucket can serve are refused; Redis down fails with SWY_ERR_CLUSTER_UNAVAILABLE', async (t) => {
  const redis = await startRedis(t);
  const r = await connect(t, redis.url);
  const b = createRedisBucketStore({ redis: r });
  for (const [cost, rate, burst, now] of [
    [2, 1, 1, START_MS],
    [-1, 1, 1, START_MS],
    [1, 0, 1, START_MS],
    [1, 1, 0, START_MS],
    [1, Number.NaN, 1, START_MS],
    [1, 1, Number.POSITIVE_INFINITY, START_MS],
    [1, 1, 1, Number.NaN],
  ])
    await assert.rejects(b.take('k', cost, rate, burst, now), (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_INTERNAL_FAULT');
  const down = new Promise<void>((resolve) => r.onStatus((s) => s.state === 'down' && resolve()));
  await redis.kill();
  await down;
  await assert.rejects(b.take('k', 1, 1, 1, START_MS), (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_CLUSTER_UNAVAILABLE');
  // After a restart Redis has lost the script: EVALSHA falls back to EVAL.
  await redis.restart();
  assert.equal(await r.waitUntilUp(10_000), true);
  assert.deepEqual(await b.take('k', 1, 1, 1, START_MS), { ok: true, retryAfterMs: 0 });
});
