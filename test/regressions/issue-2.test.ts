// Regressions found while building the first issue. Each names the fault it guards against.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { post } from '../helpers/http.js';

test('initialize sent with an Mcp-Method header and no modern _meta opens a 2025 session (mcp-remote 0.15.1 does this)', async (t) => {
  const gw = await gateway(t);
  const r = await post(
    gw.url,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'mcp-remote-fallback-test', version: '0.0.0' } },
    },
    { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-method': 'initialize' },
  );
  assert.equal(r.status, 200);
  assert.match(String(r.headers['mcp-session-id']), /^[0-9a-f-]{36}$/);
  assert.equal((r.json as { result: { protocolVersion: string } }).result.protocolVersion, '2025-11-25');
});

test('ids and progress tokens beyond 2^53 are echoed as exact integer literals, not as marker strings', async (t) => {
  const gw = await gateway(t);
  const body = `{"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/call","params":{"name":"slow","arguments":{"steps":1,"stepMs":0},"_meta":{"progressToken":9007199254740993,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`;
  const r = await post(gw.url, body, {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': 'slow',
  });
  assert.equal(r.status, 200);
  assert.ok(r.text.includes('"progressToken":9007199254740993'), r.text);
  assert.ok(r.text.includes('"id":9223372036854775807,'), r.text);
  assert.ok(!r.text.includes('swy-big'), r.text);
});
