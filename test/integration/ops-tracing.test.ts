// W3C trace context from the client to upstreams: taken from `_meta` (first) or the HTTP
// `traceparent` header, passed on unchanged while tracing is off (HTTP header and `_meta` to an
// HTTP upstream, `_meta` to a stdio child, every era), and with tracing on the server span is a
// child of the caller's context.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configGateway, OPS_SERVER, opsHttp } from '../helpers/ops.js';

const H25 = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const CALLER = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const IN_META = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

/** What the fixture's `trace` tool reports it received. */
function seen(json: unknown): { header: string | null; meta: string | null } {
  return JSON.parse((json as { result: { content: Array<{ text: string }> } }).result.content[0].text) as { header: string | null; meta: string | null };
}

async function session(url: string): Promise<Record<string, string>> {
  const r = await post(
    url,
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    H25,
  );
  return { ...H25, 'mcp-session-id': String(r.headers['mcp-session-id']), 'mcp-protocol-version': '2025-06-18' };
}

test('tracing off: the caller’s traceparent reaches an HTTP upstream (header and _meta) and a stdio child (_meta), _meta before the header, in both eras', async (t) => {
  const upstream = await opsHttp(t);
  const gw = await configGateway(t, {
    upstreams: { web: { url: upstream.url }, kid: { command: process.execPath, args: [OPS_SERVER, 'stdio'] } },
  });
  const [web, kid] = gw.urls;
  const modern = (url: string, extra: Record<string, string>, meta: Record<string, unknown> = {}) =>
    post(url, modernBody(1, 'tools/call', { name: 'trace', arguments: {}, _meta: meta }), { ...modernHeaders('tools/call', 'trace'), ...extra });

  assert.deepEqual(seen((await modern(web, { traceparent: CALLER })).json), { header: CALLER, meta: CALLER });
  assert.deepEqual(seen((await modern(web, { traceparent: CALLER }, { traceparent: IN_META })).json), { header: IN_META, meta: IN_META });
  assert.deepEqual(seen((await modern(kid, { traceparent: CALLER })).json), { header: null, meta: CALLER });
  // A malformed value is dropped, not forwarded.
  assert.deepEqual(seen((await modern(web, { traceparent: '00-zz-yy-01' })).json), { header: null, meta: null });

  const h = await session(kid);
  const legacy = await post(kid, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'trace', arguments: {} } }, { ...h, traceparent: CALLER });
  assert.deepEqual(seen(legacy.json), { header: null, meta: CALLER });
  const meta = await post(kid, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'trace', arguments: {}, _meta: { traceparent: IN_META } } }, h);
  assert.deepEqual(seen(meta.json), { header: null, meta: IN_META });
});

test('tracing on: the server span continues the caller’s trace, and the upstream gets the client span as its parent', async (t) => {
  const docs: Array<{ resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }> }> = [];
  const waiters = new Set<() => void>();
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      docs.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as (typeof docs)[number]);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => receiver.close(() => r())));
  const upstream = await opsHttp(t);
  const gw = await configGateway(
    t,
    { admin: false, upstreams: { web: { url: upstream.url } } },
    {
      operations: true,
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: '20' },
    },
  );
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'trace', arguments: {} }), { ...modernHeaders('tools/call', 'trace'), traceparent: CALLER });
  const got = seen(r.json);
  const spans = () => docs.flatMap((d) => d.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans))).filter((s) => s.name === 'tools/call trace');
  await new Promise<void>((resolve) => {
    const check = () => {
      if (spans().length >= 2) {
        waiters.delete(check);
        resolve();
      }
    };
    waiters.add(check);
    check();
  });
  const server = spans().find((s) => s.kind === 2)!;
  const client = spans().find((s) => s.kind === 3)!;
  assert.deepEqual([server.traceId, server.parentSpanId], ['4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7']);
  assert.deepEqual([client.traceId, client.parentSpanId], [server.traceId, server.spanId]);
  assert.deepEqual(got, { header: `00-${String(client.traceId)}-${String(client.spanId)}-01`, meta: `00-${String(client.traceId)}-${String(client.spanId)}-01` });
  const attrs = Object.fromEntries((server.attributes as Array<{ key: string; value: Record<string, unknown> }>).map((a) => [a.key, Object.values(a.value)[0]]));
  assert.deepEqual(
    [attrs['mcp.method.name'], attrs['gen_ai.tool.name'], attrs['mcp.protocol.version'], attrs['switchyard.mount']],
    ['tools/call', 'trace', '2026-07-28', 'web'],
  );
});
