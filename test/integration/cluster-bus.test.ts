// The replica bus (src/cluster/bus.ts) with two "replicas" in one process, each with its own Redis
// connections to a real redis-server: leases, forwarding and answers, errors, bounds, owner gone.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';
import { createClusterRedis, type ClusterRedis } from '../../src/cluster/redis.js';
import { createClusterBus, defaultReplicaId, type ClusterBus, type ClusterBusOptions } from '../../src/cluster/bus.js';
import { recordingLog, startRedis } from '../helpers/redis.js';

type T = { after(fn: () => void | Promise<void>): void };

async function connect(t: T, url: string): Promise<ClusterRedis> {
  const r = createClusterRedis({ url, log: recordingLog().log, reconnectBaseMs: 20, reconnectMaxMs: 200 });
  t.after(() => r.destroy());
  assert.equal(await r.waitUntilUp(10_000), true);
  return r;
}

async function replica(t: T, url: string, replicaId: string, opts: Partial<ClusterBusOptions> = {}): Promise<{ bus: ClusterBus; redis: ClusterRedis }> {
  const redis = await connect(t, url);
  const bus = await createClusterBus({ redis, replicaId, log: recordingLog().log, ...opts });
  t.after(() => bus.close().catch(() => {}));
  return { bus, redis };
}

async function errorOf(p: Promise<unknown>): Promise<{ code: string; message: string; status: number; data?: unknown }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SwitchyardError) return { code: err.code, message: err.message, status: err.status, ...(err.data ? { data: err.data } : {}) };
    return { code: 'not a SwitchyardError', message: String(err), status: 0 };
  }
  return { code: 'resolved', message: '', status: 0 };
}

test('forward reaches the other replica and returns its answer', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a');
  const b = await replica(t, redis.url, 'replica-b');
  const seen: Array<[unknown, string]> = [];
  b.bus.onForward((msg, from) => {
    seen.push([msg, from]);
    return { ok: true, kind: msg.kind, n: (msg.n as number) + 1 };
  });
  assert.deepEqual(await a.bus.forward('replica-b', { kind: 'sse.write', n: 41, data: { jsonrpc: '2.0', method: 'notifications/message' } }), {
    ok: true,
    kind: 'sse.write',
    n: 42,
  });
  assert.deepEqual(seen, [[{ kind: 'sse.write', n: 41, data: { jsonrpc: '2.0', method: 'notifications/message' } }, 'replica-a']]);
  // Many at once: each answer finds its own caller.
  const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => a.bus.forward('replica-b', { kind: 'x', n: i })));
  assert.deepEqual(
    answers,
    Array.from({ length: 50 }, (_, i) => ({ ok: true, kind: 'x', n: i + 1 })),
  );
});

test('leases: one owner at a time, renewable by its holder, released only by it, expiring on their own; keys hashed', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a');
  const b = await replica(t, redis.url, 'replica-b');
  const key = 'http-sse:v1.k1.secret-session-id';
  assert.equal(await a.bus.ownerOf(key), undefined);
  assert.equal(await a.bus.claim(key, 60_000), true);
  assert.equal(await b.bus.claim(key, 60_000), false);
  assert.equal(await b.bus.ownerOf(key), 'replica-a');
  assert.equal(await b.bus.release(key), false);
  assert.equal(await a.bus.claim(key, 30_000), true);
  const keys = (await a.redis.command(['KEYS', 'swy:own:*'])) as string[];
  assert.equal(keys.length, 1);
  assert.match(keys[0], /^swy:own:[A-Za-z0-9_-]{22}$/);
  assert.equal(keys[0].includes('secret'), false);
  const ttl = Number(await a.redis.command(['PTTL', keys[0]]));
  assert.ok(ttl > 0 && ttl <= 30_000, String(ttl));
  assert.equal(await a.bus.release(key), true);
  assert.equal(await a.bus.ownerOf(key), undefined);
  assert.equal(await b.bus.claim(key, 20), true);
  // A lapsed lease (its holder died without releasing) is free for another replica.
  while ((await a.bus.ownerOf(key)) !== undefined) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(await a.bus.claim(key, 60_000), true);
  assert.deepEqual(await errorOf(a.bus.claim(key, 0)), {
    code: 'SWY_ERR_INTERNAL_FAULT',
    message: 'Internal error: claim: ttlMs must be an integer from 1 ms to 24 h',
    status: 500,
  });
});

