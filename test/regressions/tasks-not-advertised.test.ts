// Regression from a user trial: server-everything's `tasks` capability
// (`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`) was passed to clients of every
// era, in `initialize` and in `server/discover`, although Switchyard serves no task (`tasks/list`
// answers -32601, docs/scaling.md). The gateway now leaves `tasks` (and its 2026-07-28 form, the
// `io.modelcontextprotocol/tasks` extension) out of what it advertises.
// A `tools/call` with a `task` param was forwarded as it came, and server-everything's answer
// failed as a task creation result (-32602 `Invalid task creation result`); since the gateway
// serves and advertises no tasks, the param is now ignored and the call served as a plain one.
// See 2025-11-25 basic/utilities/tasks#capabilities, #task-support-and-handling; SEP-2663
// (backward compatibility).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport as V1SSE } from '@modelcontextprotocol/sdk/client/sse.js';
import { discoverResult } from '../../dialects/2026-07-28/codec.js';
import { advertisedDescription } from '../../src/core/gate.js';
import { fetch2024 } from '../helpers/clients.js';
import { everythingStdioCommand, gateway } from '../helpers/gateway.js';
import { H2025, initSession, modernBody, modernHeaders, post } from '../helpers/http.js';

/** What server-everything advertises, less `tasks`. */
const ADVERTISED = {
  tools: { listChanged: true },
  prompts: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  logging: {},
  completions: {},
};

test('no era is told of the upstream tasks capability: initialize (2024-11-05 to 2025-11-25) and server/discover', async (t) => {
  const gw = await gateway(t, { stdio: everythingStdioCommand(), dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  // The upstream does advertise tasks: the gateway is what leaves it out.
  assert.deepEqual(gw.upstream.describe().capabilities.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });

  const discover = await post(gw.url, modernBody(1, 'server/discover'), modernHeaders('server/discover'));
  assert.equal(discover.status, 200);
  assert.deepEqual((discover.json as { result: { capabilities: unknown } }).result.capabilities, ADVERTISED);

  for (const version of ['2025-03-26', '2025-06-18', '2025-11-25']) {
    const init = {
      jsonrpc: '2.0',
      id: 2,
      method: 'initialize',
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'trial', version: '1.0.0' } },
    };
    const r = await post(gw.url, init, H2025);
    assert.equal(r.status, 200, version);
    const result = (r.json as { result: { protocolVersion: string; capabilities: unknown } }).result;
    assert.deepEqual([result.protocolVersion, result.capabilities], [version, ADVERTISED]);
  }

  // 2024-11-05 over HTTP+SSE, with the official v1 client.
  const client = new V1Client({ name: 'trial-2024', version: '1.0.0' });
  await client.connect(new V1SSE(new URL(gw.url), { fetch: fetch2024 }));
  t.after(() => client.close());
  assert.deepEqual(client.getServerCapabilities(), ADVERTISED);
  // tasks/list stays unserved, as before.
  const list = await post(gw.url, modernBody(3, 'tasks/list'), modernHeaders('tasks/list'));
  assert.deepEqual(list.json, { jsonrpc: '2.0', id: 3, error: { code: -32601, message: 'Method not found: tasks/list' } });
});

test('the 2026-07-28 form, the io.modelcontextprotocol/tasks extension, is not in server/discover; other extensions stay', () => {
  const of = (capabilities: Record<string, unknown>) => ({ serverInfo: { name: 'u', version: '1' }, upstreamRevision: '2026-07-28', capabilities });
  const ours = { 'io.modelcontextprotocol/tasks': {} };
  const told = (capabilities: Record<string, unknown>) => discoverResult(advertisedDescription(of(capabilities)), ['2026-07-28']).capabilities;
  assert.deepEqual(told({ tools: {}, extensions: { ...ours, 'example.com/x': { a: 1 } } }), { tools: {}, extensions: { 'example.com/x': { a: 1 } } });
  assert.deepEqual(told({ tools: {}, tasks: {}, extensions: ours }), { tools: {} });
  assert.deepEqual(told({ tools: {}, extensions: { 'example.com/x': {} } }), { tools: {}, extensions: { 'example.com/x': {} } });
  // Nothing to leave out: the description itself, not a copy.
  const plain = of({ tools: {} });
  assert.equal(advertisedDescription(plain), plain);
});

test('a tools/call with a task param is served as a plain call, in a 2025-11-25 session and in 2026-07-28', async (t) => {
  const gw = await gateway(t, { stdio: everythingStdioCommand(), dialects: ['2026-07-28', '2025-03-26'] });
  const call = { name: 'echo', arguments: { message: 'hi' }, task: { ttl: 60_000 } };
  const headers = await initSession(gw.url, '2025-11-25');
  const legacy = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }, headers);
  assert.equal(legacy.status, 200);
  assert.deepEqual(legacy.json, { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'Echo: hi' }] } });
  const modern = await post(gw.url, modernBody(2, 'tools/call', call), modernHeaders('tools/call', 'echo'));
  assert.equal(modern.status, 200);
  assert.deepEqual((modern.json as { result: unknown }).result, {
    content: [{ type: 'text', text: 'Echo: hi' }],
    resultType: 'complete',
    _meta: { 'io.modelcontextprotocol/serverInfo': gw.upstream.describe().serverInfo },
  });
});
