// Found by a trial (three replicas behind nginx): an HTTP+SSE POST forwarded to the stream's
// replica a few ms after that replica was SIGKILLed waited the whole forward timeout (5 s) for
// 504 SWY_ERR_CLUSTER_FORWARD_TIMEOUT, since Redis still counted the dead replica's subscription
// when PUBLISH ran and the message was lost; only forwards allowed to wait longer than the
// timeout were watched. Every unanswered forward is now checked (PUBSUB NUMSUB) after the bus's
// first owner check (250 ms): the client gets 503 SWY_ERR_CLUSTER_OWNER_GONE, and a 2025 GET
// stream opened on another replica is taken over from the dead one instead of 504 after 5 s.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClusterRedis } from '../../src/cluster/redis.js';
import { initSession, openHttpSseSession, openSse, send } from '../helpers/http.js';
import { recordingLog, startRedis } from '../helpers/redis.js';
import { EVERYTHING_UPSTREAMS, everythingReplicaConfig, spawnReplica, startReplica, type ReplicaProcess } from '../helpers/replicas.js';

/**
 * Stops `owner` (SIGSTOP: it reads nothing but Redis still counts its subscription), runs
 * `forward` (a request to another replica that forwards a message to `owner`), waits until that
 * message is published on `owner`'s channel (seen by a subscriber of this test, which then
 * leaves), and SIGKILLs `owner`: the message is lost exactly as in the trial's race. Resolves
 * with what `forward` resolved with and how long it took, ms.
 */
async function forwardAsOwnerDies<R>(
  t: { after(fn: () => void): void },
  redisUrl: string,
  owner: ReplicaProcess,
  forward: () => Promise<R>,
): Promise<{ result: R; tookMs: number }> {
  const watcher = createClusterRedis({ url: redisUrl, log: recordingLog().log, reconnectBaseMs: 20, reconnectMaxMs: 200 });
  t.after(() => watcher.destroy());
  assert.equal(await watcher.waitUntilUp(10_000), true);
  let published!: () => void;
  const seen = new Promise<void>((resolve) => (published = resolve));
  await watcher.subscribe(`swy:bus:${owner.id}`, (text) => {
    if ((JSON.parse(text) as { t?: string }).t === 'req') published();
  });
  owner.child.kill('SIGSTOP');
  const started = Date.now();
  const answered = forward();
  await seen;
  await watcher.unsubscribe(`swy:bus:${owner.id}`);
  await owner.kill('SIGKILL');
  const result = await answered;
  return { result, tookMs: Date.now() - started };
}

test(
  'an HTTP+SSE POST forwarded to its stream replica just as it is SIGKILLed (PUBLISH counted it): 503 OWNER_GONE, not 504 after the 5 s forward timeout',
  { timeout: 60_000 },
  async (t) => {
    const redis = await startRedis(t);
    const configFile = everythingReplicaConfig(t, 'swy-forward-killed-', { legacySse: true });
    const r1 = await spawnReplica(t, { id: 'r1', configFile, redis: redis.url });
    const r2 = await startReplica(t, { id: 'r2', redis: redis.url, config: { upstreams: EVERYTHING_UPSTREAMS } });
    const session = await openHttpSseSession(t, `${r1.origin}/ev`);

    const elsewhere = session.to.replace(r1.origin, r2.origin);
    const { result: r, tookMs } = await forwardAsOwnerDies(t, redis.url, r1, () =>
      send(elsewhere, 'POST', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), { 'content-type': 'application/json' }),
    );
    assert.equal(r.status, 503, r.text);
    assert.deepEqual(JSON.parse(r.text), {
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32000, message: 'The replica holding this session, stream or call is gone: replica r1 stopped listening before it answered' },
    });
    // Generous: the point is that it did not wait for the forward timeout (5,000 ms).
    assert.ok(tookMs < 4_000, `answered after ${tookMs} ms`);
  },
);

test(
  "a 2025 GET stream opened on another replica just as the stream's replica is SIGKILLed: taken over (200), not 504 after the 5 s forward timeout",
  { timeout: 60_000 },
  async (t) => {
    const redis = await startRedis(t);
    const configFile = everythingReplicaConfig(t, 'swy-get-killed-');
    const r1 = await spawnReplica(t, { id: 'r1', configFile, redis: redis.url });
    const r2 = await startReplica(t, { id: 'r2', redis: redis.url, config: { upstreams: EVERYTHING_UPSTREAMS } });
    const h = await initSession(`${r1.origin}/ev/mcp`);
    const g = { accept: 'text/event-stream', 'mcp-session-id': h['mcp-session-id'], 'mcp-protocol-version': '2025-06-18' };
    const first = await openSse(`${r1.origin}/ev/mcp`, 'GET', g);
    t.after(() => first.close());
    assert.equal(first.status, 200);

    // r2 asks r1 whether its GET stream is still attached (the lease is r1's) as r1 dies.
    const { result: second, tookMs } = await forwardAsOwnerDies(t, redis.url, r1, () => openSse(`${r2.origin}/ev/mcp`, 'GET', g));
    t.after(() => second.close());
    assert.equal(second.status, 200, second.raw());
    assert.equal(second.headers['content-type'], 'text/event-stream');
    // Generous: the point is that it did not wait for the forward timeout (5,000 ms).
    assert.ok(tookMs < 4_000, `opened after ${tookMs} ms`);
  },
);
