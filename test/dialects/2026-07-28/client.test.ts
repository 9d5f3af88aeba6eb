// Golden tests of the 2026-07-28 client side, with no sockets: given a context, the exact params,
// headers, discovery and listen requests Switchyard sends a stateless upstream, each also valid
// against the revision's schema.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statelessClient as c } from '../../../dialects/2026-07-28/client.js';
import type { OutboundContext } from '../../../src/core/era.js';
import { schemaOf } from '../../helpers/schemas.js';

const check = schemaOf('2026-07-28');
/** As sent: a JSON-RPC request (or notification) around `{ method, params }`. */
const rpc = (m: object) => ({ jsonrpc: '2.0', id: 1, ...m });
const note = (m: object) => ({ jsonrpc: '2.0', ...m });
const GW = { name: 'switchyard', version: '9.9.9' };
const V = 'io.modelcontextprotocol/protocolVersion';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const INFO = 'io.modelcontextprotocol/clientInfo';
const LEVEL = 'io.modelcontextprotocol/logLevel';

const ctx = (o: Partial<OutboundContext> = {}): OutboundContext => ({
  method: 'tools/call',
  params: { name: 'echo', arguments: { message: 'hi' } },
  clientInfo: { name: 'ada', version: '1.0.0' },
  clientCapabilities: { elicitation: {} },
  logLevel: undefined,
  progressToken: undefined,
  ...o,
});

test('server/discover carries the envelope with the gateway as client (2026-07-28 basic#meta, server/discover)', () => {
  const m = c.discover(GW);
  assert.deepEqual(m, { method: 'server/discover', params: { _meta: { [V]: '2026-07-28', [CAPS]: {}, [INFO]: GW } } });
  check('DiscoverRequest', rpc(m));
  check('JSONRPCRequest', rpc(m));
});

test('a request gets the client context as its envelope; our progress token replaces the client’s (basic#meta, basic/patterns/progress)', () => {
  const p = c.requestParams(
    ctx({
      params: { name: 'echo', arguments: { message: 'hi' }, _meta: { progressToken: 'client-7', 'com.example/trace': 'keep', [V]: 'stale', 'dev.mcp/x': 1 } },
      logLevel: 'info',
      progressToken: 'client-7',
      traceContext: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'a=1' },
    }),
    GW,
    42,
  );
  assert.deepEqual(p, {
    name: 'echo',
    arguments: { message: 'hi' },
    _meta: {
      'com.example/trace': 'keep',
      progressToken: 42,
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'a=1',
      [V]: '2026-07-28',
      [CAPS]: { elicitation: {} },
      [INFO]: { name: 'ada', version: '1.0.0' },
      [LEVEL]: 'info',
    },
  });
  check('CallToolRequest', rpc({ method: 'tools/call', params: p }));
});

test('a client without clientInfo is sent as the gateway; no progress token, no log level, no trace: none sent', () => {
  const p = c.requestParams(ctx({ method: 'tools/list', params: { cursor: 'c2' }, clientInfo: undefined, clientCapabilities: {} }), GW);
  assert.deepEqual(p, { cursor: 'c2', _meta: { [V]: '2026-07-28', [CAPS]: {}, [INFO]: GW } });
  check('ListToolsRequest', rpc({ method: 'tools/list', params: p }));
});

