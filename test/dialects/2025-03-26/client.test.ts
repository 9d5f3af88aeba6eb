// Golden tests of the initialize-era client side, with no sockets: the exact handshake, session
// headers per revision, request params and descriptions Switchyard produces for a 2025-era
// upstream session, each also valid against the revision's schema.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sessionClient as c } from '../../../dialects/2025-03-26/client.js';
import type { OutboundContext } from '../../../src/core/era.js';
import { schemaOf } from '../../helpers/schemas.js';

/** As sent: a JSON-RPC request (or notification) around `{ method, params }`. */
const rpc = (m: object) => ({ jsonrpc: '2.0', id: 1, ...m });
const note = (m: object) => ({ jsonrpc: '2.0', ...m });
const GW = { name: 'switchyard', version: '9.9.9' };

const ctx = (o: Partial<OutboundContext> = {}): OutboundContext => ({
  method: 'tools/call',
  params: { name: 'echo', arguments: { message: 'hi' } },
  clientInfo: { name: 'ada', version: '1.0.0' },
  clientCapabilities: { elicitation: {} },
  logLevel: undefined,
  progressToken: undefined,
  ...o,
});

test('initialize offers the newest revision, the given capabilities and clientInfo (2025-11-25 basic/lifecycle#initialization)', () => {
  const m = c.initialize({ capabilities: c.sharedCapabilities, clientInfo: GW });
  assert.deepEqual(m, { method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { elicitation: {}, sampling: {} }, clientInfo: GW } });
  schemaOf('2025-11-25')('InitializeRequest', rpc(m));
  const old = c.initialize({ revision: '2025-03-26', capabilities: {}, clientInfo: GW });
  assert.deepEqual(old, { method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: GW } });
  schemaOf('2025-03-26')('InitializeRequest', rpc(old));
  const done = c.initialized();
  assert.deepEqual(done, { method: 'notifications/initialized', params: {} });
  schemaOf('2025-11-25')('InitializedNotification', note(done));
});

test('MCP-Protocol-Version from 2025-06-18 on, Mcp-Session-Id when the server issued one (basic/transports#protocol-version-header, #session-management)', () => {
  assert.deepEqual(c.sessionHeaders({ id: 'abc', revision: '2025-11-25' }), { 'mcp-session-id': 'abc', 'mcp-protocol-version': '2025-11-25' });
  assert.deepEqual(c.sessionHeaders({ id: 'abc', revision: '2025-06-18' }), { 'mcp-session-id': 'abc', 'mcp-protocol-version': '2025-06-18' });
  assert.deepEqual(c.sessionHeaders({ id: 'abc', revision: '2025-03-26' }), { 'mcp-session-id': 'abc' });
  assert.deepEqual(c.sessionHeaders({ revision: '2025-11-25' }), { 'mcp-protocol-version': '2025-11-25' });
});

test('params: other eras’ reserved _meta keys, inputResponses and requestState removed; our progress token (basic/utilities/progress)', () => {
  const p = c.requestParams(
    ctx({
      params: {
        name: 'echo',
        arguments: { message: 'hi' },
        inputResponses: { 'input-1': { action: 'accept' } },
        requestState: 'swy1.x.y',
        _meta: { progressToken: 'client-7', 'io.modelcontextprotocol/clientInfo': { name: 'x', version: '1' }, 'com.example/keep': true },
      },
      progressToken: 'client-7',
      traceContext: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    }),
    9,
  );
  assert.deepEqual(p, {
    name: 'echo',
    arguments: { message: 'hi' },
    _meta: { 'com.example/keep': true, progressToken: 9, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  });
  schemaOf('2025-11-25')('CallToolRequest', rpc({ method: 'tools/call', params: p }));
  assert.deepEqual(c.requestParams(ctx({ params: { name: 'echo', _meta: { progressToken: 1 } } })), { name: 'echo' });
});

test('the negotiated revision must be one Switchyard speaks (basic/lifecycle#version-negotiation)', () => {
  assert.equal(c.negotiated({ protocolVersion: '2025-06-18' }), '2025-06-18');
  assert.equal(c.negotiated({ protocolVersion: '2024-11-05' }), '2024-11-05');
  assert.throws(() => c.negotiated({ protocolVersion: '2030-01-01' }), {
    code: 'SWY_ERR_UPSTREAM_PROTOCOL',
    message: 'Upstream protocol error: initialize settled on "2030-01-01", which Switchyard does not speak',
  });
  assert.throws(() => c.negotiated({}), { code: 'SWY_ERR_UPSTREAM_PROTOCOL' });
});

test('an InitializeResult becomes the description', () => {
  const result = { protocolVersion: '2025-11-25', capabilities: { tools: {}, logging: {} }, serverInfo: { name: 'up', version: '3' }, instructions: 'Hi.' };
  schemaOf('2025-11-25')('InitializeResult', result);
  assert.deepEqual(c.describe(result, 'fallback'), {
    serverInfo: { name: 'up', version: '3' },
    capabilities: { tools: {}, logging: {} },
    upstreamRevision: '2025-11-25',
    instructions: 'Hi.',
  });
  assert.deepEqual(c.describe({ protocolVersion: '2025-03-26', serverInfo: { name: 1 } }, 'fallback'), {
    serverInfo: { name: 'fallback', version: 'unknown' },
    capabilities: {},
    upstreamRevision: '2025-03-26',
  });
});

test('notifications lose _meta; cancellation names our id (basic/utilities/cancellation)', () => {
  assert.deepEqual(c.notificationParams({ uri: 'data://a', _meta: { x: 1 } }), { uri: 'data://a' });
  const m = c.cancelled('c7', 'client cancelled');
  assert.deepEqual(m, { method: 'notifications/cancelled', params: { requestId: 'c7', reason: 'client cancelled' } });
  schemaOf('2025-11-25')('CancelledNotification', note(m));
});
