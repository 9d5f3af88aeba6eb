// The Redis Streams event store (src/cluster/event-store.ts) against a real redis-server: a
// stream written through one replica resumes through another with exactly the missed events;
// MAXLEN and TTL bounds; refusal of trimmed, foreign and malformed ids; outage.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';
import { createClusterRedis, type ClusterRedis } from '../../src/cluster/redis.js';
import { createRedisEventStore } from '../../src/cluster/event-store.js';
import { recordingLog, startRedis } from '../helpers/redis.js';

async function connect(t: { after(fn: () => void | Promise<void>): void }, url: string): Promise<ClusterRedis> {
  const r = createClusterRedis({ url, log: recordingLog().log, reconnectBaseMs: 20, reconnectMaxMs: 200 });
  t.after(() => r.destroy());
  assert.equal(await r.waitUntilUp(10_000), true);
  return r;
}

test('a stream appended through replica A resumes through replica B with exactly the missed events', async (t) => {
  const redis = await startRedis(t);
  const a = createRedisEventStore({ redis: await connect(t, redis.url) });
  const b = createRedisEventStore({ redis: await connect(t, redis.url) });
  const ids: string[] = [];
  for (let i = 0; i < 10; i++)
    ids.push(await a.append('s1/get', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: i } })));
  for (const id of ids) assert.match(id, /^s1\/get\.[0-9]+-[0-9]+$/);
  assert.equal(new Set(ids).size, 10);
  // The client saw up to event 6 (index 6) on replica A, then reconnects to replica B.
  const replay = await b.replayAfter('s1/get', ids[6]);
  assert.deepEqual(
    replay,
    [7, 8, 9].map((i) => ({ id: ids[i], data: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: i } }) })),
  );
  assert.deepEqual(await b.replayAfter('s1/get', ids[9]), []);
  // New events after the resume keep the order on either replica.
  const next = await b.append('s1/get', 'after-resume');
  assert.deepEqual(await a.replayAfter('s1/get', ids[9]), [{ id: next, data: 'after-resume' }]);
});

test('foreign, unknown, malformed and dropped ids replay nothing', async (t) => {
  const redis = await startRedis(t);
  const s = createRedisEventStore({ redis: await connect(t, redis.url) });
  const x = await s.append('x', '1');
  const y = await s.append('y', '1');
  // 2025-11-25 basic/transports#resumability-and-redelivery: MUST NOT replay another stream's messages.
  assert.equal(await s.replayAfter('x', y), undefined);
  assert.equal(await s.replayAfter('unknown', 'unknown.1-0'), undefined);
  // An id of the right shape that the stream never held (between two real ids).
  const [ms] = x.slice(2).split('-');
  assert.equal(await s.replayAfter('x', `x.${ms}-999`), undefined);
  for (const bad of ['x', 'x.', 'x.abc', 'x.1-2-3', 'x.-', 'x.+', 'x.(0-1', `x.${'9'.repeat(30)}-0`, '', 'x.0-0 '])
    assert.equal(await s.replayAfter('x', bad), undefined, bad);
  await s.drop('x');
  assert.equal(await s.replayAfter('x', x), undefined);
});

test('MAXLEN ~ N: the stream stays within N and N + stream-node-max-entries; a trimmed id is refused, the oldest kept one replays the rest', async (t) => {
  const redis = await startRedis(t);
  const r = await connect(t, redis.url);
  const s = createRedisEventStore({ redis: r, maxEventsPerStream: 50 });
  // RESP3 decodes the CONFIG GET map as an object.
  const config = (await r.command(['CONFIG', 'GET', 'stream-node-max-entries'])) as Record<string, string>;
  const nodeMaxEntries = Number(config['stream-node-max-entries']);
  assert.equal(nodeMaxEntries, 100);
  const ids: string[] = [];
  for (let i = 0; i < 500; i++) {
    ids.push(await s.append('big', `e${i}`));
    const len = Number(await r.command(['XLEN', 'swy:ev:big']));
    assert.ok(len >= Math.min(i + 1, 50) && len <= 50 + nodeMaxEntries, `length ${len} after ${i + 1} appends`);
  }
  const len = Number(await r.command(['XLEN', 'swy:ev:big']));
  const oldestKept = ids.length - len;
  assert.equal(await s.replayAfter('big', ids[0]), undefined);
  assert.equal(await s.replayAfter('big', ids[oldestKept - 1]), undefined);
  const replay = await s.replayAfter('big', ids[oldestKept]);
  assert.deepEqual(
    replay,
    ids.slice(oldestKept + 1).map((id, k) => ({ id, data: `e${oldestKept + 1 + k}` })),
  );
});

test('every append renews the key TTL', async (t) => {
  const redis = await startRedis(t);
  const r = await connect(t, redis.url);
  const s = createRedisEventStore({ redis: r, ttlMs: 60_000, keyPrefix: 'test:' });
  await s.append('t', '1');
  const ttl = Number(await r.command(['PTTL', 'test:ev:t']));
  assert.ok(ttl > 0 && ttl <= 60_000, String(ttl));
  await r.command(['PEXPIRE', 'test:ev:t', '5']);
  await s.append('t', '2');
  const renewed = Number(await r.command(['PTTL', 'test:ev:t']));
  assert.ok(renewed > 5 && renewed <= 60_000, String(renewed));
});

