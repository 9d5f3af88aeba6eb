// jsonrpc.request.id on server spans (telemetry digest §2: Conditionally Required for requests,
// numbers stringified). The context carried no JSON-RPC id, so no span ever had it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { openSession, tracedGateway } from '../helpers/ops.js';
import { attrs } from '../helpers/otlp.js';

test('server spans carry the client request’s JSON-RPC id: 2026-07-28 (string id), 2025 (integer id, initialize and ping included)', async (t) => {
  const { rx, gw } = await tracedGateway(t);
  const modern = await post(gw.url, modernBody('req-7', 'tools/call', { name: 'trace', arguments: {} }), modernHeaders('tools/call', 'trace'));
  assert.equal(modern.status, 200);
  const { headers } = await openSession(gw.url);
  const call = await post(gw.url, { jsonrpc: '2.0', id: 42, method: 'tools/call', params: { name: 'trace', arguments: {} } }, headers);
  assert.equal(call.status, 200);
  const ping = await post(gw.url, { jsonrpc: '2.0', id: 43, method: 'ping' }, headers);
  assert.equal(ping.status, 200);

  const calls = (await rx.named('tools/call trace', 4)).filter((s) => s.kind === 2);
  const ids = calls.map((s) => attrs(s.attributes)['jsonrpc.request.id']).sort();
  assert.deepEqual(ids, ['42', 'req-7']);
  const [init] = await rx.named('initialize', 1);
  assert.equal(attrs(init.attributes)['jsonrpc.request.id'], '0');
  const [pinged] = await rx.named('ping', 1);
  assert.equal(attrs(pinged.attributes)['jsonrpc.request.id'], '43');
  // Client spans carry the id the gateway's own request upstream had, which the interceptor does not see: not set.
  for (const s of (await rx.named('tools/call trace', 4)).filter((x) => x.kind === 3)) assert.equal(attrs(s.attributes)['jsonrpc.request.id'], undefined);
});