test('mirrored headers: version, method, Mcp-Name per method, Mcp-Param-* per annotation (basic/transports/streamable-http, server/tools#x-mcp-header)', () => {
  assert.deepEqual(c.headers('tools/list', {}, []), { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' });
  assert.deepEqual(c.headers('resources/read', { uri: 'data://greeting' }, []), {
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'resources/read',
    'mcp-name': 'data://greeting',
  });
  assert.deepEqual(c.headers('prompts/get', { name: 'greet' }, []), { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'prompts/get', 'mcp-name': 'greet' });
  const ann = [
    { header: 'Region', property: 'region', type: 'string' },
    { header: 'Count', property: 'count', type: 'integer' },
    { header: 'Dry', property: 'dry', type: 'boolean' },
    { header: 'Gone', property: 'gone', type: 'string' },
    { header: 'Nothing', property: 'nothing', type: 'string' },
  ];
  assert.deepEqual(c.headers('tools/call', { name: 'Grüße', arguments: { region: ' eu ', count: 3, dry: false, gone: null } }, ann), {
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': '=?base64?R3LDvMOfZQ==?=',
    'mcp-param-region': '=?base64?IGV1IA==?=',
    'mcp-param-count': '3',
    'mcp-param-dry': 'false',
  });
});

test('a value that itself looks encoded is encoded again, so that the server decodes it to itself (value encoding)', () => {
  assert.equal(c.headers('tools/call', { name: '=?base64?YQ==?=' }, [])['mcp-name'], '=?base64?PT9iYXNlNjQ/WVE9PT89?=');
  assert.equal(c.headers('tools/call', { name: '' }, [])['mcp-name'], '');
});

test('subscriptions/listen names the filter, with the gateway envelope (basic/patterns/subscriptions)', () => {
  const m = c.listen({ toolsListChanged: true, resourceSubscriptions: ['data://a'] }, GW);
  assert.deepEqual(m, {
    method: 'subscriptions/listen',
    params: { notifications: { toolsListChanged: true, resourceSubscriptions: ['data://a'] }, _meta: { [V]: '2026-07-28', [CAPS]: {}, [INFO]: GW } },
  });
  check('SubscriptionsListenRequest', rpc(m));
});

test('era evidence: a DiscoverResult naming 2026-07-28, or -32022 listing it; never a code alone (basic/versioning)', () => {
  assert.equal(c.recognises({ result: { supportedVersions: ['2026-07-28'], capabilities: {} } }), true);
  assert.equal(c.recognises({ result: { supportedVersions: ['2025-11-25'], capabilities: {} } }), false);
  assert.equal(c.recognises({ result: { tools: [] } }), false);
  assert.equal(c.recognises({ error: { code: -32022, message: 'x', data: { supported: ['2026-07-28'], requested: '2027-01-01' } } }), true);
  assert.equal(c.recognises({ error: { code: -32022, message: 'x' } }), false);
  assert.equal(c.recognises({ error: { code: -32601, message: 'Method not found', data: { supported: ['2026-07-28'] } } }), false);
});

test('a DiscoverResult becomes the description; serverInfo comes from _meta (server/discover)', () => {
  const result = {
    supportedVersions: ['2026-07-28'],
    capabilities: { tools: { listChanged: true } },
    instructions: 'Be kind.',
    _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'up', version: '2.0.0' } },
    resultType: 'complete',
    ttlMs: 0,
    cacheScope: 'public',
  };
  check('DiscoverResult', result);
  assert.deepEqual(c.describe(result, 'fallback'), {
    serverInfo: { name: 'up', version: '2.0.0' },
    capabilities: { tools: { listChanged: true } },
    upstreamRevision: '2026-07-28',
    instructions: 'Be kind.',
  });
  assert.deepEqual(c.describe({ supportedVersions: ['2026-07-28'], capabilities: [] }, 'fallback'), {
    serverInfo: { name: 'fallback', version: 'unknown' },
    capabilities: {},
    upstreamRevision: '2026-07-28',
  });
});

test('notifications lose the upstream listen’s _meta; cancellation over stdio is notifications/cancelled (basic/patterns/cancellation)', () => {
  assert.deepEqual(c.notificationParams({ uri: 'data://a', _meta: { 'io.modelcontextprotocol/subscriptionId': 3 } }), { uri: 'data://a' });
  const m = c.cancelled(5, 'client cancelled');
  assert.deepEqual(m, { method: 'notifications/cancelled', params: { requestId: 5, reason: 'client cancelled' } });
  check('CancelledNotification', note(m));
});
