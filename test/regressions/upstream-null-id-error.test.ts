// Found by a client-author trial (helper h-t1, 2026-12-05): an HTTP upstream that answers a POST
// with one error response whose id is null or absent (it could not read the request, or refused
// it before reading it; server-everything answers an unknown session so, without an id) reached
// the client as `Upstream protocol error: JSON answer without the response`: the server's own
// code and message were lost, and each such answer counted against the circuit breaker, so a
// handful of them marked the upstream down for every client. JSON-RPC 2.0 §5 makes such an error
// the answer to the request the server could not read, and a POST carries exactly one: it is now
// that request's error, passed on like any other error the upstream answers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gateway } from '../helpers/gateway.js';
import { initSession, post } from '../helpers/http.js';

/** A 2025-11-25 server on 127.0.0.1 whose tools/call is always refused with 400 and `refusal` as the body. */
async function refusingServer(t: { after(fn: () => Promise<void>): void }, refusal: Record<string, unknown>): Promise<string> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405, { allow: 'POST' }).end();
        return;
      }
      const m = JSON.parse(body) as { id?: unknown; method?: string };
      const json = (status: number, msg: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(msg));
      if (m.method === 'initialize')
        json(
          200,
          { jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'refusing', version: '1' } } },
          { 'mcp-session-id': 'one' },
        );
      else if (m.id === undefined) res.writeHead(202).end();
      else if (m.method === 'tools/call') json(400, refusal);
      else json(200, { jsonrpc: '2.0', id: m.id, result: { tools: [] } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

for (const [what, refusal] of [
  ['id null', { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: cannot read it' } }],
  ['no id', { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: cannot read it' } }],
] as const) {
  test(`an upstream error response with ${what} is the call's error, and does not open the breaker`, async (t) => {
    const upstream = await refusingServer(t, refusal);
    const gw = await gateway(t, { upstreamUrl: upstream, upstreamEra: '2025-11-25' });
    const h = await initSession(gw.url, '2025-11-25');
    // More than upstreamBreakerFailures (5) in a row.
    for (let i = 0; i < 7; i++) {
      const r = await post(gw.url, { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'x', arguments: {} } }, h);
      const a = r.json as { id?: unknown; error?: { code: number; message: string } };
      assert.equal(r.status, 200, `call ${i}: ${JSON.stringify(a)}`);
      assert.equal(a.id, i);
      assert.deepEqual(a.error, { code: -32600, message: 'Invalid Request: cannot read it' }, `call ${i}`);
    }
  });
}
