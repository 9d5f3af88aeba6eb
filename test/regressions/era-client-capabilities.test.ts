// A client of a revision before 2025-06-18 (2025-03-26 over Streamable HTTP) that declared
// `elicitation` anyway had it declared on its upstream session: the upstream then offered what
// needs it (server-everything lists an elicitation tool) and sent elicitation/create, which the
// session refuses (-32601, the method does not exist in its revision). Found by a mixed-era trial
// (h-mixed); the fix tells upstreams only the capabilities the client's revision defines.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initSession, post } from '../helpers/http.js';
import { gateway } from '../helpers/gateway.js';
import { configGateway } from '../helpers/ops.js';
import { modernHttp } from '../helpers/servers.js';
import { stubHttp } from '../helpers/stub-http.js';

test("an upstream session is told only the client capabilities the client's revision defines", async (t) => {
  const told: Array<{ protocolVersion: unknown; capabilities: unknown }> = [];
  let sessions = 0;
  const upstream = await stubHttp(t, (req, res, m) => {
    if (req.method === 'GET') return void res.writeHead(405).end();
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (m?.id === undefined) return void res.writeHead(202).end();
    const params = (m as { params?: { protocolVersion?: unknown; capabilities?: unknown } }).params;
    const reply = (result: unknown, session?: string) =>
      res
        .writeHead(200, { 'content-type': 'application/json', ...(session ? { 'mcp-session-id': session } : {}) })
        .end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    if (m.method === 'initialize') {
      told.push({ protocolVersion: params?.protocolVersion, capabilities: params?.capabilities });
      return reply({ protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'recorder', version: '1' } }, `s${++sessions}`);
    }
    if (m.method === 'tools/list') return reply({ tools: [] });
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } }));
  });
  const gw = await configGateway(t, { upstreams: { rec: { url: upstream.url, isolation: 'per-session' } } });
  const before = told.length;
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

  const old = await initSession(gw.url, '2025-03-26', { elicitation: {}, roots: {} });
  assert.equal((await post(gw.url, list, old)).status, 200);
  const recent = await initSession(gw.url, '2025-06-18', { elicitation: {}, roots: {} });
  assert.equal((await post(gw.url, list, recent)).status, 200);

  assert.deepEqual(
    told.slice(before).map((x) => x.capabilities),
    [{ roots: {} }, { elicitation: {}, roots: {} }],
  );
});

// A 2026-07-28 upstream's -32021 (MissingRequiredClientCapabilityError) reached initialize-era
// clients as -32021, a code their revision does not have. Found with the change above: a
// 2024-11-05 client's call of a tool that elicits now meets it.
test("a 2026-07-28 upstream's -32021 reaches an initialize-era client as that era's input-unsupported error", async (t) => {
  const gw = await gateway(t, { upstreamUrl: (await modernHttp(t)).url, dialects: ['2026-07-28', '2025-03-26'] });
  const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'confirm', arguments: {} } };
  const cases = [
    ['2025-06-18', "Client cannot answer the server's input request: client did not declare elicitation"],
    ['2025-03-26', "Client cannot answer the server's input request: elicitation/create does not exist in 2025-03-26"],
  ] as const;
  for (const [version, message] of cases) {
    const headers = await initSession(gw.url, version, version === '2025-06-18' ? {} : { elicitation: {} });
    const r = await post(gw.url, call, headers);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 2, error: { code: -32602, message } });
  }
});
