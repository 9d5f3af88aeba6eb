// Regression from an operations review: the executor's admission refusals were answered, logged
// and published as requests, but not counted in switchyard_refusals_total nor listed in
// /status.json's refusals, although they are the refusals of a bound like the ones made before the
// executor. SWY_ERR_ADMISSION_PRINCIPAL_BUSY (a client fault) had no error_type either, so a
// principal held at its share showed in no metric at all. Admission now counts its refusals
// (SWY_ERR_ADMISSION_PRINCIPAL_BUSY, SWY_ERR_ADMISSION_BUSY, SWY_ERR_ADMISSION_SHUTTING_DOWN) by
// catalogue code, mount and dialect; a client that goes away while queued is no refusal.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/auth/api-keys.js';
import { modernCall } from '../helpers/identity.js';
import { configGateway, countedRefusals, getText } from '../helpers/ops.js';
import { until } from '../helpers/replicas.js';

const ALPHA = 'sy_live_alpha_0123456789abcdefghijklmnop';
const BETA = 'sy_live_beta_0123456789abcdefghijklmnopq';
const GAMMA = 'sy_live_gamma_0123456789abcdefghijklmnop';
const slow = { name: 'slow', arguments: { steps: 1, stepMs: 600 } };

test('a principal over its share and a full queue are each counted once in switchyard_refusals_total and /status.json', async (t) => {
  const gw = await configGateway(
    t,
    {
      admin: { port: 0 },
      auth: { apiKeys: [ALPHA, BETA, GAMMA].map((k, i) => ({ name: `k${i}`, sha256: hashApiKey(k) })) },
      limits: { maxConcurrent: 1, maxQueued: 1, maxConcurrentPerPrincipal: 1 },
      upstreams: { demo: { transport: 'embedded' } },
    },
    { operations: true },
  );
  const url = gw.urls[0];
  const admin = gw.admin!.address().url;
  const running = modernCall(url, 1, 'tools/call', slow, `Bearer ${ALPHA}`);
  await until(() => gw.executor.inFlight === 1, 'the first call running');
  const over = await modernCall(url, 2, 'tools/call', slow, `Bearer ${ALPHA}`);
  assert.equal(over.status, 429);
  const waiting = modernCall(url, 3, 'tools/call', slow, `Bearer ${BETA}`);
  await until(() => gw.executor.queued === 1, 'the second principal queued');
  const busy = await modernCall(url, 4, 'tools/call', slow, `Bearer ${GAMMA}`);
  assert.equal(busy.status, 503);
  assert.equal((await running).status, 200);
  assert.equal((await waiting).status, 200);

  const exposition = (await getText(`${admin}metrics`)).text;
  assert.deepEqual(countedRefusals(exposition), [
    [{ code: 'SWY_ERR_ADMISSION_PRINCIPAL_BUSY', mount: 'demo', dialect: '2026-07-28' }, 1],
    [{ code: 'SWY_ERR_ADMISSION_BUSY', mount: 'demo', dialect: '2026-07-28' }, 1],
  ]);
  const status = (await getText(`${admin}status.json`)).json as { refusals: Array<Record<string, unknown>> };
  assert.deepEqual(
    status.refusals.map(({ code, status: s, mount, dialect }) => ({ code, status: s, mount, dialect })),
    [
      { code: 'SWY_ERR_ADMISSION_BUSY', status: 503, mount: 'demo', dialect: '2026-07-28' },
      { code: 'SWY_ERR_ADMISSION_PRINCIPAL_BUSY', status: 429, mount: 'demo', dialect: '2026-07-28' },
    ],
  );
});

test('a request refused because the mount is draining is counted as SWY_ERR_ADMISSION_SHUTTING_DOWN', async (t) => {
  const gw = await configGateway(t, { admin: { port: 0 }, upstreams: { demo: { transport: 'embedded' } } }, { operations: true });
  const admin = gw.admin!.address().url;
  const running = modernCall(gw.url, 1, 'tools/call', slow);
  await until(() => gw.executor.inFlight === 1, 'the call running');
  const closing = gw.close();
  const refused = await modernCall(gw.url, 2, 'tools/list', {});
  assert.deepEqual([refused.status, refused.json], [503, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'Server is shutting down' } }]);
  const exposition = (await getText(`${admin}metrics`)).text;
  assert.deepEqual(countedRefusals(exposition), [[{ code: 'SWY_ERR_ADMISSION_SHUTTING_DOWN', mount: 'demo', dialect: '2026-07-28' }, 1]]);
  assert.equal((await running).status, 200);
  await closing;
});
