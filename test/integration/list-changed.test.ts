// A list-changed notification from upstreams of each era reaches clients of each era the way
// their era expects: a 2026-07-28 subscriptions/listen stream, the 2025 GET stream, the
// 2024-11-05 SSE stream.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import type { GatewayOptions } from '../../src/gateway.js';
import { REPO_ROOT, gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, openSse, post, type SseReader } from '../helpers/http.js';
import { conformanceHttp } from '../helpers/servers.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/conformance-server/server.mjs');

async function until(r: SseReader, method: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 50; i++) {
    const ev = await r.next(10_000);
    if (!ev.data) continue;
    const m = JSON.parse(ev.data) as Record<string, unknown>;
    if (m.method === method) return m;
  }
  throw new Error(`no ${method}`);
}

const UPSTREAMS: Array<{ name: string; opts: (t: { after(fn: () => void): void }) => Promise<Partial<GatewayOptions>> }> = [
  { name: 'stdio child', opts: async () => ({ stdio: `"${process.execPath}" "${FIXTURE}" stdio` }) },
  { name: '2025 HTTP', opts: async (t) => ({ upstreamUrl: await conformanceHttp(t, '2025') }) },
  { name: '2026-07-28 HTTP', opts: async (t) => ({ upstreamUrl: await conformanceHttp(t, '2026') }) },
];

for (const up of UPSTREAMS) {
  test(`tools/list_changed from a ${up.name} upstream reaches 2026, 2025 and 2024-11-05 clients`, async (t) => {
    const gw = await gateway(t, { ...(await up.opts(t)), dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
    const base = gw.url.replace(/\/mcp$/, '');

    const listen = await openSse(
      gw.url,
      'POST',
      modernHeaders('subscriptions/listen'),
      JSON.stringify(modernBody('L1', 'subscriptions/listen', { notifications: { toolsListChanged: true } })),
    );
    t.after(() => listen.close());
    const ack = JSON.parse((await listen.next()).data) as { method: string; params: { notifications: unknown } };
    assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
    assert.deepEqual(ack.params.notifications, { toolsListChanged: true });

    const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await post(
      gw.url,
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
      H,
    );
    const sh = { ...H, 'mcp-session-id': String(init.headers['mcp-session-id']), 'mcp-protocol-version': '2025-11-25' };
    const get = await openSse(gw.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': sh['mcp-session-id'], 'mcp-protocol-version': '2025-11-25' });
    t.after(() => get.close());

    const sse = await openSse(`${base}/sse`, 'GET', { accept: 'text/event-stream' });
    t.after(() => sse.close());
    const endpoint = (await sse.next()).data;
    await post(
      new URL(endpoint, `${base}/sse`).href,
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
      { 'content-type': 'application/json' },
    );
    await sse.next();

    // Let the upstream-side subscriptions settle (a listen or GET stream upstream).
    await new Promise((r) => setTimeout(r, 300));
    const r = await post(
      gw.url,
      modernBody(2, 'tools/call', { name: 'test_trigger_tool_change', arguments: {} }),
      modernHeaders('tools/call', 'test_trigger_tool_change'),
    );
    assert.equal(r.status, 200, r.text);

    const m26 = await until(listen, 'notifications/tools/list_changed');
    assert.equal((m26.params as { _meta: Record<string, unknown> })._meta['io.modelcontextprotocol/subscriptionId'], 'L1');
    assert.equal((await until(get, 'notifications/tools/list_changed')).method, 'notifications/tools/list_changed');
    assert.equal((await until(sse, 'notifications/tools/list_changed')).method, 'notifications/tools/list_changed');
  });
}
