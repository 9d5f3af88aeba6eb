// A new-user trial of the library as replicas: two `createSwitchyard` instances sharing one Redis
// and one cluster key. The first request an instance served after its (lazy) assembly was answered
// 503 `Cluster state store unavailable` (SWY_ERR_CLUSTER_UNAVAILABLE): the assembly opened the
// Redis connection and went on without waiting for it, so a 2025 session opened on the other
// instance was refused by this one until the connection, a moment later, was up (the official v1
// client's `notifications/initialized` landing on the second instance failed its connect). Now
// the cluster waits for its first connection attempt (bounded by the connect timeout) before it
// serves; a Redis that is down still lets the instance start (docs/scaling.md, Readiness).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startRedis } from '../helpers/redis.js';
import { modernRequest, switchyard } from '../helpers/library.js';

const ACCEPT = 'application/json, text/event-stream';

/** A 2025-06-18 POST as a web Request to the demo's `/mcp`. */
function post2025(body: Record<string, unknown>, session?: string): Request {
  return new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: ACCEPT,
      ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
    },
    body: JSON.stringify(body),
  });
}

test('the first request a library replica serves finds Redis connected: a session opened on another replica is served', async (t) => {
  const redis = await startRedis(t);
  const key = randomBytes(32).toString('base64');
  const a = switchyard(t, { cluster: { redis: redis.url, key, replicaId: 'a' } });
  const b = switchyard(t, { cluster: { redis: redis.url, key, replicaId: 'b' } });

  const init = await a.fetch(
    post2025({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  );
  assert.equal(init.status, 200);
  const session = init.headers.get('mcp-session-id');
  assert.ok(session, 'initialize names a session');
  await init.text();

  // b has not been used yet: this request assembles it, and is its first.
  const first = await b.fetch(post2025({ jsonrpc: '2.0', method: 'notifications/initialized' }, session));
  assert.equal(first.status, 202, await first.clone().text());
  const list = await b.fetch(post2025({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, session));
  assert.equal(list.status, 200);
  const text = await list.text();
  const body = JSON.parse(text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)![1]) as { id: number; result: { tools: Array<{ name: string }> } };
  assert.equal(body.id, 2);
  assert.ok(body.result.tools.some((tool) => tool.name === 'echo'));
});

test('a library replica whose Redis is down still starts, and answers 503 SWY_ERR_CLUSTER_UNAVAILABLE', async (t) => {
  const redis = await startRedis(t);
  await redis.kill();
  const sy = switchyard(t, { cluster: { redis: redis.url, key: randomBytes(32).toString('base64'), replicaId: 'down' } });
  await sy.ready();
  const init = await sy.fetch(
    post2025({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  );
  assert.equal(init.status, 503);
  assert.equal(init.headers.get('retry-after'), '1');
  assert.deepEqual(await init.json(), { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Cluster state store unavailable' } });
});

/** A 2026-07-28 `tools/call` of the demo's `echo` as a web Request. */
function modernCall(id: number): Request {
  return modernRequest('tools/call', { name: 'echo', arguments: { message: 'm' } }, { id, name: 'echo' });
}

// docs/scaling.md said 2026-07-28 requests go on while Redis is down; one a rate limit counts does
// not: its bucket is in Redis, and the limiter does not fail open (docs/policy.md).
test('Redis down: a 2026-07-28 call is served, unless a rate limit counts it (503, not failing open)', async (t) => {
  const redis = await startRedis(t);
  await redis.kill();
  const cluster = { redis: redis.url, key: randomBytes(32).toString('base64') };
  const plain = switchyard(t, { cluster: { ...cluster, replicaId: 'plain' } });
  const limited = switchyard(t, {
    cluster: { ...cluster, replicaId: 'limited' },
    rateLimits: [{ name: 'per-user', per: 'principal', ratePerSec: 1, burst: 5 }],
  });
  const served = await plain.fetch(modernCall(1));
  assert.equal(served.status, 200);
  assert.deepEqual(((await served.json()) as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: m' }]);
  const refused = await limited.fetch(modernCall(2));
  assert.equal(refused.status, 503);
  assert.deepEqual(await refused.json(), { jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'Cluster state store unavailable' } });
});