test('errors thrown by the handler come back with their catalogue code; others as internal faults', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a');
  const b = await replica(t, redis.url, 'replica-b');
  b.bus.onForward((msg) => {
    if (msg.kind === 'gone') throw new SwitchyardError('SWY_ERR_SESSION_NOT_FOUND', { detail: 'stream closed', data: { sessionId: 'x' } });
    throw new Error('boom with internals');
  });
  assert.deepEqual(await errorOf(a.bus.forward('replica-b', { kind: 'gone' })), {
    code: 'SWY_ERR_SESSION_NOT_FOUND',
    message: 'Session not found: stream closed',
    status: 404,
    data: { sessionId: 'x' },
  });
  assert.deepEqual(await errorOf(a.bus.forward('replica-b', { kind: 'other' })), { code: 'SWY_ERR_INTERNAL_FAULT', message: 'Internal error', status: 500 });
});

test('owner gone: a closed or crashed replica, or one that never was, fails at once with SWY_ERR_CLUSTER_OWNER_GONE', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a', { forwardTimeoutMs: 60_000 });
  const b = await replica(t, redis.url, 'replica-b');
  const c = await replica(t, redis.url, 'replica-c');
  b.bus.onForward(() => 'b');
  c.bus.onForward(() => 'c');
  assert.equal(await a.bus.forward('replica-b', { kind: 'k' }), 'b');
  await b.bus.close();
  // A minute of timeout: each of these must fail without waiting for it.
  assert.deepEqual(await errorOf(a.bus.forward('replica-b', { kind: 'k' })), {
    code: 'SWY_ERR_CLUSTER_OWNER_GONE',
    message: 'The replica holding this session, stream or call is gone: no replica replica-b is listening',
    status: 503,
  });
  // A crash: its connections drop without unsubscribing. Redis drops the subscription when it reads
  // the close, which can come after our next PUBLISH (CI once saw that PUBLISH count the dead
  // subscriber, and the forward wait for its timeout): wait until Redis has seen it.
  c.redis.destroy();
  const deadline = Date.now() + 10_000;
  for (;;) {
    const numsub = (await a.redis.command(['PUBSUB', 'NUMSUB', 'swy:bus:replica-c'])) as [string, number];
    if (Number(numsub[1]) === 0) break;
    assert.ok(Date.now() < deadline, 'Redis still counts the destroyed replica as subscribed after 10 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.equal((await errorOf(a.bus.forward('replica-c', { kind: 'k' }))).code, 'SWY_ERR_CLUSTER_OWNER_GONE');
  assert.equal((await errorOf(a.bus.forward('replica-zzz', { kind: 'k' }))).code, 'SWY_ERR_CLUSTER_OWNER_GONE');
  assert.equal((await errorOf(a.bus.forward('not a replica id', { kind: 'k' }))).code, 'SWY_ERR_CLUSTER_OWNER_GONE');
});

test('an owner that listens but never answers: SWY_ERR_CLUSTER_FORWARD_TIMEOUT; a late answer is dropped', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a', { forwardTimeoutMs: 200 });
  const b = await replica(t, redis.url, 'replica-b');
  let release: (v: string) => void = () => {};
  b.bus.onForward(() => new Promise<string>((resolve) => (release = resolve)));
  assert.deepEqual(await errorOf(a.bus.forward('replica-b', { kind: 'slow' })), {
    code: 'SWY_ERR_CLUSTER_FORWARD_TIMEOUT',
    message: 'The replica holding this session, stream or call did not answer in time: no answer from replica-b within 200 ms',
    status: 504,
  });
  release('late');
  b.bus.onForward(() => 'fresh');
  assert.equal(await a.bus.forward('replica-b', { kind: 'next' }), 'fresh');
});

test('a replica without a handler answers SWY_ERR_CLUSTER_OWNER_GONE', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a');
  await replica(t, redis.url, 'replica-b');
  assert.deepEqual(await errorOf(a.bus.forward('replica-b', { kind: 'k' })), {
    code: 'SWY_ERR_CLUSTER_OWNER_GONE',
    message: 'The replica holding this session, stream or call is gone: that replica handles no forwarded messages',
    status: 503,
  });
});

