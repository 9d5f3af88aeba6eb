// Found by an operator trial: with the cluster's Redis full (`maxmemory` reached under
// `noeviction`), every 2025 `initialize` got 503 `Cluster state store unavailable`, while /readyz
// said `{"ready":true,"reasons":[]}`, /status.json `redis: "up"` and `switchyard_cluster_redis_up`
// 1: only the refusal counter showed it. The OOM replies of the writes requests make anyway now
// mark Redis as refusing writes (`degraded`, `cluster.writes`, a gauge) until a write goes through.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { H2025, post } from '../helpers/http.js';
import { configGateway, find, getText } from '../helpers/ops.js';
import { startRedis } from '../helpers/redis.js';
import { CLUSTER_KEY, until } from '../helpers/replicas.js';

const OOM = "OOM command not allowed when used memory > 'maxmemory'.";
const INIT = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'full-redis', version: '1' } },
};

/**
 * A client for the operator's commands, destroyed in `t.after`. `t.after` hooks run in the order
 * registered, so the server (startRedis's hook) stops first: the connection's loss is expected
 * then, and an 'error' event without a listener would be an uncaught exception failing the test.
 */
function operatorClient(t: { after(fn: () => void): void }, url: string) {
  const operator = createClient({ url });
  operator.on('error', () => {});
  t.after(() => operator.destroy());
  return operator;
}

