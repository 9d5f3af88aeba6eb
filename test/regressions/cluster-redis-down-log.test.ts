// Regression (found by a trial): the `cluster redis down` line wrote its error as
// `"err":{"type":"Object","stack":""}` (an object that is not an Error, under pino's `err`
// serializer), and a connect to a host name with two addresses fails with an AggregateError whose
// message is empty. The line now carries the failure's text: `connect ECONNREFUSED 127.0.0.1:P`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { createClusterRedis, redisErrorText } from '../../src/cluster/redis.js';
import { recordingLog, startRedis } from '../helpers/redis.js';
import { freePort } from '../helpers/servers.js';

/** Waits (up to 10 s) until `records` holds a `cluster redis down` line; returns those lines. */
async function downLines(records: Array<Record<string, unknown>>): Promise<Array<Record<string, unknown>>> {
  const downs = () => records.filter((x) => x.msg === 'cluster redis down');
  for (let i = 0; i < 500 && downs().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  return downs();
}

test('Redis refusing connections from the start: `cluster redis down` carries `connect ECONNREFUSED 127.0.0.1:P` as err', async (t) => {
  const port = await freePort();
  const { log, records } = recordingLog();
  const r = createClusterRedis({ url: `redis://127.0.0.1:${port}`, log, reconnectBaseMs: 20, reconnectMaxMs: 100 });
  t.after(() => r.destroy());
  const downs = await downLines(records);
  assert.equal(downs.length, 1);
  assert.equal(downs[0].level, 40);
  assert.equal(downs[0].err, `connect ECONNREFUSED 127.0.0.1:${port}`);
});

test('Redis killed under a live connection: `cluster redis down` carries the error text as err, not an object', async (t) => {
  const redis = await startRedis(t);
  const { log, records } = recordingLog();
  const r = createClusterRedis({ url: redis.url, log, reconnectBaseMs: 20, reconnectMaxMs: 100 });
  t.after(() => r.destroy());
  assert.equal(await r.waitUntilUp(10_000), true);
  await redis.kill();
  const downs = await downLines(records);
  assert.equal(downs.length, 1);
  // node-redis's words for a socket that closed under it.
  assert.equal(downs[0].err, 'Socket closed unexpectedly');
});

test('redisErrorText of a connect to two addresses that both refuse (an AggregateError with no message): each attempt', async () => {
  const port = await freePort();
  // A host name with two addresses, as `localhost` with 127.0.0.1 and ::1 has: Node tries both.
  const err = await new Promise<Error>((resolve) => {
    const s = net.connect({
      host: 'two-addresses.test',
      port,
      autoSelectFamily: true,
      lookup: (_host, _opts, cb) =>
        (cb as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [
          { address: '127.0.0.1', family: 4 },
          { address: '127.0.0.2', family: 4 },
        ]),
    });
    s.on('error', resolve);
  });
  assert.equal(err.message, '');
  assert.equal(redisErrorText(err), `connect ECONNREFUSED 127.0.0.1:${port}; connect ECONNREFUSED 127.0.0.2:${port}`);
});
