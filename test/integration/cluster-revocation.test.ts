// The Redis session liveness store (src/cluster/revocation.ts) against a real redis-server: a
// revocation or touch on one replica is seen by another; keys are digests that expire on their own.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';
import { createClusterRedis, type ClusterRedis } from '../../src/cluster/redis.js';
import { createRedisSessionLiveness } from '../../src/cluster/revocation.js';
import { recordingLog, startRedis } from '../helpers/redis.js';

async function connect(t: { after(fn: () => void | Promise<void>): void }, url: string): Promise<ClusterRedis> {
  const r = createClusterRedis({ url, log: recordingLog().log, reconnectBaseMs: 20, reconnectMaxMs: 200 });
  t.after(() => r.destroy());
  assert.equal(await r.waitUntilUp(10_000), true);
  return r;
}

const SESSION = 'v1.k1.AAAAAAAAAAAAAAAA.sealed-session-credential';

test('revocation on replica A is seen on replica B, until untilMs', async (t) => {
  const redis = await startRedis(t);
  const ra = await connect(t, redis.url);
  const a = createRedisSessionLiveness({ redis: ra });
  const b = createRedisSessionLiveness({ redis: await connect(t, redis.url) });
  await a.touch(SESSION, 60_000);
  assert.equal(await b.admit(SESSION, 60_000), 'live');
  assert.equal(await b.isRevoked(SESSION), false);
  const until = Date.now() + 60_000;
  await a.revoke(SESSION, until);
  assert.equal(await b.isRevoked(SESSION), true);
  assert.equal(await b.admit(SESSION, 60_000), 'revoked');
  assert.equal(await b.lastSeen(SESSION), undefined);
  // Keys are digests with an expiry: the credential never appears, nothing lives forever.
  const keys = ((await ra.command(['KEYS', 'swy:*'])) as string[]).sort();
  assert.equal(keys.length, 1);
  assert.match(keys[0], /^swy:rev:[A-Za-z0-9_-]{22}$/);
  assert.equal(Number(await ra.command(['PEXPIRETIME', keys[0]])), until);
  // A shorter second revocation does not shorten the first.
  await b.revoke(SESSION, until - 30_000);
  assert.equal(Number(await ra.command(['PEXPIRETIME', keys[0]])), until);
  // Revocations lapse with the session they name.
  const other = `${SESSION}-2`;
  await a.revoke(other, Date.now() + 30);
  while (await b.isRevoked(other)) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(await b.isRevoked(other), false);
  // In the past: nothing stored.
  await a.revoke(`${SESSION}-3`, Date.now() - 1);
  assert.equal(await b.isRevoked(`${SESSION}-3`), false);
});

test('touch on one replica keeps the session live on another; idle after idleMs without activity', async (t) => {
  const redis = await startRedis(t);
  const ra = await connect(t, redis.url);
  let clock = 1_700_000_000_000;
  const a = createRedisSessionLiveness({ redis: ra, now: () => clock });
  const b = createRedisSessionLiveness({ redis: await connect(t, redis.url), now: () => clock });
  assert.equal(await b.admit(SESSION, 60_000), 'idle');
  await a.touch(SESSION, 60_000);
  assert.equal(await b.lastSeen(SESSION), 1_700_000_000_000);
  clock += 5_000;
  assert.equal(await b.admit(SESSION, 60_000), 'live');
  assert.equal(await a.lastSeen(SESSION), 1_700_000_005_000);
  const [key] = (await ra.command(['KEYS', 'swy:seen:*'])) as string[];
  const ttl = Number(await ra.command(['PTTL', key]));
  assert.ok(ttl > 0 && ttl <= 60_000, String(ttl));
  // Idle expiry runs on Redis's clock: a short idle time lapses on its own.
  await a.touch('short', 30);
  while ((await b.lastSeen('short')) !== undefined) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(await b.admit('short', 30), 'idle');
});

test('Redis down: every call fails with SWY_ERR_CLUSTER_UNAVAILABLE (fail closed: no request is admitted unchecked)', async (t) => {
  const redis = await startRedis(t);
  const r = await connect(t, redis.url);
  const s = createRedisSessionLiveness({ redis: r });
  await s.touch(SESSION, 60_000);
  const down = new Promise<void>((resolve) => r.onStatus((st) => st.state === 'down' && resolve()));
  await redis.kill();
  await down;
  for (const p of [s.admit(SESSION, 60_000), s.isRevoked(SESSION), s.revoke(SESSION, Date.now() + 1_000), s.touch(SESSION, 1_000), s.lastSeen(SESSION)])
    await assert.rejects(p, (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_CLUSTER_UNAVAILABLE');
});

test('changeable state set on replica A comes back from admitState on B, expires with the activity, and goes with a revocation', async (t) => {
  const redis = await startRedis(t);
  const ra = await connect(t, redis.url);
  const a = createRedisSessionLiveness({ redis: ra });
  const b = createRedisSessionLiveness({ redis: await connect(t, redis.url) });
  await a.touch(SESSION, 60_000);
  assert.deepEqual(await b.admitState(SESSION, 60_000), { admission: 'live', state: undefined });
  await a.setState(SESSION, '{"l":"debug","s":["demo://readme"]}', 60_000);
  assert.deepEqual(await b.admitState(SESSION, 60_000), { admission: 'live', state: '{"l":"debug","s":["demo://readme"]}' });
  // The key is a digest, with the activity's TTL (renewed by the admit).
  const keys = (await ra.command(['KEYS', 'swy:sst:*'])) as string[];
  assert.equal(keys.length, 1);
  assert.match(keys[0], /^swy:sst:[A-Za-z0-9_-]{22}$/);
  const ttl = Number(await ra.command(['PTTL', keys[0]]));
  assert.ok(ttl > 59_000 && ttl <= 60_000, String(ttl));
  await b.revoke(SESSION, Date.now() + 60_000);
  assert.deepEqual(await a.admitState(SESSION, 60_000), { admission: 'revoked', state: undefined });
  assert.deepEqual(await ra.command(['KEYS', 'swy:sst:*']), []);
});
