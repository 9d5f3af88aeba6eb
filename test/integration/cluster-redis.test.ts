// The Redis wrapper (src/cluster/redis.ts) against a real redis-server: calls, error mapping,
// scripts, outages (killed, hung, absent at start) with fail-fast calls and recovery.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { SwitchyardError } from '../../src/core/errors.js';
import { createClusterRedis, defineRedisScript, type ClusterRedis, type ClusterRedisOptions, type RedisStatus } from '../../src/cluster/redis.js';
import { recordingLog, startRedis } from '../helpers/redis.js';

function open(t: { after(fn: () => void | Promise<void>): void }, opts: Partial<ClusterRedisOptions> & { url: string }): ClusterRedis {
  const r = createClusterRedis({ log: recordingLog().log, ...opts });
  t.after(() => r.destroy());
  return r;
}

/** Resolves with the next status whose state is `state`. */
function nextState(r: ClusterRedis, state: RedisStatus['state']): Promise<RedisStatus> {
  return new Promise((resolve) => {
    const off = r.onStatus((s) => {
      if (s.state === state) {
        off();
        resolve(s);
      }
    });
  });
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return err instanceof SwitchyardError ? err.code : `not a SwitchyardError: ${String(err)}`;
  }
  return 'resolved';
}

test('commands run with replies decoded; error replies map to the catalogue', async (t) => {
  const redis = await startRedis(t);
  const r = open(t, { url: redis.url });
  assert.equal(await r.waitUntilUp(10_000), true);
  assert.equal(r.status.state, 'up');
  assert.equal(await r.command(['SET', 'a', '1']), 'OK');
  assert.equal(await r.command(['GET', 'a']), '1');
  assert.equal(await r.command(['INCRBY', 'n', '5']), 5);
  assert.equal(await r.command(['GET', 'missing']), null);
  // A malformed command is our bug: -32603, not "unavailable".
  assert.equal(await codeOf(r.command(['XADD'])), 'SWY_ERR_INTERNAL_FAULT');
  assert.equal(await codeOf(r.command(['SET', 'a', '1', 'NOSUCHFLAG'])), 'SWY_ERR_INTERNAL_FAULT');
});

test('evalScript uses EVALSHA and falls back to EVAL when the server lost the script', async (t) => {
  const redis = await startRedis(t);
  const r = open(t, { url: redis.url });
  await r.waitUntilUp(10_000);
  const script = defineRedisScript("return {KEYS[1], ARGV[1], redis.call('INCR', KEYS[1])}");
  assert.deepEqual(await r.evalScript(script, ['k'], ['x']), ['k', 'x', 1]);
  assert.deepEqual(await r.command(['SCRIPT', 'EXISTS', script.sha1]), [1]);
  assert.equal(await r.command(['SCRIPT', 'FLUSH']), 'OK');
  assert.deepEqual(await r.evalScript(script, ['k'], ['y']), ['k', 'y', 2]);
});

// Found in review: every script that succeeded cleared `writesRefused`, but a script can take a
// branch without a write (a lease another replica holds, a revoked session's admission), and a
// full Redis (`OOM`) runs such a script to its end: the flag went off while every write was still
// refused. Now only SET, XADD and a script whose reply says it wrote clear it.
test('writesRefused: a script that succeeded without a write leaves it set; a reply that proves a write clears it', async (t) => {
  const redis = await startRedis(t);
  const r = open(t, { url: redis.url });
  await r.waitUntilUp(10_000);
  const SET_IF = "if ARGV[1] == 'write' then redis.call('SET', KEYS[1], '1') return 1 end return 0";
  const setIf = defineRedisScript(SET_IF, (reply) => reply === 1);
  assert.equal(await r.evalScript(setIf, ['k'], ['write']), 1);
  await r.command(['CONFIG', 'SET', 'maxmemory', '1']);
  assert.equal(await codeOf(r.evalScript(setIf, ['k'], ['write'])), 'SWY_ERR_CLUSTER_UNAVAILABLE');
  assert.match(r.status.writesRefused?.error ?? 'none', /^OOM /);
  // Both succeed under OOM without writing: neither proves that Redis accepts writes.
  assert.equal(await r.evalScript(setIf, ['k'], ['read']), 0);
  assert.equal(await r.evalScript(defineRedisScript("return redis.call('GET', KEYS[1])"), ['k'], []), '1');
  assert.equal(await r.command(['GET', 'k']), '1');
  assert.match(r.status.writesRefused?.error ?? 'none', /^OOM /);
  await r.command(['CONFIG', 'SET', 'maxmemory', '0']);
  assert.equal(await r.evalScript(setIf, ['k'], ['read']), 0);
  assert.match(r.status.writesRefused?.error ?? 'none', /^OOM /);
  assert.equal(await r.evalScript(setIf, ['k'], ['write']), 1);
  assert.equal(r.status.writesRefused, undefined);
});

