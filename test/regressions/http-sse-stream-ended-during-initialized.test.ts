// Found in review: an HTTP+SSE upstream session whose stream ended while the gateway's
// `notifications/initialized` POST was on its way was never noticed. The stream's `onEnd` is set
// once that POST is answered, and its setter did not replay an end that had already happened (the
// `onUnparsable` setter did), so the session was never marked ended and stayed in the pool: every
// later call went to its dead endpoint. The setter now calls it at once, and the next call opens
// a new upstream session.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';
import { httpSseStub } from '../helpers/stub-http.js';

/**
 * An HTTP+SSE upstream (2024-11-05) with one tool, `ok`, whose stream number `doomed` is cut right
 * after the `initialized` POST arrives, that POST being answered (202) only a little later, as a
 * server that drops a session while the handshake finishes (`httpSseStub`'s `cutOn`). Its endpoint
 * answers 404 for a session whose stream is gone. `streams` counts the GETs (one per upstream session).
 */
async function cuttingUpstream(t: { after(fn: () => Promise<void>): void }, doomed: number) {
  let opened = 0;
  const url = await httpSseStub(
    t,
    'cutting',
    (m, write, _raw, session) => {
      if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [{ name: 'ok', inputSchema: { type: 'object' } }] } });
      if (m.method === 'tools/call') return write({ id: m.id, result: { content: [{ type: 'text', text: `fine on ${session}` }] } });
      if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
    },
    {
      initialize: (m, write) =>
        write({ id: m.id, result: { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'cutting', version: '1' } } }),
      onStream: () => void opened++,
      cutOn: (m, session) => m.method === 'notifications/initialized' && session === String(doomed),
    },
  );
  return { url, streams: () => opened };
}

/** A 2026-07-28 tools/call of `ok` through the gateway: the JSON-RPC body. */
async function call(url: string, id: number): Promise<Record<string, unknown>> {
  return (await post(url, modernBody(id, 'tools/call', { name: 'ok', arguments: {} }), modernHeaders('tools/call', 'ok'))).json as Record<string, unknown>;
}

test('HTTP+SSE: a stream that ends while the initialized POST is answered ends the session; the next call opens a new one', async (t) => {
  // Stream 1 is the gateway's control session; stream 2 the first client call's session.
  const up = await cuttingUpstream(t, 2);
  const gw = await configGateway(t, { upstreams: { up: { url: up.url, transport: 'sse' } } });
  // The first call's session never opened: said as an upstream that is unavailable.
  const first = await call(gw.url, 1);
  assert.deepEqual(first, { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Upstream unavailable: upstream SSE stream lost during the handshake' } });
  assert.equal(up.streams(), 2);
  // The session it opened is gone from the pool: the next call opens session 3.
  const second = await call(gw.url, 2);
  assert.deepEqual(second, {
    jsonrpc: '2.0',
    id: 2,
    result: {
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'cutting', version: '1' } },
      content: [{ type: 'text', text: 'fine on 3' }],
      resultType: 'complete',
    },
  });
  assert.equal(up.streams(), 3);
});
