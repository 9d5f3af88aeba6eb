// Found by a trial (2026-12-04, helper-21): logging/setLevel answered {} through an upstream that
// declares no `logging` capability, so the session's client was told it could set a level for
// log messages the server never sends (2025-06-18 server/utilities/logging#capabilities).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { post } from '../helpers/http.js';

const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function session(url: string): Promise<{ sid: string; caps: Record<string, unknown> }> {
  const init = await post(
    url,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'set-level', version: '1' } },
    },
    H,
  );
  const sid = init.headers['mcp-session-id'] as string;
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { ...H, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
  return { sid, caps: (init.json as { result: { capabilities: Record<string, unknown> } }).result.capabilities };
}

test('logging/setLevel through an upstream without the logging capability: -32601; with it (the demo): {}', async (t) => {
  const child = `"${process.execPath}" "${path.join(REPO_ROOT, 'test/fixtures/asking-server.mjs')}"`;
  const bare = await gateway(t, { stdio: child });
  const a = await session(bare.url);
  assert.equal(a.caps.logging, undefined);
  const refused = await post(
    bare.url,
    { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'info' } },
    { ...H, 'mcp-session-id': a.sid, 'mcp-protocol-version': '2025-06-18' },
  );
  assert.deepEqual(refused.json, { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found: logging/setLevel' } });

  const demo = await gateway(t);
  const b = await session(demo.url);
  assert.deepEqual(b.caps.logging, {});
  const ok = await post(
    demo.url,
    { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'info' } },
    { ...H, 'mcp-session-id': b.sid, 'mcp-protocol-version': '2025-06-18' },
  );
  assert.deepEqual(ok.json, { jsonrpc: '2.0', id: 2, result: {} });
});