test('Redis killed: state down with the error, calls fail at once with SWY_ERR_CLUSTER_UNAVAILABLE; restart: up again, subscriptions renewed', async (t) => {
  const redis = await startRedis(t);
  // A call timeout far above the test timeout: a call that waited instead of failing fast would hang the test.
  const r = open(t, { url: redis.url, commandTimeoutMs: 600_000, reconnectBaseMs: 20, reconnectMaxMs: 200 });
  await r.waitUntilUp(10_000);
  const got: string[] = [];
  await r.subscribe('ch', (m) => got.push(m));
  assert.equal(await r.publish('ch', 'before'), 1);
  // PUBLISH answers once Redis has queued the message to the subscriber, not once it arrived: wait
  // for it before the kill, or it may be lost with the connection (a fresh-clone CI run saw ['after']).
  await new Promise<void>((resolve) => {
    const poll = () => (got.includes('before') ? resolve() : setImmediate(poll));
    poll();
  });

  const down = nextState(r, 'down');
  await redis.kill();
  const s = await down;
  assert.equal(s.state, 'down');
  assert.ok(s.lastError instanceof Error);
  assert.equal(r.status.state, 'down');
  for (const call of [r.command(['GET', 'a']), r.publish('ch', 'lost'), r.evalScript(defineRedisScript('return 1'), [], [])]) {
    try {
      await call;
      assert.fail('resolved while down');
    } catch (err) {
      assert.ok(err instanceof SwitchyardError);
      assert.equal(err.code, 'SWY_ERR_CLUSTER_UNAVAILABLE');
      assert.equal(err.status, 503);
      assert.equal(err.rpcCode, -32000);
      assert.deepEqual(err.headers, { 'Retry-After': '1' });
      assert.equal(err.message, 'Cluster state store unavailable');
    }
  }

  const up = nextState(r, 'up');
  await redis.restart();
  assert.equal((await up).state, 'up');
  assert.equal(await r.command(['SET', 'a', 'after']), 'OK');
  assert.equal(await r.command(['GET', 'a']), 'after');
  // The pub/sub connection came back too, and the subscription with it (both are required for "up").
  const arrived = new Promise<void>((resolve) => {
    const poll = () => (got.includes('after') ? resolve() : setImmediate(poll));
    poll();
  });
  assert.equal(await r.publish('ch', 'after'), 1);
  await arrived;
  assert.deepEqual(got, ['before', 'after']);
});

test('Redis hung (SIGSTOP): calls time out with SWY_ERR_CLUSTER_UNAVAILABLE, the connection is then down and calls fail at once; SIGCONT: up again', async (t) => {
  const redis = await startRedis(t);
  const r = open(t, { url: redis.url, commandTimeoutMs: 200, timeoutsBeforeDown: 2, reconnectBaseMs: 20, reconnectMaxMs: 200 });
  await r.waitUntilUp(10_000);
  redis.pause();
  const down = nextState(r, 'down');
  for (let i = 0; i < 2; i++) {
    try {
      await r.command(['GET', 'a']);
      assert.fail('resolved while hung');
    } catch (err) {
      assert.ok(err instanceof SwitchyardError);
      assert.equal(err.code, 'SWY_ERR_CLUSTER_UNAVAILABLE');
      assert.equal(err.message, 'Cluster state store unavailable: redis GET timed out');
    }
  }
  const s = await down;
  assert.equal(s.lastError?.message, 'redis GET timed out after 200 ms');
  // Down: this one fails without waiting for a reply.
  try {
    await r.command(['GET', 'a']);
    assert.fail('resolved while down');
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    assert.equal(err.message, 'Cluster state store unavailable');
  }
  const up = nextState(r, 'up');
  redis.resume();
  await up;
  assert.equal(await r.command(['PING']), 'PONG');
});

