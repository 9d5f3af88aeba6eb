// A call whose deadline passed while it waited for its 2025 upstream session's GET stream to
// open (the call waits for that stream's response headers, up to upstreamRequestTimeoutMs) was
// still sent to the upstream once the headers came: the tool ran after its client had been told
// the request timed out, and ran twice if the client called again. Found by reading the
// connector's wait before its POST.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initSession, post } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';
import { sessionStub, stubHttp } from '../helpers/stub-http.js';

test('a call whose deadline passed while it waited for the upstream GET stream is never sent upstream', async (t) => {
  const held: Array<() => void> = [];
  let gets = 0;
  let calls = 0;
  const url = await sessionStub(t, {
    name: 'slow-get',
    tool: 'echo',
    before: (req, res) => {
      if (req.method !== 'GET') return false;
      gets++;
      // Headers held back, as a buffering proxy may do.
      const timer = setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': open\n\n');
      }, 2_500);
      held.push(() => clearTimeout(timer));
      return true;
    },
    call: () => (calls++, { content: [{ type: 'text', text: 'done' }] }),
  });
  t.after(() => held.forEach((f) => f()));
  const gw = await configGateway(t, { limits: { requestTimeoutMs: 500 }, upstreams: { slow: { url, isolation: 'shared' } } });
  const headers = await initSession(gw.url);
  const r = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {} } }, headers);
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Request timed out: 500 ms' } });
  // Past the moment the held headers are sent (2.5 s after the GET), and a little more.
  await new Promise((res) => setTimeout(res, 3_000));
  assert.ok(gets >= 1);
  assert.equal(calls, 0);
});

test("a call whose deadline passed while its 2026-07-28 upstream's tool annotations were fetched is never sent upstream", async (t) => {
  const held: Array<() => void> = [];
  let lists = 0;
  const upstream = await stubHttp(t, (req, res, m) => {
    const reply = (result: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m?.id, result }));
    if (m?.method === 'server/discover')
      return reply({
        supportedVersions: ['2026-07-28'],
        capabilities: { tools: {} },
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'slow-list', version: '1' } },
      });
    if (m?.method === 'tools/list') {
      // The first list (the gateway's list cache) comes at once; the next, which the connector
      // reads x-mcp-header annotations from, is slow to come.
      const tools = [{ name: 'echo', inputSchema: { type: 'object' } }];
      if (lists++ === 0) return reply({ tools });
      const timer = setTimeout(() => reply({ tools }), 2_500);
      held.push(() => clearTimeout(timer));
      return;
    }
    if (m?.method === 'tools/call') return reply({ content: [{ type: 'text', text: 'done' }] });
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: m?.id, error: { code: -32601, message: 'Method not found' } }));
  });
  t.after(() => held.forEach((f) => f()));
  const gw = await configGateway(t, { limits: { requestTimeoutMs: 500 }, upstreams: { slow: { url: upstream.url } } });
  const headers = await initSession(gw.url);
  const listed = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, headers);
  assert.equal((listed.json as { result: { tools: unknown[] } }).result.tools.length, 1);
  const r = await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: {} } }, headers);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'Request timed out: 500 ms' } });
  await new Promise((res) => setTimeout(res, 3_000));
  assert.ok(upstream.seen.includes('POST /mcp tools/list'), upstream.seen.join(', '));
  assert.deepEqual(
    upstream.seen.filter((s) => s.endsWith('tools/call')),
    [],
  );
});