test('bounds: message size at the limit and one byte over, answer size, forwards being handled by the owner', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a', { maxMessageBytes: 200, forwardTimeoutMs: 10_000 });
  const b = await replica(t, redis.url, 'replica-b', { maxMessageBytes: 200, maxPendingForwards: 1 });
  const releases: Array<() => void> = [];
  b.bus.onForward((msg) => {
    if (msg.kind === 'big-answer') return 'y'.repeat(300);
    if (msg.kind === 'hold') return new Promise<string>((resolve) => releases.push(() => resolve('held')));
    return 'small';
  });
  // The envelope: message ids are "<8 characters>.<n>", 10 characters for the first nine forwards.
  const envelope = JSON.stringify({ t: 'req', id: '12345678.1', from: 'replica-a', msg: { kind: 'k', s: '' } }).length;
  const fits = 200 - envelope;
  assert.equal(await a.bus.forward('replica-b', { kind: 'k', s: 'x'.repeat(fits) }), 'small');
  assert.deepEqual(await errorOf(a.bus.forward('replica-b', { kind: 'k', s: 'x'.repeat(fits + 1) })), {
    code: 'SWY_ERR_CLUSTER_MESSAGE_TOO_LARGE',
    message: 'Message too large to pass between replicas: 201 bytes, limit 200',
    status: 500,
  });
  assert.deepEqual(await errorOf(a.bus.forward('replica-b', { kind: 'big-answer' })), {
    code: 'SWY_ERR_CLUSTER_MESSAGE_TOO_LARGE',
    message: 'Message too large to pass between replicas: 350 bytes, limit 200',
    status: 500,
  });
  // B handles one forwarded message at a time: while the first is held, B refuses the second.
  const first = a.bus.forward('replica-b', { kind: 'hold' });
  while (releases.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.deepEqual(await errorOf(a.bus.forward('replica-b', { kind: 'hold' })), {
    code: 'SWY_ERR_CLUSTER_FORWARD_LIMIT',
    message: 'Too many messages in flight between replicas',
    status: 503,
  });
  releases[0]();
  assert.equal(await first, 'held');
  assert.equal(await a.bus.forward('replica-b', { kind: 'k' }), 'small');
});

test('at most maxPendingForwards wait for answers; the next is refused at once', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a', { maxPendingForwards: 2, forwardTimeoutMs: 10_000 });
  const b = await replica(t, redis.url, 'replica-b');
  const releases: Array<() => void> = [];
  b.bus.onForward(() => new Promise<string>((resolve) => releases.push(() => resolve('ok'))));
  const p1 = a.bus.forward('replica-b', { kind: 'hold' });
  const p2 = a.bus.forward('replica-b', { kind: 'hold' });
  assert.deepEqual(await errorOf(a.bus.forward('replica-b', { kind: 'hold' })), {
    code: 'SWY_ERR_CLUSTER_FORWARD_LIMIT',
    message: 'Too many messages in flight between replicas',
    status: 503,
  });
  while (releases.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
  for (const r of releases) r();
  assert.deepEqual(await Promise.all([p1, p2]), ['ok', 'ok']);
});

test('garbage on a replica channel is dropped; the replica keeps answering', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a');
  const b = await replica(t, redis.url, 'replica-b');
  b.bus.onForward(() => 'fine');
  for (const junk of [
    '',
    'not json',
    'null',
    '[]',
    '{"t":"req"}',
    '{"t":"req","id":"1","from":"bad id!","msg":{"kind":"k"}}',
    '{"t":"req","id":"1","from":"replica-a","msg":{"nokind":1}}',
    '{"t":"res","id":"unknown","ok":true,"value":1}',
  ])
    await a.redis.publish('swy:bus:replica-b', junk);
  assert.equal(await a.bus.forward('replica-b', { kind: 'k' }), 'fine');
});

test('forward to this replica itself runs the local handler with the same semantics', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a');
  const msg = { kind: 'self', list: [1, 2] };
  a.bus.onForward((m, from) => {
    assert.notEqual(m, msg);
    return { from, got: m };
  });
  assert.deepEqual(await a.bus.forward('replica-a', msg), { from: 'replica-a', got: { kind: 'self', list: [1, 2] } });
  a.bus.onForward(() => {
    throw new TypeError('local bug');
  });
  assert.equal((await errorOf(a.bus.forward('replica-a', msg))).code, 'SWY_ERR_INTERNAL_FAULT');
});

test('Redis down: claim, ownerOf and forward fail with SWY_ERR_CLUSTER_UNAVAILABLE; afterwards forwarding works again', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a');
  const b = await replica(t, redis.url, 'replica-b');
  b.bus.onForward(() => 'back');
  const downA = new Promise<void>((resolve) => a.redis.onStatus((s) => s.state === 'down' && resolve()));
  await redis.kill();
  await downA;
  for (const p of [a.bus.claim('k', 1000), a.bus.ownerOf('k'), a.bus.release('k'), a.bus.forward('replica-b', { kind: 'k' })])
    assert.equal((await errorOf(p)).code, 'SWY_ERR_CLUSTER_UNAVAILABLE');
  await redis.restart();
  assert.equal(await a.redis.waitUntilUp(10_000), true);
  assert.equal(await b.redis.waitUntilUp(10_000), true);
  // B's subscription is renewed when its pub/sub connection is back; wait until Redis counts it.
  while (Number(((await a.redis.command(['PUBSUB', 'NUMSUB', 'swy:bus:replica-b'])) as [string, number])[1]) === 0)
    await new Promise((resolve) => setTimeout(resolve, 10));
  while (Number(((await a.redis.command(['PUBSUB', 'NUMSUB', 'swy:bus:replica-a'])) as [string, number])[1]) === 0)
    await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(await a.bus.forward('replica-b', { kind: 'k' }), 'back');
});