test('one connection back brings the other back at once, not at the end of its own backoff (readiness lagged sessions by seconds; found by a trial)', async (t) => {
  const redis = await startRedis(t);
  // A reconnect that failed waits 6 s (no jitter): only a connection made without backoff comes back sooner.
  const r = open(t, { url: redis.url, commandTimeoutMs: 200, timeoutsBeforeDown: 1, reconnectBaseMs: 6_000, reconnectMaxMs: 6_000, random: () => 1 });
  assert.equal(await r.waitUntilUp(10_000), true);
  await r.subscribe('swy:test', () => {});
  // The pub/sub connection is dropped and its immediate reconnect refused: it waits out its backoff.
  assert.equal(await r.command(['CONFIG', 'SET', 'maxclients', '1']), 'OK');
  const down = nextState(r, 'down');
  assert.equal(await r.command(['CLIENT', 'KILL', 'TYPE', 'pubsub']), 1);
  await down;
  const rejected = async () => /^rejected_connections:[1-9]/m.test(String(await r.command(['INFO', 'stats'])));
  const refused = Date.now() + 3_000;
  while (!(await rejected()) && Date.now() < refused) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(await rejected(), true);
  assert.equal(await r.command(['CONFIG', 'SET', 'maxclients', '10000']), 'OK');
  // The command connection hangs and is replaced by a fresh one (no backoff), up once Redis answers again.
  redis.pause();
  assert.equal(await codeOf(r.command(['GET', 'a'])), 'SWY_ERR_CLUSTER_UNAVAILABLE');
  redis.resume();
  // Both up well before the pub/sub connection's own retry, 6 s after it was refused.
  const deadline = Date.now() + 3_000;
  while (r.status.state !== 'up' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(r.status.state, 'up');
  assert.equal(await r.command(['PING']), 'PONG');
});

test('a connection replaced while its TCP connect is pending never comes up later: no second subscriber, no message twice (the "PUBLISH reached 2" flake after a Redis restart)', async (t) => {
  // node-redis's destroy() while a socket is still connecting (a DNS lookup, a slow handshake)
  // leaves that socket to finish connecting: the destroyed client then resubscribed its channels
  // and dispatched every message a second time. Here every connect is held, as a slow lookup would
  // hold it, so the window is wide rather than microseconds.
  const redis = await startRedis(t);
  const r = open(t, { url: redis.url, commandTimeoutMs: 600_000, reconnectBaseMs: 20, reconnectMaxMs: 20, random: () => 1 });
  assert.equal(await r.waitUntilUp(10_000), true);
  const got: string[] = [];
  await r.subscribe('ch', (m) => got.push(m));
  const held: Array<() => void> = [];
  let holding = true;
  const real = net.createConnection;
  (net as { createConnection: unknown }).createConnection = (options: net.NetConnectOpts) => {
    if (!holding) return real(options);
    const socket = new net.Socket();
    held.push(() => socket.connect(options as net.TcpNetConnectOpts));
    return socket;
  };
  t.after(() => {
    (net as { createConnection: unknown }).createConnection = real;
  });
  const down = nextState(r, 'down');
  await redis.kill();
  await down;
  await redis.restart();
  // Both connections wait in a held connect; the first one let through comes up and makes the
  // other start over (retryNow), destroying the client whose connect is still held.
  while (held.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
  const up = nextState(r, 'up');
  held.shift()?.();
  const deadline = Date.now() + 5_000;
  while (held.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  holding = false;
  for (const release of held.splice(0)) release();
  await up;
  // Let any connection that was going to come up do so.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const clients = String(await r.command(['CLIENT', 'LIST']))
    .trim()
    .split('\n');
  assert.equal(clients.length, 2, clients.join('\n'));
  assert.equal(await r.publish('ch', 'once'), 1);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(got, ['once']);
});

test('a SUBSCRIBE that timed out but went through later, then subscribed again, still delivers each message once', async (t) => {
  const redis = await startRedis(t);
  const r = open(t, { url: redis.url, commandTimeoutMs: 200, timeoutsBeforeDown: 3, reconnectBaseMs: 20, reconnectMaxMs: 200 });
  assert.equal(await r.waitUntilUp(10_000), true);
  const got: string[] = [];
  redis.pause();
  // The wrapper gives up after 200 ms; node-redis still waits for the reply and, once it comes, adds the listener.
  assert.equal(await codeOf(r.subscribe('ch', (m) => got.push(`a:${m}`))), 'SWY_ERR_CLUSTER_UNAVAILABLE');
  redis.resume();
  while (Number(((await r.command(['PUBSUB', 'NUMSUB', 'ch'])) as [string, number])[1]) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  // A second listener on the same channel: the channel is not confirmed yet, so SUBSCRIBE is sent again.
  await r.subscribe('ch', (m) => got.push(`b:${m}`));
  assert.equal(await r.publish('ch', 'x'), 1);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(got.sort(), ['a:x', 'b:x']);
});

test('a channel unsubscribed after its SUBSCRIBE timed out but went through is gone from Redis; subscribed again, each message comes once', async (t) => {
  const redis = await startRedis(t);
  const r = open(t, { url: redis.url, commandTimeoutMs: 200, timeoutsBeforeDown: 3, reconnectBaseMs: 20, reconnectMaxMs: 200 });
  assert.equal(await r.waitUntilUp(10_000), true);
  const numsub = async () => Number(((await r.command(['PUBSUB', 'NUMSUB', 'ch'])) as [string, number])[1]);
  const got: string[] = [];
  redis.pause();
  assert.equal(await codeOf(r.subscribe('ch', (m) => got.push(`a:${m}`))), 'SWY_ERR_CLUSTER_UNAVAILABLE');
  redis.resume();
  while ((await numsub()) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  await r.unsubscribe('ch');
  assert.equal(await numsub(), 0, 'the late SUBSCRIBE is undone');
  await r.subscribe('ch', (m) => got.push(`c:${m}`));
  assert.equal(await r.publish('ch', 'y'), 1);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(got, ['c:y']);
});

test('Redis absent at start: down, calls fail at once; it appears: up', async (t) => {
  const redis = await startRedis(t);
  await redis.kill();
  const r = open(t, { url: redis.url, commandTimeoutMs: 600_000, reconnectBaseMs: 20, reconnectMaxMs: 200 });
  assert.equal(r.status.state, 'down');
  assert.equal(await codeOf(r.command(['PING'])), 'SWY_ERR_CLUSTER_UNAVAILABLE');
  // Subscribing while down registers; the subscription starts with the connection.
  const got: string[] = [];
  await r.subscribe('ch', (m) => got.push(m));
  const up = nextState(r, 'up');
  await redis.restart();
  await up;
  assert.equal(await r.command(['PING']), 'PONG');
  let receivers = 0;
  // The SUBSCRIBE is sent once the connection is up; wait for Redis to count it.
  while (receivers === 0) {
    receivers = Number(((await r.command(['PUBSUB', 'NUMSUB', 'ch'])) as [string, number])[1]);
    if (receivers === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(await r.publish('ch', 'hello'), 1);
  while (got.length === 0) await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(got, ['hello']);
});

test('a Redis that refuses from the start (wrong password) is said once at warn, with its error, and the status carries it (found by a trial)', async (t) => {
  const redis = await startRedis(t, ['--requirepass', 'right-secret']);
  const { log, records } = recordingLog();
  const r = createClusterRedis({ url: `redis://default:WrongPw-secret@127.0.0.1:${redis.port}`, log, reconnectBaseMs: 20, reconnectMaxMs: 100 });
  t.after(() => r.destroy());
  for (let i = 0; i < 200 && r.status.lastError === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(r.status.state, 'down');
  assert.match(String(r.status.lastError?.message), /WRONGPASS|invalid username-password/i);
  // Several retries later, still one warning.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const downs = records.filter((x) => x.msg === 'cluster redis down');
  assert.equal(downs.length, 1, JSON.stringify(records.map((x) => x.msg)));
  assert.equal(downs[0].level, 40, 'warn');
  assert.doesNotMatch(JSON.stringify(records), /WrongPw-secret/);
});

test('the password in the URL never reaches the log', async (t) => {
  const redis = await startRedis(t, ['--requirepass', 'hunter2-secret']);
  const { log, records } = recordingLog();
  const url = `redis://default:hunter2-secret@127.0.0.1:${redis.port}`;
  const r = createClusterRedis({ url, log, reconnectBaseMs: 20, reconnectMaxMs: 200 });
  t.after(() => r.destroy());
  await r.waitUntilUp(10_000);
  const down = nextState(r, 'down');
  await redis.kill();
  await down;
  const up = nextState(r, 'up');
  await redis.restart();
  await up;
  await r.close();
  const text = JSON.stringify(records);
  assert.ok(records.some((x) => x.msg === 'cluster redis down'));
  assert.ok(records.some((x) => x.msg === 'cluster redis up' && x.redis === `redis://127.0.0.1:${redis.port}`));
  assert.equal(text.includes('hunter2'), false);
});

test('a URL that is not redis:// is a configuration error', () => {
  for (const url of ['http://127.0.0.1:6379', 'not a url', '']) {
    try {
      createClusterRedis({ url, log: recordingLog().log });
      assert.fail('accepted');
    } catch (err) {
      assert.ok(err instanceof SwitchyardError);
      assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
    }
  }
});

test('close() lets a call finish, then later calls fail with SWY_ERR_CLUSTER_UNAVAILABLE', async (t) => {
  const redis = await startRedis(t);
  const r = open(t, { url: redis.url });
  await r.waitUntilUp(10_000);
  const inFlight = r.command(['SET', 'x', '1']);
  await r.close();
  assert.equal(await inFlight, 'OK');
  assert.equal(r.status.state, 'down');
  assert.equal(await codeOf(r.command(['GET', 'x'])), 'SWY_ERR_CLUSTER_UNAVAILABLE');
});

test('while Redis stays down, the status takes the present cause: a refused password, then nothing listening (left open by a trial: /readyz kept the first error)', async (t) => {
  const redis = await startRedis(t, ['--requirepass', 'right-secret']);
  const { log, records } = recordingLog();
  const r = createClusterRedis({ url: `redis://default:WrongPw-secret@127.0.0.1:${redis.port}`, log, reconnectBaseMs: 20, reconnectMaxMs: 100 });
  t.after(() => r.destroy());
  for (let i = 0; i < 200 && r.status.lastError === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.match(String(r.status.lastError?.message), /WRONGPASS|invalid username-password/i);
  const since = r.status.sinceMs;
  await redis.kill();
  for (let i = 0; i < 300 && !/ECONNREFUSED/.test(String(r.status.lastError?.message)); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.match(String(r.status.lastError?.message), /ECONNREFUSED/);
  // Still the same outage: its start and its one warning stay.
  assert.equal(r.status.state, 'down');
  assert.equal(r.status.sinceMs, since);
  assert.equal(records.filter((x) => x.msg === 'cluster redis down').length, 1);
});

test('a wrapper destroyed while its connections are still connecting leaves no connection open (node-redis 6.3 connects a client destroyed mid-connect; the flaky double delivery after a Redis restart)', async (t) => {
  const redis = await startRedis(t);
  const probe = open(t, { url: redis.url });
  await probe.waitUntilUp(10_000);
  const clients = async () => Number(/connected_clients:(\d+)/.exec(String(await probe.command(['INFO', 'clients'])))?.[1]);
  assert.equal(await clients(), 2, 'the probe: its command and subscriber connections');
  for (let i = 0; i < 5; i++) {
    // Destroyed in the same turn it began to connect: both sockets are still being opened.
    createClusterRedis({ url: redis.url, log: recordingLog().log }).destroy();
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(await clients(), 2, 'no connection of a destroyed wrapper is left open');
});
