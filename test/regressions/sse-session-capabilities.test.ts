// Found by a trial (2026-12-04): an HTTP+SSE (2024-11-05) client's capabilities and clientInfo
// never reached an HTTP upstream served with one upstream session per client session. The
// stream subscribed to the session's notifications at its GET, before `initialize`, and that
// subscription opened the upstream session with no capabilities; later requests reused it.
// server-everything lists trigger-sampling-request and get-roots-list only to a client that
// declared sampling and roots, so its tools/list shows what the upstream session was told.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { openHttpSseSession, send } from '../helpers/http.js';
import { everythingHttp } from '../helpers/servers.js';

test('an HTTP+SSE client’s declared sampling and roots reach a per-session HTTP upstream: its tools/list has the tools that need them', async (t) => {
  const upstream = await everythingHttp(t, 'streamableHttp');
  const gw = await gateway(t, { upstreamUrl: upstream.url, dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  const origin = new URL(gw.url).origin;
  const { sse, to } = await openHttpSseSession(t, origin, { sampling: {}, roots: {} }, 'sse-trial');
  const h = { 'content-type': 'application/json' };
  assert.equal((await send(to, 'POST', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), h)).status, 202);
  let list: { id?: number; result?: { tools: Array<{ name: string }> } } = {};
  // Skip notifications the upstream may send first (list changes, log messages).
  for (let i = 0; i < 20 && list.id !== 1; i++) list = JSON.parse((await sse.next(10_000)).data) as typeof list;
  const names = (list.result?.tools ?? []).map((x) => x.name);
  assert.ok(names.includes('trigger-sampling-request'), names.join(', '));
  assert.ok(names.includes('get-roots-list'), names.join(', '));
});
