// Redis memory per session, measured on real keys with MEMORY USAGE and the used_memory delta
// (INFO memory) of a real redis-server; docs/scaling.md quotes these figures. The bounds asserted
// are the ones the sizing table relies on.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createCluster } from '../../src/cluster/index.js';
import { recordingLog, startRedis } from '../helpers/redis.js';

/** A typical 2025-era SSE event: one progress notification (153 bytes of JSON). */
const event = (k: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: `tok-${k % 10}`, progress: k % 10, total: 100, message: `step ${k % 10} of 100: indexing files` },
  });

test('Redis memory per session, per open stream, per revocation and per bucket', async (t) => {
  const redis = await startRedis(t);
  const c = await createCluster({ redis: redis.url, key: randomBytes(32).toString('base64'), replicaId: 'measure', log: recordingLog().log });
  t.after(() => c.close());
  assert.equal(await c.redis!.waitUntilUp(10_000), true);
  const r = c.redis!;
  const used = async () => Number(/used_memory:(\d+)/.exec((await r.command(['INFO', 'memory'])) as string)![1]);
  const usage = async (pattern: string) => {
    const keys = ((await r.command(['KEYS', pattern])) as string[]).filter((k) => !k.endsWith(':warm'));
    return Number(await r.command(['MEMORY', 'USAGE', keys[0], 'SAMPLES', '0']));
  };
  const N = 500;
  const sessionIds = Array.from({ length: N }, (_, i) => c.sealer.seal('session', { i, pad: 'x'.repeat(900) }, Date.now() + 86_400_000));
  assert.equal(Buffer.byteLength(event(7)), 153);

  // Warm up: the first commands of a fresh server allocate once (client buffers, script cache, the first dict tables).
  for (let i = 0; i < 200; i++) await r.command(['SET', `warm:${i}`, 'x', 'PX', '600000']);
  await c.liveness.touch('warm', 1_000);
  await c.events.append('warm', 'x');
  await c.buckets!.take('warm', 1, 1, 1, 0);
  await c.liveness.revoke('warm', Date.now() + 1_000);
  await c.bus!.claim('warm', 1_000);

  const figures: Record<string, { memoryUsageBytes: number; usedMemoryDeltaBytes: number }> = {};
  const measure = async (name: string, pattern: string, fill: () => Promise<void>, count = N) => {
    const before = await used();
    await fill();
    figures[name] = { memoryUsageBytes: await usage(pattern), usedMemoryDeltaBytes: Math.round(((await used()) - before) / count) };
  };
  await measure('session activity (touch)', 'swy:seen:*', async () => {
    for (const id of sessionIds) await c.liveness.touch(id, 1_800_000);
  });
  await measure('changed state (log level, one subscription)', 'swy:sst:*', async () => {
    for (const id of sessionIds) await c.liveness.setState(id, JSON.stringify({ l: 'info', s: ['file:///workspace/README.md'] }), 1_800_000);
  });
  await measure('stream lease (claim)', 'swy:own:*', async () => {
    for (const id of sessionIds) await c.bus!.claim(`get:${id}`, 60_000);
  });
  await measure('revocation', 'swy:rev:*', async () => {
    for (const id of sessionIds) await c.liveness.revoke(`deleted:${id}`, Date.now() + 86_400_000);
  });
  await measure('token bucket', 'swy:tb:*', async () => {
    for (let i = 0; i < N; i++) await c.buckets!.take(`principal-${i}`, 1, 10, 50, Date.now());
  });
  for (const events of [1, 10, 100, 256]) {
    await measure(
      `stream buffer, ${events} events`,
      `swy:ev:s${events}-0`,
      async () => {
        for (let s = 0; s < 50; s++) for (let k = 0; k < events; k++) await c.events.append(`s${events}-${s}`, event(k));
      },
      50,
    );
  }
  t.diagnostic(JSON.stringify(figures));

  // The bounds docs/scaling.md's sizing table relies on (Redis 7.0, 64-bit, jemalloc).
  // The changed state holds its JSON (here 48 bytes) besides the key.
  const changed = figures['changed state (log level, one subscription)'];
  assert.ok(changed.memoryUsageBytes <= 192 && changed.usedMemoryDeltaBytes <= 400, JSON.stringify(changed));
  for (const small of ['session activity (touch)', 'stream lease (claim)', 'revocation', 'token bucket']) {
    assert.ok(figures[small].memoryUsageBytes <= 128, `${small}: ${JSON.stringify(figures[small])}`);
    assert.ok(figures[small].usedMemoryDeltaBytes <= 400, `${small}: ${JSON.stringify(figures[small])}`);
  }
  // A stream key costs one listpack node (stream-node-max-bytes, 4 KiB) before it holds much.
  assert.ok(figures['stream buffer, 1 events'].memoryUsageBytes <= 6 * 1024, JSON.stringify(figures['stream buffer, 1 events']));
  assert.ok(figures['stream buffer, 256 events'].memoryUsageBytes <= 64 * 1024, JSON.stringify(figures['stream buffer, 256 events']));
  assert.ok(figures['stream buffer, 256 events'].usedMemoryDeltaBytes <= 64 * 1024, JSON.stringify(figures['stream buffer, 256 events']));
});