test('close() fails forwards still waiting with SWY_ERR_ADMISSION_SHUTTING_DOWN; bad replica ids are refused', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a', { forwardTimeoutMs: 600_000 });
  const b = await replica(t, redis.url, 'replica-b');
  b.bus.onForward(() => new Promise(() => {}));
  const waiting = a.bus.forward('replica-b', { kind: 'hold' });
  await a.bus.close();
  assert.equal((await errorOf(waiting)).code, 'SWY_ERR_ADMISSION_SHUTTING_DOWN');
  assert.equal((await errorOf(a.bus.forward('replica-b', { kind: 'k' }))).code, 'SWY_ERR_ADMISSION_SHUTTING_DOWN');
  const r = await connect(t, redis.url);
  for (const id of ['', 'has space', 'x'.repeat(65), 'ü'])
    assert.equal((await errorOf(createClusterBus({ redis: r, replicaId: id, log: recordingLog().log }))).code, 'SWY_ERR_CONFIG_INVALID');
  assert.match(defaultReplicaId(), /^[A-Za-z0-9._-]{1,48}-[0-9a-f]{8}$/);
});

test('notify: delivered in the order sent, its result dropped; false when nobody listens on that id', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a');
  const b = await replica(t, redis.url, 'replica-b');
  const seen: Array<[number, string]> = [];
  b.bus.onForward((msg, from) => {
    seen.push([msg.n as number, from]);
    return 'ignored';
  });
  const sent = await Promise.all(Array.from({ length: 20 }, (_, n) => a.bus.notify('replica-b', { kind: 'call.event', n })));
  assert.deepEqual(sent, Array(20).fill(true));
  // A forward sent after the notes is answered after they were all handled (one connection, one order).
  await a.bus.forward('replica-b', { kind: 'barrier', n: 99 });
  assert.deepEqual(seen, [...Array.from({ length: 20 }, (_, n) => [n, 'replica-a']), [99, 'replica-a']]);
  assert.equal(await a.bus.notify('replica-nobody', { kind: 'call.event', n: 1 }), false);
  assert.equal(await a.bus.notify('not a replica id', { kind: 'call.event', n: 1 }), false);
  // To itself: the local handler, synchronously with the sender's order.
  const own: number[] = [];
  a.bus.onForward((msg) => own.push(msg.n as number));
  assert.equal(await a.bus.notify('replica-a', { kind: 'k', n: 7 }), true);
  assert.deepEqual(own, [7]);
});

test('broadcast reaches every other replica, not the sender; it can wait for their acknowledgements', async (t) => {
  const redis = await startRedis(t);
  const [a, b, c] = await Promise.all(['replica-a', 'replica-b', 'replica-c'].map((id) => replica(t, redis.url, id)));
  const got: string[] = [];
  for (const [name, r] of [
    ['a', a],
    ['b', b],
    ['c', c],
  ] as const)
    r.bus.onForward((msg, from) => got.push(`${name}<-${from}:${msg.kind}`));
  assert.equal(await a.bus.broadcast({ kind: 's25.end', sd: 'x' }), 0);
  // A forward to each after the broadcast: both notes were handled by then.
  await a.bus.forward('replica-b', { kind: 'barrier' });
  await a.bus.forward('replica-c', { kind: 'barrier' });
  assert.deepEqual(got.filter((g) => g.endsWith('s25.end')).sort(), ['b<-replica-a:s25.end', 'c<-replica-a:s25.end']);
  // Waiting: it returns once both handled it (each acknowledges after its handler), not before.
  got.length = 0;
  b.bus.onForward(async (msg, from) => {
    await new Promise((r) => setTimeout(r, 50));
    got.push(`b<-${from}:${msg.kind}`);
    return null;
  });
  assert.equal(await a.bus.broadcast({ kind: 'end', sd: 'y' }, 5_000), 2);
  assert.deepEqual(got.sort(), ['b<-replica-a:end', 'c<-replica-a:end']);
  // A replica that does not acknowledge in time: the broadcast returns the count it got.
  b.bus.onForward(() => new Promise(() => {}));
  assert.equal(await a.bus.broadcast({ kind: 'end', sd: 'z' }, 200), 1);
});

