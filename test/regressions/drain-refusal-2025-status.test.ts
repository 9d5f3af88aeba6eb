// Found by a trial (2026-12, a replica SIGTERMed behind nginx during a rolling deploy): a 2025
// session's request refused by the drain (SWY_ERR_ADMISSION_SHUTTING_DOWN, before it ran) was
// answered HTTP 200 with the JSON-RPC error and a `Retry-After: 1`, where docs/errors.md gives
// 503 and the 2026-07-28 door and a 2025 `initialize` answer 503: a proxy or load balancer saw a
// success. It is now 503 on a JSON reply that answers it alone, as the other refusals before a
// request runs (`replyStatusOf`); a request the drain cuts after shutdownGraceMs had been running
// and stays in-band (200), as before.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { gateway } from '../helpers/gateway.js';
import { initSession, post } from '../helpers/http.js';

test('a 2025 session request refused by the drain is 503 with Retry-After; one cut by it after the grace period stays 200', async (t) => {
  const gw = await gateway(t, { limits: { ...DEFAULT_LIMITS, shutdownGraceMs: 500 } });
  const h = { ...(await initSession(gw.url)), 'mcp-protocol-version': '2025-06-18' };
  const long = post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { steps: 40, stepMs: 100 } } }, h);
  for (let i = 0; i < 100 && gw.executor.inFlight === 0; i++) await new Promise((r) => setTimeout(r, 10));
  const closing = gw.close();
  const refused = await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, h);
  assert.deepEqual(
    [refused.status, refused.headers['retry-after'], refused.json],
    [503, '1', { jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'Server is shutting down' } }],
  );
  const cut = await long;
  assert.deepEqual([cut.status, cut.json], [200, { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Server is shutting down: request aborted' } }]);
  await closing;
});
