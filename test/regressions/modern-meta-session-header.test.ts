// A 2026-07-28 request (modern `_meta`) that carries an `Mcp-Session-Id` is served statelessly on
// a dual-era endpoint, the header ignored and never echoed (stateless-2026-07-28 §10: a 2026-07-28
// server ignores it; the official v2 server classifies by the body the same way). Found by a
// trial: the header alone sent it to the 2025 dialect, which answered 404 -32001 `Session not
// found` (a stale or proxied id) or 400 `Unsupported protocol version: 2026-07-28` (a live one),
// where a 2026-only gateway served the same request.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

test('a modern request with a stale or a live Mcp-Session-Id is served statelessly; the session still serves its own requests', async (t) => {
  const gw = await gateway(t);
  const stale = await post(gw.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), {
    ...modernHeaders('tools/call', 'echo'),
    'mcp-session-id': 'no-such-session',
  });
  assert.equal(stale.status, 200, stale.text);
  assert.equal(stale.headers['mcp-session-id'], undefined);
  const r = (stale.json as { result: { content: Array<{ text: string }>; resultType: string } }).result;
  assert.equal(r.content[0]?.text, 'Echo: hi');
  assert.equal(r.resultType, 'complete');

  const h25 = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await post(
    gw.url,
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    h25,
  );
  const sid = String(init.headers['mcp-session-id']);
  const live = await post(gw.url, modernBody(2, 'tools/list'), { ...modernHeaders('tools/list'), 'mcp-session-id': sid });
  assert.equal(live.status, 200, live.text);
  assert.equal(live.headers['mcp-session-id'], undefined);
  assert.equal((live.json as { result: { resultType: string } }).result.resultType, 'complete');

  const own = await post(gw.url, { jsonrpc: '2.0', id: 3, method: 'ping' }, { ...h25, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
  assert.deepEqual(own.json, { jsonrpc: '2.0', id: 3, result: {} });
});