test('events over maxEventBytes are refused before Redis is asked', async (t) => {
  const redis = await startRedis(t);
  const r = await connect(t, redis.url);
  const s = createRedisEventStore({ redis: r, maxEventBytes: 16 });
  await s.append('z', 'x'.repeat(16));
  await assert.rejects(s.append('z', 'x'.repeat(17)), (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_CLUSTER_EVENT_TOO_LARGE');
  assert.equal(Number(await r.command(['XLEN', 'swy:ev:z'])), 1);
});

test('Redis down: append and replay fail with SWY_ERR_CLUSTER_UNAVAILABLE; after the restart the (empty) store works again', async (t) => {
  const redis = await startRedis(t);
  const r = await connect(t, redis.url);
  const s = createRedisEventStore({ redis: r });
  const id = await s.append('d', '1');
  const down = new Promise<void>((resolve) => r.onStatus((st) => st.state === 'down' && resolve()));
  await redis.kill();
  await down;
  const unavailable = (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_CLUSTER_UNAVAILABLE' && err.status === 503;
  await assert.rejects(s.append('d', '2'), unavailable);
  await assert.rejects(s.replayAfter('d', id), unavailable);
  await redis.restart();
  assert.equal(await r.waitUntilUp(10_000), true);
  // No persistence: the old stream is gone, so its id is refused rather than replayed with a gap.
  assert.equal(await s.replayAfter('d', id), undefined);
  const fresh = await s.append('d', '3');
  assert.deepEqual(await s.replayAfter('d', fresh), []);
});

test('put through replica A, replay through B: ids are the producer’s numbers; its TTL is the one given; no gap accepted', async (t) => {
  const redis = await startRedis(t);
  const ra = await connect(t, redis.url);
  const a = createRedisEventStore({ redis: ra });
  const b = createRedisEventStore({ redis: await connect(t, redis.url), maxEventsPerStream: 4 });
  await a.put('sess~r1~p1~n7', 0, '', 5_000);
  for (let seq = 1; seq <= 3; seq++) await a.put('sess~r1~p1~n7', seq, `{"n":${seq}}`, 5_000);
  assert.deepEqual(await b.replayAfter('sess~r1~p1~n7', 'sess~r1~p1~n7.0'), [
    { id: 'sess~r1~p1~n7.1', data: '{"n":1}' },
    { id: 'sess~r1~p1~n7.2', data: '{"n":2}' },
    { id: 'sess~r1~p1~n7.3', data: '{"n":3}' },
  ]);
  assert.deepEqual(await b.replayAfter('sess~r1~p1~n7', 'sess~r1~p1~n7.2'), [{ id: 'sess~r1~p1~n7.3', data: '{"n":3}' }]);
  assert.equal(await b.replayAfter('sess~r1~p1~n7', 'sess~r1~p1~n7.9'), undefined);
  const ttl = Number(await ra.command(['PTTL', 'swy:ev:sess~r1~p1~n7']));
  assert.ok(ttl > 4_000 && ttl <= 5_000, String(ttl));
  // A seq not above the last is a programming error Redis refuses.
  await assert.rejects(a.put('sess~r1~p1~n7', 2, 'again'), (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_INTERNAL_FAULT');
});

// A GET stream resumes from an id Redis trimmed with what is left (docs/scaling.md): `allowGap`
// gives every entry after it, never one of another stream or past the stream's last event.
test('replayAfter with allowGap on a trimmed put stream: every entry still held, in order; future, foreign and append-kind ids give nothing', async (t) => {
  const redis = await startRedis(t);
  const r = await connect(t, redis.url);
  const s = createRedisEventStore({ redis: r, maxEventsPerStream: 50 });
  for (let seq = 0; seq <= 400; seq++) await s.put('g', seq, seq === 0 ? '' : `e${seq}`);
  await s.put('other', 0, '');
  const len = Number(await r.command(['XLEN', 'swy:ev:g']));
  const oldest = 401 - len;
  assert.ok(oldest > 1, `trimmed: ${len} held`);
  const held = Array.from({ length: 400 - oldest + 1 }, (_, k) => ({ id: `g.${oldest + k}`, data: `e${oldest + k}` }));
  assert.equal(await s.replayAfter('g', 'g.1'), undefined);
  assert.deepEqual(await s.replayAfter('g', 'g.1', { allowGap: true }), held);
  assert.deepEqual(await s.replayAfter('g', `g.${oldest}`, { allowGap: true }), held.slice(1));
  assert.deepEqual(await s.replayAfter('g', 'g.400', { allowGap: true }), []);
  assert.equal(await s.replayAfter('g', 'g.401', { allowGap: true }), undefined);
  assert.equal(await s.replayAfter('g', 'other.0', { allowGap: true }), undefined);
  assert.equal(await s.replayAfter('g', 'g.1-0', { allowGap: true }), undefined);
  assert.equal(await s.replayAfter('unknown', 'unknown.0', { allowGap: true }), undefined);
});