for (const requiresRedis of [false, true]) {
  test(`Redis full: /readyz and /status.json say it refuses writes${requiresRedis ? ' (a reason with readinessRequiresRedis)' : ''}, and stop once it has room`, async (t) => {
    const redis = await startRedis(t, ['--maxmemory-policy', 'noeviction']);
    const operator = operatorClient(t, redis.url);
    await operator.connect();
    const gw = await configGateway(
      t,
      { admin: { port: 0 }, cluster: { redis: redis.url, key: CLUSTER_KEY, replicaId: 'r1', ...(requiresRedis ? { readinessRequiresRedis: true } : {}) } },
      { operations: true, clusterOptions: { redisOptions: { reconnectBaseMs: 20, reconnectMaxMs: 200 } } },
    );
    await until(() => gw.cluster.status().redis === 'up', 'the replica to reach Redis');
    const admin = gw.admin!.address().url;
    const healthy = { replicaId: 'r1', keyId: gw.cluster.keyId, redis: 'up' };

    // Whatever Redis holds is over 1 byte: every write is refused, reads still answered.
    await operator.sendCommand(['CONFIG', 'SET', 'maxmemory', '1']);
    const refused = await post(gw.url, INIT, H2025);
    assert.equal(refused.status, 503);
    assert.equal((refused.json as { error: { message: string } }).error.message, 'Cluster state store unavailable');

    const why = `cluster: redis refuses writes (${OOM})`;
    const readyz = await getText(`${admin}readyz`);
    assert.deepEqual(
      [readyz.status, readyz.json],
      requiresRedis ? [503, { ready: false, reasons: [why] }] : [200, { ready: true, reasons: [], degraded: [why] }],
    );
    const full = (await getText(`${admin}status.json`)).json as Record<string, unknown>;
    const { writesRefusedAt, ...cluster } = full.cluster as Record<string, unknown>;
    assert.deepEqual(
      { ready: full.ready, reasons: full.reasons, degraded: full.degraded, cluster },
      { ready: !requiresRedis, reasons: requiresRedis ? [why] : [], degraded: requiresRedis ? [] : [why], cluster: { ...healthy, writes: 'refused' } },
    );
    assert.match(String(writesRefusedAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const metrics = (await getText(`${admin}metrics`)).text;
    assert.deepEqual(
      [...find(metrics, 'switchyard_cluster_redis_up'), ...find(metrics, 'switchyard_cluster_redis_writes_refused')].map((s) => [s.name, s.value]),
      [
        ['switchyard_cluster_redis_up', 1],
        ['switchyard_cluster_redis_writes_refused', 1],
      ],
    );
    const warned = gw.records.filter((r) => r.msg === 'cluster redis refuses writes');
    assert.deepEqual(
      warned.map((r) => [r.level, r.err]),
      [[40, OOM]],
    );

    // Room again: the next write goes through and clears it.
    await operator.sendCommand(['CONFIG', 'SET', 'maxmemory', '0']);
    assert.equal((await post(gw.url, INIT, H2025)).status, 200);
    const after = await getText(`${admin}readyz`);
    assert.deepEqual([after.status, after.json], [200, { ready: true, reasons: [] }]);
    const status = (await getText(`${admin}status.json`)).json as Record<string, unknown>;
    assert.deepEqual(
      { ready: status.ready, reasons: status.reasons, degraded: status.degraded, cluster: status.cluster },
      { ready: true, reasons: [], degraded: [], cluster: healthy },
    );
    assert.equal(find((await getText(`${admin}metrics`)).text, 'switchyard_cluster_redis_writes_refused')[0].value, 0);
    assert.deepEqual(
      gw.records.filter((r) => r.msg === 'cluster redis accepts writes').map((r) => r.level),
      [30],
    );
  });
}

// Found in review: only an OOM reply set it. A Redis that became a replica (a primary demoted by a
// failover, `replica-read-only yes` by default) answers every write `READONLY` while the
// connection stays up, and the replica said ready and healthy just the same.
test('Redis turned read-only replica: /readyz, /status.json and the gauge say it refuses writes (READONLY), until it is a primary again', async (t) => {
  const primary = await startRedis(t);
  const redis = await startRedis(t);
  const operator = operatorClient(t, redis.url);
  await operator.connect();
  const gw = await configGateway(
    t,
    { admin: { port: 0 }, cluster: { redis: redis.url, key: CLUSTER_KEY, replicaId: 'r1' } },
    { operations: true, clusterOptions: { redisOptions: { reconnectBaseMs: 20, reconnectMaxMs: 200 } } },
  );
  await until(() => gw.cluster.status().redis === 'up', 'the replica to reach Redis');
  const admin = gw.admin!.address().url;
  assert.equal((await post(gw.url, INIT, H2025)).status, 200);

  await operator.sendCommand(['REPLICAOF', '127.0.0.1', String(primary.port)]);
  const refused = await post(gw.url, INIT, H2025);
  assert.equal(refused.status, 503);
  assert.equal((refused.json as { error: { message: string } }).error.message, 'Cluster state store unavailable');
  const READONLY = "READONLY You can't write against a read only replica.";
  const why = `cluster: redis refuses writes (${READONLY})`;
  const readyz = await getText(`${admin}readyz`);
  assert.deepEqual([readyz.status, readyz.json], [200, { ready: true, reasons: [], degraded: [why] }]);
  const cluster = ((await getText(`${admin}status.json`)).json as { cluster: Record<string, unknown> }).cluster;
  assert.deepEqual([cluster.redis, cluster.writes], ['up', 'refused']);
  const metrics = (await getText(`${admin}metrics`)).text;
  assert.deepEqual(
    [...find(metrics, 'switchyard_cluster_redis_up'), ...find(metrics, 'switchyard_cluster_redis_writes_refused')].map((s) => [s.name, s.value]),
    [
      ['switchyard_cluster_redis_up', 1],
      ['switchyard_cluster_redis_writes_refused', 1],
    ],
  );
  assert.deepEqual(
    gw.records.filter((r) => r.msg === 'cluster redis refuses writes').map((r) => [r.level, r.err]),
    [[40, READONLY]],
  );

  // Promoted again: the next write goes through and clears it.
  await operator.sendCommand(['REPLICAOF', 'NO', 'ONE']);
  assert.equal((await post(gw.url, INIT, H2025)).status, 200);
  const after = await getText(`${admin}readyz`);
  assert.deepEqual([after.status, after.json], [200, { ready: true, reasons: [] }]);
  assert.equal(find((await getText(`${admin}metrics`)).text, 'switchyard_cluster_redis_writes_refused')[0].value, 0);
});
