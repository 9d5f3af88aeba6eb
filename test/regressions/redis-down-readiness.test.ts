// Redis shared by every replica made each one's /readyz 503 while it was down, so an orchestrator
// took every replica out of rotation at once, although 2026-07-28 requests need no Redis and were
// still served (found by a trial with three replicas behind nginx). Redis down is now `degraded`:
// /readyz stays 200 and names it, /status.json too; `cluster.readinessRequiresRedis` restores the 503.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { H2025, modernBody, modernHeaders, post } from '../helpers/http.js';
import { configGateway, getText } from '../helpers/ops.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { CLUSTER_KEY, until } from '../helpers/replicas.js';

type Ready = { ready: boolean; reasons: string[]; degraded?: string[] };

async function replica(t: { after(fn: () => Promise<void>): void }, redis: TestRedis, cluster: Record<string, unknown> = {}) {
  const gw = await configGateway(
    t,
    { admin: { port: 0 }, cluster: { redis: redis.url, key: CLUSTER_KEY, replicaId: 'solo', ...cluster } },
    { operations: true, clusterOptions: { redisOptions: { reconnectBaseMs: 20, reconnectMaxMs: 200 } } },
  );
  await until(() => gw.cluster.status().redis === 'up', 'the replica to reach Redis');
  const admin = gw.admin!.address().url;
  return { gw, admin, readyz: async () => getText(`${admin}readyz`).then((r) => ({ status: r.status, json: r.json as Ready })) };
}

const echo = (url: string, message: string) =>
  post(url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message } }), modernHeaders('tools/call', 'echo'));

test('Redis down: /readyz stays 200 and names it under degraded, /status.json too, 2026-07-28 calls are served; back up, it clears', async (t) => {
  const redis = await startRedis(t);
  const { gw, admin, readyz } = await replica(t, redis);
  assert.deepEqual(await readyz(), { status: 200, json: { ready: true, reasons: [] } });

  await redis.kill();
  await until(() => gw.cluster.status().redis === 'down', 'the replica to see Redis down');
  const down = await readyz();
  assert.equal(down.status, 200);
  assert.deepEqual(Object.keys(down.json), ['ready', 'reasons', 'degraded']);
  assert.equal(down.json.ready, true);
  assert.deepEqual(down.json.reasons, []);
  assert.equal(down.json.degraded?.length, 1);
  assert.match(down.json.degraded[0], /^cluster: redis down \(.+\)$/);
  const status = (await getText(`${admin}status.json`)).json as Ready;
  // The same reason, whose last error may have moved on meanwhile (a reconnect attempt's
  // `connect ECONNREFUSED` after the first `read ECONNRESET`; seen under load in CI).
  assert.deepEqual([status.ready, status.reasons, status.degraded?.length], [true, [], 1]);
  assert.match(status.degraded![0], /^cluster: redis down \(.+\)$/);

  // What needs no Redis is served, which is why the replica stays in rotation.
  const call = await echo(gw.url, 'no redis');
  assert.equal(call.status, 200);
  assert.deepEqual((call.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: no redis' }]);
  // What needs it still fails closed, retryably.
  const opening = await post(
    gw.url,
    { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    { ...H2025 },
  );
  assert.equal(opening.status, 503);
  assert.equal(opening.headers['retry-after'], '1');
  // ... and counted: the metrics keep the outage visible while /readyz stays 200.
  const metrics = (await getText(`${admin}metrics`)).text;
  assert.match(metrics, /^switchyard_refusals_total\{code="SWY_ERR_CLUSTER_UNAVAILABLE",mount="default",dialect="2025-03-26"\} 1$/m);

  await redis.restart();
  await until(async () => (await readyz()).json.degraded === undefined, 'degraded to clear');
  assert.deepEqual(await readyz(), { status: 200, json: { ready: true, reasons: [] } });
  assert.deepEqual(((await getText(`${admin}status.json`)).json as Ready).degraded, []);
  assert.equal(gw.cluster.status().redis, 'up');
});

test('cluster.readinessRequiresRedis: Redis down makes /readyz 503 with it as the reason, as before', async (t) => {
  const redis = await startRedis(t);
  const { gw, readyz } = await replica(t, redis, { readinessRequiresRedis: true });
  assert.deepEqual(await readyz(), { status: 200, json: { ready: true, reasons: [] } });
  await redis.kill();
  await until(() => gw.cluster.status().redis === 'down', 'the replica to see Redis down');
  const down = await readyz();
  assert.equal(down.status, 503);
  assert.deepEqual(Object.keys(down.json), ['ready', 'reasons']);
  assert.equal(down.json.ready, false);
  assert.equal(down.json.reasons.length, 1);
  assert.match(down.json.reasons[0], /^cluster: redis down \(.+\)$/);
  await redis.restart();
  await until(async () => (await readyz()).status === 200, 'ready again');
  assert.deepEqual(await readyz(), { status: 200, json: { ready: true, reasons: [] } });
});
