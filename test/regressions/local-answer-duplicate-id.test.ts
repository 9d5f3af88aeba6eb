// A 2025-era session refuses a request whose id one of its requests still running uses, also when
// the session answers it itself (ping, logging/setLevel). Found by a trial: a `ping` with the id of
// a `tools/call` in flight was answered `{}`, so the client got two answers under one id (HTTP+SSE
// and Streamable HTTP alike), where any routed method got -32600.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { post } from '../helpers/http.js';

const H25 = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

test('ping and logging/setLevel with the id of a request in flight get -32600; the same id once it is answered is served', async (t) => {
  const gw = await gateway(t);
  const init = await post(
    gw.url,
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    H25,
  );
  const h = { ...H25, 'mcp-session-id': String(init.headers['mcp-session-id']), 'mcp-protocol-version': '2025-06-18' };
  await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, h);
  const running = post(gw.url, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: { steps: 1000, stepMs: 50 } } }, h);
  for (let i = 0; i < 200 && gw.executor.inFlight === 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(gw.executor.inFlight, 1);

  const duplicate = { code: -32600, message: 'Invalid Request: id is already in use by a request in flight' };
  const ping = await post(gw.url, { jsonrpc: '2.0', id: 7, method: 'ping' }, h);
  assert.equal(ping.status, 200);
  assert.deepEqual(ping.json, { jsonrpc: '2.0', id: 7, error: duplicate });
  const level = await post(gw.url, { jsonrpc: '2.0', id: 7, method: 'logging/setLevel', params: { level: 'info' } }, h);
  assert.deepEqual(level.json, { jsonrpc: '2.0', id: 7, error: duplicate });

  // The call is cancelled (its POST ends with 202 and no body); then id 7 is free again.
  await post(gw.url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } }, h);
  assert.equal((await running).status, 202);
  const again = await post(gw.url, { jsonrpc: '2.0', id: 7, method: 'ping' }, h);
  assert.deepEqual(again.json, { jsonrpc: '2.0', id: 7, result: {} });
});
