// The list cache end to end: a real stdio child behind the gateway is asked for its tool list
// once, however many clients list, until it announces a change.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import path from 'node:path';
import { CHANNELS, type UpstreamCallMessage } from '../../src/core/diagnostics.js';
import { REPO_ROOT, gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/conformance-server/server.mjs');

test('tools/list reaches the child once for every client era until the child says tools/list_changed', async (t) => {
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${FIXTURE}" stdio` });
  const upstreamLists: string[] = [];
  const onCall = (m: unknown) => {
    const msg = m as UpstreamCallMessage;
    if (msg.ctx.method === 'tools/list') upstreamLists.push(msg.upstream);
  };
  diagnostics.subscribe(CHANNELS.upstreamCallStart, onCall);
  t.after(() => diagnostics.unsubscribe(CHANNELS.upstreamCallStart, onCall));

  const list2026 = async () => {
    const r = await post(gw.url, modernBody(1, 'tools/list'), modernHeaders('tools/list'));
    assert.equal(r.status, 200, r.text);
    return (r.json as { result: { tools: Array<{ name: string }>; ttlMs: number; cacheScope: string } }).result;
  };
  const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await post(
    gw.url,
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    H,
  );
  const sh = { ...H, 'mcp-session-id': String(init.headers['mcp-session-id']), 'mcp-protocol-version': '2025-11-25' };
  const list2025 = async () => {
    const r = await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, sh);
    assert.equal(r.status, 200, r.text);
    return (r.json as { result: { tools: Array<{ name: string }> } }).result;
  };

  const first = await list2026();
  const again = await list2026();
  const session = await list2025();
  assert.deepEqual(again.tools, first.tools);
  assert.deepEqual(session.tools, first.tools);
  // One fetch for the 2026-07-28 requests, one for the 2025-11-25 session (another revision:
  // another upstream session shape).
  assert.deepEqual(upstreamLists, ['default', 'default']);
  // 2026-07-28 results still carry the caching fields, and 2025 results do not.
  assert.equal(typeof again.ttlMs, 'number');
  assert.equal(typeof again.cacheScope, 'string');
  assert.equal('ttlMs' in session, false);

  // The child announces a change: the next list goes to it again.
  const changed = await post(
    gw.url,
    modernBody(3, 'tools/call', { name: 'test_trigger_tool_change', arguments: {} }),
    modernHeaders('tools/call', 'test_trigger_tool_change'),
  );
  assert.equal(changed.status, 200, changed.text);
  for (let i = 0; i < 100 && upstreamLists.length < 3; i++) {
    await list2026();
    if (upstreamLists.length < 3) await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(upstreamLists, ['default', 'default', 'default']);
});