test('forward with its own timeout; claim takes a lease over only from the holder named', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a', { forwardTimeoutMs: 50 });
  const b = await replica(t, redis.url, 'replica-b');
  b.bus.onForward(async () => {
    await new Promise((r) => setTimeout(r, 200));
    return 'slow but here';
  });
  assert.equal((await errorOf(a.bus.forward('replica-b', { kind: 'x' }))).code, 'SWY_ERR_CLUSTER_FORWARD_TIMEOUT');
  assert.equal(await a.bus.forward('replica-b', { kind: 'x' }, 2_000), 'slow but here');

  assert.equal(await b.bus.claim('get:s1', 60_000), true);
  assert.equal(await a.bus.claim('get:s1', 60_000), false);
  assert.equal(await a.bus.claim('get:s1', 60_000, 'replica-c'), false);
  assert.equal(await b.bus.ownerOf('get:s1'), 'replica-b');
  assert.equal(await a.bus.claim('get:s1', 60_000, 'replica-b'), true);
  assert.equal(await b.bus.ownerOf('get:s1'), 'replica-a');
  assert.equal(await b.bus.claim('get:s1', 60_000), false);
});

/** Makes `bus` take every forwarded message and never answer; resolves when it took the first. */
function takesAndNeverAnswers(bus: ClusterBus): Promise<void> {
  return new Promise<void>((received) => {
    bus.onForward(() => {
      received();
      return new Promise<string>(() => {});
    });
  });
}

/** What a forward to replica-b gets once b stopped listening without answering it (the owner check). */
const B_GONE = {
  code: 'SWY_ERR_CLUSTER_OWNER_GONE',
  message: 'The replica holding this session, stream or call is gone: replica replica-b stopped listening before it answered',
  status: 503,
};

test('a long forward to a replica that crashes before answering fails with SWY_ERR_CLUSTER_OWNER_GONE, not at its deadline', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a', { forwardTimeoutMs: 200 });
  const b = await replica(t, redis.url, 'replica-b');
  // The owner takes the message (Redis counted it as a receiver) and crashes before answering.
  const got = takesAndNeverAnswers(b.bus);
  const started = Date.now();
  const waiting = errorOf(a.bus.forward('replica-b', { kind: 'resume' }, 60_000));
  await got;
  b.redis.destroy();
  assert.deepEqual(await waiting, B_GONE);
  assert.ok(Date.now() - started < 10_000, `failed after ${Date.now() - started} ms, not at the 60 s deadline`);
});

test('a forward of the default timeout to a replica that crashes before answering fails with SWY_ERR_CLUSTER_OWNER_GONE at the first owner check', async (t) => {
  const redis = await startRedis(t);
  // A minute of forward timeout and a 100 ms first check: the old every-forwardTimeoutMs watch
  // (long forwards only) would have let this one wait the whole minute.
  const a = await replica(t, redis.url, 'replica-a', { forwardTimeoutMs: 60_000, ownerCheckMs: 100 });
  const b = await replica(t, redis.url, 'replica-b');
  const c = await replica(t, redis.url, 'replica-c');
  const got = takesAndNeverAnswers(b.bus);
  // A second target that listens and answers late: not failed by the sweep that fails b's.
  c.bus.onForward(async () => {
    await new Promise((r) => setTimeout(r, 600));
    return 'late but here';
  });
  const started = Date.now();
  const waiting = errorOf(a.bus.forward('replica-b', { kind: 'k' }));
  const slow = a.bus.forward('replica-c', { kind: 'k' });
  await got;
  b.redis.destroy();
  assert.deepEqual(await waiting, B_GONE);
  assert.ok(Date.now() - started < 30_000, `failed after ${Date.now() - started} ms, not at the 60 s timeout`);
  assert.equal(await slow, 'late but here');
});

test('an owner that listens past the first owner check but never answers still gets SWY_ERR_CLUSTER_FORWARD_TIMEOUT', async (t) => {
  const redis = await startRedis(t);
  const a = await replica(t, redis.url, 'replica-a', { forwardTimeoutMs: 400, ownerCheckMs: 50 });
  const b = await replica(t, redis.url, 'replica-b');
  b.bus.onForward(() => new Promise<string>(() => {}));
  assert.deepEqual(await errorOf(a.bus.forward('replica-b', { kind: 'k' })), {
    code: 'SWY_ERR_CLUSTER_FORWARD_TIMEOUT',
    message: 'The replica holding this session, stream or call did not answer in time: no answer from replica-b within 400 ms',
    status: 504,
  });
});
