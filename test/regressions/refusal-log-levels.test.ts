// A bound doing its work, and a shutdown, are not the gateway's bugs: their refusals are logged
// without a stack, at warn (a bound) and info (shutting down), never at error. Found by a trial:
// every rolling deploy logged each call cut by the drain at error, with Executor.close's stack.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';

const slow = (url: string, id: number) =>
  post(url, modernBody(id, 'tools/call', { name: 'slow', arguments: { steps: 1, stepMs: 2_000 } }), modernHeaders('tools/call', 'slow'));
const failures = (records: Array<Record<string, unknown>>) =>
  records.filter((r) => r.msg === 'request failed').map((r) => ({ level: r.level, code: r.code, stack: r.err !== undefined }));

test('a request refused by admission bounds is logged at warn, without a stack', async (t) => {
  const gw = await configGateway(t, { limits: { maxConcurrent: 1, maxQueued: 1 }, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.mounts[0].url;
  const first = slow(url, 1);
  while (gw.mounts[0].executor.inFlight === 0) await new Promise((r) => setImmediate(r));
  const second = slow(url, 2);
  while (gw.mounts[0].executor.queued === 0) await new Promise((r) => setImmediate(r));
  const third = await slow(url, 3);
  assert.equal(third.status, 503);
  assert.deepEqual(failures(gw.records), [{ level: 40, code: 'SWY_ERR_ADMISSION_BUSY', stack: false }]);
  await Promise.all([first, second]);
});

test('calls cut by a shutdown are logged at info, without a stack', async (t) => {
  const gw = await configGateway(t, { limits: { shutdownGraceMs: 200 }, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.mounts[0].url;
  const call = slow(url, 1);
  while (gw.mounts[0].executor.inFlight === 0) await new Promise((r) => setImmediate(r));
  await gw.close();
  const r = await call;
  assert.equal((r.json as { error: { message: string } }).error.message.startsWith('Server is shutting down'), true, r.text);
  assert.deepEqual(failures(gw.records), [{ level: 30, code: 'SWY_ERR_ADMISSION_SHUTTING_DOWN', stack: false }]);
  assert.deepEqual(
    gw.records.filter((x) => (x.level as number) >= 50),
    [],
  );
});
