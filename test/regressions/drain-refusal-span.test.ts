// Regression from an operations review: a new request refused because the gateway is shutting
// down (SWY_ERR_ADMISSION_SHUTTING_DOWN) got a server span with error status and `error.type`,
// while other expected refusals (a rate limit, a principal at its share) do not: every rolling
// deploy then showed as a burst of failed requests in traces. A drain's refusal is now no error
// (status unset, no `error.type`; `rpc.response.status_code` still says -32000), like a rate
// limit; a request the drain cuts after shutdownGraceMs, which had been running, stays an error.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';
import { attrs, receiver } from '../helpers/otlp.js';
import { until } from '../helpers/replicas.js';

const STATUS_ERROR = 2;

test('a request refused by the drain has a span without error status; one the drain cuts keeps it', async (t) => {
  const rx = await receiver(t);
  const gw = await configGateway(
    t,
    { admin: false, limits: { shutdownGraceMs: 500 }, upstreams: { demo: { transport: 'embedded' } } },
    { operations: true, env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${rx.url}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: '20' } },
  );
  // Runs past the grace period: the drain cuts it.
  const long = post(gw.url, modernBody(1, 'tools/call', { name: 'slow', arguments: { steps: 4, stepMs: 1_000 } }), modernHeaders('tools/call', 'slow'));
  await until(() => gw.executor.inFlight === 1, 'the long call running');
  const closing = gw.close();
  const refused = await post(gw.url, modernBody(2, 'tools/list'), modernHeaders('tools/list'));
  assert.deepEqual([refused.status, refused.json], [503, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'Server is shutting down' } }]);
  const cut = await long;
  assert.deepEqual([cut.status, cut.json], [503, { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Server is shutting down: request aborted' } }]);
  await closing;

  // The refused tools/list's server span (the CLIENT one is the front door's own list for the call).
  const list = (await rx.named('tools/list', 2)).find((s) => s.kind === 2)!;
  const listAttrs = attrs(list.attributes);
  assert.equal(list.status?.code ?? 0, 0, JSON.stringify(list.status));
  assert.equal(listAttrs['error.type'], undefined);
  assert.equal(listAttrs['rpc.response.status_code'], '-32000');

  const server = (await rx.named('tools/call slow', 1)).find((s) => s.kind === 2)!;
  assert.equal(server.status?.code, STATUS_ERROR);
  assert.equal(attrs(server.attributes)['error.type'], 'SWY_ERR_ADMISSION_SHUTTING_DOWN');
});
