// createCluster (src/cluster/index.ts): the `cluster` config section becomes one replica's stores;
// two replicas built from the same config share sealed state, streams, liveness and the bus.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SwitchyardError } from '../../src/core/errors.js';
import { createCluster, type Cluster } from '../../src/cluster/index.js';
import { recordingLog, startRedis } from '../helpers/redis.js';

const KEY = randomBytes(32).toString('base64');

async function replica(t: { after(fn: () => void | Promise<void>): void }, redis: string | undefined, replicaId: string): Promise<Cluster> {
  const c = await createCluster({ redis, key: KEY, replicaId, log: recordingLog().log, redisOptions: { reconnectBaseMs: 20, reconnectMaxMs: 200 } });
  t.after(() => c.close());
  if (c.redis) assert.equal(await c.redis.waitUntilUp(10_000), true);
  return c;
}

test('two replicas from one config share sealed sessions, resumption buffers, revocation and the bus', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a');
  const b = await replica(t, redis.url, 'replica-b');
  assert.deepEqual(a.status(), { redis: 'up' });
  const sessionId = a.sealer.seal('session', { v: '2025-11-25', p: 'principal' }, Date.now() + 60_000);
  assert.deepEqual(b.sealer.open('session', sessionId), { v: '2025-11-25', p: 'principal' });
  await a.liveness.touch(sessionId, 60_000);
  const first = await a.events.append('get-1', 'e1');
  const second = await a.events.append('get-1', 'e2');
  assert.equal(await b.liveness.admit(sessionId, 60_000), 'live');
  assert.deepEqual(await b.events.replayAfter('get-1', first), [{ id: second, data: 'e2' }]);
  assert.equal(await a.bus!.claim('get-1', 60_000), true);
  a.bus!.onForward((msg) => ({ wrote: msg.data as string }));
  assert.equal(await b.bus!.ownerOf('get-1'), 'replica-a');
  assert.deepEqual(await b.bus!.forward('replica-a', { kind: 'sse.write', data: 'hello' }), { wrote: 'hello' });
  assert.deepEqual(await b.buckets!.take('p', 1, 1, 1, 0), { ok: true, retryAfterMs: 0 });
  assert.deepEqual(await a.buckets!.take('p', 1, 1, 1, 0), { ok: false, retryAfterMs: 1_000 });
  await b.liveness.revoke(sessionId, Date.now() + 60_000);
  assert.equal(await a.liveness.admit(sessionId, 60_000), 'revoked');
});

test('status() reports Redis down with the error message and never the URL', async (t) => {
  const redis = await startRedis(t, ['--requirepass', 'pw-not-for-logs']);
  const c = await replica(t, `redis://default:pw-not-for-logs@127.0.0.1:${redis.port}`, 'replica-a');
  assert.deepEqual(c.status(), { redis: 'up' });
  const down = new Promise<void>((resolve) => c.redis!.onStatus((s) => s.state === 'down' && resolve()));
  await redis.kill();
  await down;
  const s = c.status();
  assert.equal(s.redis, 'down');
  assert.equal(typeof s.lastError, 'string');
  assert.equal(JSON.stringify(s).includes('pw-not-for-logs'), false);
});

test('without cluster.redis: one replica, stores in memory, no bus', async (t) => {
  const c = await replica(t, undefined, 'solo');
  assert.deepEqual(c.status(), { redis: 'off' });
  assert.equal(c.bus, undefined);
  assert.equal(c.buckets, undefined);
  const id = await c.events.append('s', 'x');
  assert.deepEqual(await c.events.replayAfter('s', id), []);
  assert.equal(c.sealer.open('session', c.sealer.seal('session', 1, Date.now() + 1_000)), 1);
  // No key configured: a random one (state does not survive a restart, and that is fine for one replica).
  const keyless = await createCluster({ log: recordingLog().log });
  assert.equal(keyless.sealer.open('session', c.sealer.seal('session', 1, Date.now() + 1_000)), undefined);
});

test('configuration errors: cluster.redis without cluster.key, a malformed key, a bad URL', async () => {
  const code = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (err) {
      return err instanceof SwitchyardError ? `${err.code}: ${err.message}` : String(err);
    }
    return 'resolved';
  };
  assert.equal(
    await code(createCluster({ redis: 'redis://127.0.0.1:1', log: recordingLog().log })),
    'SWY_ERR_CONFIG_INVALID: Invalid configuration: cluster.key is required with cluster.redis (every replica must open the same sealed state)',
  );
  assert.equal(
    await code(createCluster({ key: 'c2hvcnQ=', log: recordingLog().log })),
    'SWY_ERR_CONFIG_INVALID: Invalid configuration: cluster.key: key 1 is not 32 bytes of base64 (make one with: openssl rand -base64 32)',
  );
  assert.equal(
    await code(createCluster({ redis: 'http://127.0.0.1:1', key: KEY, log: recordingLog().log })),
    'SWY_ERR_CONFIG_INVALID: Invalid configuration: cluster.redis must be a redis:// or rediss:// URL',
  );
});
