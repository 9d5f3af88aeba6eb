// A member's own requestTimeoutMs through the aggregate. Found by a trial (helper-10): an HTTP
// member with `limits.requestTimeoutMs: 3000` behind the aggregate (whose deadline is the
// top-level 300 s) answered slow calls with "Upstream unavailable: <url>: Headers Timeout Error",
// and five of them opened the member's circuit breaker for every mount. The member's deadline
// is a deadline: SWY_ERR_REQ_DEADLINE, and the upstream is not marked down for it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configGateway } from '../helpers/ops.js';
import { gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

test('through the aggregate, a call past its HTTP member’s requestTimeoutMs is answered as the member’s own mount answers it (Request timed out), and the member stays up', async (t) => {
  const upstream = await gateway(t);
  const gw = await configGateway(t, { upstreams: { rem: { url: upstream.url, limits: { requestTimeoutMs: 500 } } }, aggregate: {} });
  const agg = gw.mounts.find((m) => m.name === 'aggregate')!.url;
  const direct = gw.mounts.find((m) => m.name === 'rem')!.url;
  const slowArgs = { steps: 4, stepMs: 250 };
  // The same call on the member's own mount runs into its deadline: the answer to match.
  const own = await post(direct, modernBody(0, 'tools/call', { name: 'slow', arguments: slowArgs }), modernHeaders('tools/call', 'slow'));
  assert.deepEqual(own.json, { jsonrpc: '2.0', id: 0, error: { code: -32000, message: 'Request timed out: 500 ms' } });
  // More than upstreamBreakerFailures (5) in a row through the aggregate.
  for (let i = 1; i <= 6; i++) {
    const r = await post(agg, modernBody(i, 'tools/call', { name: 'rem__slow', arguments: slowArgs }), modernHeaders('tools/call', 'rem__slow'));
    assert.equal(r.status, own.status, r.text);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: i, error: { code: -32000, message: 'Request timed out: 500 ms' } });
  }
  const echo = await post(direct, modernBody(9, 'tools/call', { name: 'echo', arguments: { message: 'still up' } }), modernHeaders('tools/call', 'echo'));
  assert.equal(echo.status, 200, echo.text);
});
