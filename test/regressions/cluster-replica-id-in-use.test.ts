// A new-user trial of replicas: two library gateways (or `switchyard` processes) given the same
// `cluster.replicaId` (one config copied to both) share one bus channel, so each takes messages
// meant for the other: an official v1 HTTP+SSE client whose POSTs landed on both could not even
// connect (404 Session not found), and nothing said why. Now a replica whose id another replica
// already listens on says so at start, at error, naming the id (docs/scaling.md, Configuration).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startRedis } from '../helpers/redis.js';
import { switchyard } from '../helpers/library.js';

const LINE = 'cluster replica id in use by another replica';

test('a replica started with the id of a running one logs that the id is in use; distinct ids log nothing', async (t) => {
  const redis = await startRedis(t);
  const key = randomBytes(32).toString('base64');
  const first = switchyard(t, { cluster: { redis: redis.url, key, replicaId: 'web' } });
  await first.ready();
  const other = switchyard(t, { cluster: { redis: redis.url, key, replicaId: 'worker' } });
  await other.ready();
  const copy = switchyard(t, { cluster: { redis: redis.url, key, replicaId: 'web' } });
  await copy.ready();

  const said = (records: Array<Record<string, unknown>>) =>
    records.filter((r) => r.msg === LINE).map((r) => ({ level: r.level, replicaId: r.replicaId, listeners: r.listeners }));
  assert.deepEqual(said(first.records), []);
  assert.deepEqual(said(other.records), []);
  assert.deepEqual(said(copy.records), [{ level: 50, replicaId: 'web', listeners: 1 }]);
});
