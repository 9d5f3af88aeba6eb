// A 2025 upstream that never answered a session's GET with its headers (but answered POSTs) made
// every first call on a new upstream session wait for them up to upstreamRequestTimeoutMs (30 s):
// the call waited for its session's GET stream to open with no bound of its own. Found by reading
// the connector's wait before its POST (docs/upstreams.md: "Each session opens its GET stream
// before its first call"). The wait is now upstreamGetStreamWaitMs (2,000 ms by default).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { initSession, post } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';
import { stubHttp } from '../helpers/stub-http.js';

test('a first call on an upstream session whose GET never gets headers is sent after upstreamGetStreamWaitMs, not after upstreamRequestTimeoutMs', async (t) => {
  const gets: http.ServerResponse[] = [];
  const upstream = await stubHttp(t, (req, res, m) => {
    // Never answered: no headers, no body, until the test ends.
    if (req.method === 'GET') return void gets.push(res);
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (m?.id === undefined) return void res.writeHead(202).end();
    const reply = (result: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    if (m.method === 'initialize') return reply({ protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'deaf-get', version: '1' } });
    if (m.method === 'tools/list') return reply({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] });
    if (m.method === 'tools/call') return reply({ content: [{ type: 'text', text: 'done' }] });
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } }));
  });
  // The call's deadline (10 s) is well under upstreamRequestTimeoutMs (30 s, the GET's headers
  // timeout) and well over upstreamGetStreamWaitMs (2 s, the default).
  const gw = await configGateway(t, { limits: { requestTimeoutMs: 10_000 }, upstreams: { deaf: { url: upstream.url } } });
  const headers = await initSession(gw.url);
  const r = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {} } }, headers);
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'done' }] } });
  assert.ok(gets.length >= 1, upstream.seen.join(', '));
  assert.equal(upstream.seen.filter((s) => s.endsWith('tools/call')).length, 1);
});
