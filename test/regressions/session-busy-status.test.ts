// A 2025 session request refused as busy (SWY_ERR_ADMISSION_BUSY: maxConcurrent running and
// maxQueued waiting) is 503 with Retry-After on its lone JSON reply, as on the 2026-07-28 door,
// where it was 200 with the JSON-RPC error in the body and a Retry-After that a 200 does not carry
// (RFC 9110 §10.2.3). Found by a review comparing the doors: a 2025 principal's full share was
// already 429, the whole gateway being full was not visible to a proxy or load balancer at all.
// A batch's answer (shared by its requests) and HTTP+SSE (whose POST is 202 before the request
// runs) stay in-band. The official v1 client sees an HTTP error for that call; its session goes on.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { connect } from '../helpers/clients.js';
import { initSession, modernBody, modernHeaders, openHttpSseSession, post, send } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';

const BUSY = { code: -32000, message: 'Server busy: too many requests in flight' };

test('a 2025 session request refused as busy is 503 with Retry-After; a batch and HTTP+SSE keep it in-band', async (t) => {
  const gw = await configGateway(t, {
    limits: { maxConcurrent: 1, maxQueued: 1 },
    dialects: { legacySse: true },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.mounts[0].url;
  const ex = gw.mounts[0].executor;
  const session = await initSession(url, '2025-11-25');
  const old = await initSession(url, '2025-03-26');
  const legacy = await openHttpSseSession(t, url.replace(/\/mcp$/, ''));
  const v1 = await connect('v1-streamable', url);
  t.after(() => v1.close());

  // One call running, one waiting: the next one has no place.
  const slow = (id: number) =>
    post(url, modernBody(id, 'tools/call', { name: 'slow', arguments: { steps: 1, stepMs: 1_500 } }), modernHeaders('tools/call', 'slow'));
  const running = slow(1);
  while (ex.inFlight === 0) await new Promise((r) => setImmediate(r));
  const waiting = slow(2);
  while (ex.queued === 0) await new Promise((r) => setImmediate(r));

  const echo = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } });
  const lone = await post(url, echo(5), session);
  assert.equal(lone.status, 503);
  assert.equal(lone.headers['retry-after'], '1');
  assert.equal(lone.headers['content-type'], 'application/json');
  assert.equal(lone.headers['mcp-session-id'], session['mcp-session-id']);
  assert.deepEqual(lone.json, { jsonrpc: '2.0', id: 5, error: BUSY });

  // The 2026-07-28 door, for comparison: the same status.
  const modern = await post(url, modernBody(6, 'tools/call', { name: 'echo', arguments: { message: 'x' } }), modernHeaders('tools/call', 'echo'));
  assert.deepEqual([modern.status, modern.headers['retry-after'], modern.json], [503, '1', { jsonrpc: '2.0', id: 6, error: BUSY }]);

  // A 2025-03-26 batch: one status for several answers, so each error stays in-band.
  const batch = await post(url, [echo(7)], old);
  assert.equal(batch.status, 200);
  assert.deepEqual(batch.json, [{ jsonrpc: '2.0', id: 7, error: BUSY }]);

  // HTTP+SSE: the POST is accepted before the request runs; the refusal comes on the stream.
  const accepted = await send(legacy.to, 'POST', JSON.stringify(echo(8)), { 'content-type': 'application/json' });
  assert.equal(accepted.status, 202);
  assert.deepEqual(JSON.parse((await legacy.sse.next()).data), { jsonrpc: '2.0', id: 8, error: BUSY });

  // The official v1 client: an HTTP error for this call, with the status, and its session goes on.
  const refused = await v1.callTool({ name: 'echo', arguments: { message: 'x' } }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(refused instanceof StreamableHTTPError, String(refused));
  assert.equal(refused.code, 503);

  await Promise.all([running, waiting]);
  assert.deepEqual((await v1.callTool({ name: 'echo', arguments: { message: 'again' } })).content, [{ type: 'text', text: 'Echo: again' }]);
  assert.equal((await post(url, echo(9), session)).status, 200);
});
