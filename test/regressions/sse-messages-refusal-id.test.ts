// Regression (a known defect left open, fixed by h-small): the HTTP+SSE `/messages` endpoint
// answered a POST it refused before its session (a Streamable HTTP session's id, an unknown id,
// no `sessionId`) with `id: null`, even when the request's id was readable. JSON-RPC 2.0 §5: the
// id is null only when it could not be determined; the Streamable HTTP door already answers such
// refusals with the request's id.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { post } from '../helpers/http.js';

const JSON_CT = { 'content-type': 'application/json' } as const;
const err = (id: unknown, code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });
const WRONG = 'Bad Request: session uses a different transport';

test('/messages refusals before the session carry the request id when it is readable', async (t) => {
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  const origin = new URL(gw.url).origin;
  const init = await post(
    gw.url,
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
    { ...JSON_CT, accept: 'application/json, text/event-stream' },
  );
  const sid = String(init.headers['mcp-session-id']);
  const at = (q: string, body: unknown) => post(`${origin}/messages${q}`, body, { ...JSON_CT }).then((r) => [r.status, r.json]);

  // A Streamable HTTP session's id: the request's id, a string one too.
  assert.deepEqual(await at(`?sessionId=${sid}`, { jsonrpc: '2.0', id: 2, method: 'ping' }), [400, err(2, -32000, WRONG)]);
  assert.deepEqual(await at(`?sessionId=${sid}`, { jsonrpc: '2.0', id: 'r-3', method: 'ping' }), [400, err('r-3', -32000, WRONG)]);
  // An unknown id, and none at all.
  const unknown = '00000000-0000-4000-8000-000000000000';
  assert.deepEqual(await at(`?sessionId=${unknown}`, { jsonrpc: '2.0', id: 4, method: 'ping' }), [404, err(4, -32001, 'Session not found')]);
  assert.deepEqual(await at('', { jsonrpc: '2.0', id: 5, method: 'ping' }), [400, err(5, -32000, 'Bad Request: sessionId query parameter is required')]);
  // No readable id (a notification, an id that is no valid id, a batch): null, as before.
  assert.deepEqual(await at(`?sessionId=${sid}`, { jsonrpc: '2.0', method: 'notifications/initialized' }), [400, err(null, -32000, WRONG)]);
  assert.deepEqual(await at(`?sessionId=${sid}`, { jsonrpc: '2.0', id: { no: 1 }, method: 'ping' }), [400, err(null, -32000, WRONG)]);
  assert.deepEqual(await at(`?sessionId=${sid}`, [{ jsonrpc: '2.0', id: 6, method: 'ping' }]), [400, err(null, -32000, WRONG)]);
});
