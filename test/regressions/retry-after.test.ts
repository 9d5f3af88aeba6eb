// Found by a trial (2026-12-04): docs/dialects.md promised `Retry-After` with the 503s of a
// passing overload (busy, too many sessions or subscriptions), and none carried it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { H2025, modernBody, modernHeaders, openSse, post } from '../helpers/http.js';

test('too many sessions, too many subscriptions and server busy: 503 with Retry-After: 1', async (t) => {
  const gw = await gateway(t, { limits: { maxSessions: 1, maxSubscriptions: 1, maxConcurrent: 1, maxQueued: 1 } });
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };
  assert.equal((await post(gw.url, init, H2025)).status, 200);
  const second = await post(gw.url, init, H2025);
  assert.deepEqual(
    [second.status, second.headers['retry-after'], (second.json as { error: { message: string } }).error.message],
    [503, '1', 'Too many sessions'],
  );

  const listen = () =>
    openSse(
      gw.url,
      'POST',
      modernHeaders('subscriptions/listen'),
      JSON.stringify(modernBody('L', 'subscriptions/listen', { notifications: { toolsListChanged: true } })),
    );
  const first = await listen();
  t.after(() => first.close());
  const over = await post(
    gw.url,
    modernBody('M', 'subscriptions/listen', { notifications: { toolsListChanged: true } }),
    modernHeaders('subscriptions/listen'),
  );
  assert.deepEqual(
    [over.status, over.headers['retry-after'], (over.json as { error: { message: string } }).error.message],
    [503, '1', 'Too many subscriptions'],
  );

  const slowCall = (id: number) =>
    post(gw.url, modernBody(id, 'tools/call', { name: 'slow', arguments: { steps: 1, stepMs: 1_000 } }), modernHeaders('tools/call', 'slow'));
  const slow = [slowCall(2), slowCall(4)];
  // One runs, one waits: the next is over both bounds.
  for (let i = 0; i < 500 && !(gw.executor.inFlight === 1 && gw.executor.queued === 1); i++) await new Promise((r) => setTimeout(r, 10));
  const busy = await post(gw.url, modernBody(3, 'tools/call', { name: 'echo', arguments: { message: 'x' } }), modernHeaders('tools/call', 'echo'));
  assert.deepEqual([busy.status, busy.headers['retry-after']], [503, '1']);
  assert.match((busy.json as { error: { message: string } }).error.message, /^Server busy/);
  assert.deepEqual(
    (await Promise.all(slow)).map((r) => r.status),
    [200, 200],
  );
});
