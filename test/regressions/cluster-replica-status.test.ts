// Found by a trial (2026-12, three replicas behind nginx and Redis): neither /status.json nor
// /metrics said which replica answered, which key it seals with, or whether it reaches Redis
// (only `degraded` while Redis is down): a replica started with another SWITCHYARD_CLUSTER_KEY,
// which 404s every session the others opened, looked like the others. With a `cluster` section,
// /status.json now has `cluster: { replicaId, keyId, redis }` and /metrics
// `switchyard_cluster_info{replica,key_id} 1` and `switchyard_cluster_redis_up{replica}`; without
// one, neither appears.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseClusterKeys } from '../../src/cluster/seal.js';
import { configGateway, getText } from '../helpers/ops.js';
import { startRedis } from '../helpers/redis.js';
import { CLUSTER_KEY, until } from '../helpers/replicas.js';

const clusterLines = (metrics: string) => metrics.split('\n').filter((l) => l.startsWith('switchyard_cluster_'));

test('a replica names itself, its key id and its Redis state in /status.json and /metrics; a lone gateway does not', async (t) => {
  const redis = await startRedis(t);
  const gw = await configGateway(
    t,
    { admin: { port: 0 }, cluster: { redis: redis.url, key: CLUSTER_KEY, replicaId: 'solo' } },
    { operations: true, clusterOptions: { redisOptions: { reconnectBaseMs: 20, reconnectMaxMs: 200 } } },
  );
  await until(() => gw.cluster.status().redis === 'up', 'the replica to reach Redis');
  const admin = gw.admin!.address().url;
  const keyId = parseClusterKeys(CLUSTER_KEY)[0].id;
  const status = async () => ((await getText(`${admin}status.json`)).json as { cluster?: unknown }).cluster;
  const metrics = async () => clusterLines((await getText(`${admin}metrics`)).text);

  assert.deepEqual(await status(), { replicaId: 'solo', keyId, redis: 'up' });
  assert.deepEqual(await metrics(), [
    `switchyard_cluster_info{replica="solo",key_id="${keyId}"} 1`,
    'switchyard_cluster_redis_up{replica="solo"} 1',
    'switchyard_cluster_redis_writes_refused{replica="solo"} 0',
  ]);

  await redis.kill();
  await until(() => gw.cluster.status().redis === 'down', 'the replica to see Redis down');
  assert.deepEqual(await status(), { replicaId: 'solo', keyId, redis: 'down' });
  assert.deepEqual(await metrics(), [
    `switchyard_cluster_info{replica="solo",key_id="${keyId}"} 1`,
    'switchyard_cluster_redis_up{replica="solo"} 0',
    'switchyard_cluster_redis_writes_refused{replica="solo"} 0',
  ]);

  const lone = await configGateway(t, { admin: { port: 0 } }, { operations: true });
  const loneAdmin = lone.admin!.address().url;
  assert.equal('cluster' in ((await getText(`${loneAdmin}status.json`)).json as object), false);
  assert.deepEqual(clusterLines((await getText(`${loneAdmin}metrics`)).text), []);
});
