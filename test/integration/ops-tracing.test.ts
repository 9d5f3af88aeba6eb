// W3C trace context from the client to upstreams: taken from `_meta` (first) or the HTTP
// `traceparent` header, passed on unchanged while tracing is off (HTTP header and `_meta` to an
// HTTP upstream, `_meta` to a stdio child, every era), and with tracing on the server span is a
// child of the caller's context.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configGateway, RAW_SERVER, openSession, opsHttp, tracedGateway } from '../helpers/ops.js';
import { attrs, receiver } from '../helpers/otlp.js';

const CALLER = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const IN_META = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

/** What the fixture's `trace` tool reports it received. */
function seen(json: unknown): { header: string | null; meta: string | null } {
  return JSON.parse((json as { result: { content: Array<{ text: string }> } }).result.content[0].text) as { header: string | null; meta: string | null };
}

test('tracing off: the caller’s traceparent reaches an HTTP upstream (header and _meta) and a stdio child (_meta), _meta before the header, in both eras', async (t) => {
  const upstream = await opsHttp(t);
  const gw = await configGateway(t, {
    upstreams: { web: { url: upstream.url }, kid: { command: process.execPath, args: [RAW_SERVER, 'stdio'] } },
  });
  const [web, kid] = gw.urls;
  const modern = (url: string, extra: Record<string, string>, meta: Record<string, unknown> = {}) =>
    post(url, modernBody(1, 'tools/call', { name: 'trace', arguments: {}, _meta: meta }), { ...modernHeaders('tools/call', 'trace'), ...extra });

  assert.deepEqual(seen((await modern(web, { traceparent: CALLER })).json), { header: CALLER, meta: CALLER });
  assert.deepEqual(seen((await modern(web, { traceparent: CALLER }, { traceparent: IN_META })).json), { header: IN_META, meta: IN_META });
  assert.deepEqual(seen((await modern(kid, { traceparent: CALLER })).json), { header: null, meta: CALLER });
  // A malformed value is dropped, not forwarded.
  assert.deepEqual(seen((await modern(web, { traceparent: '00-zz-yy-01' })).json), { header: null, meta: null });

  const { headers: h } = await openSession(kid);
  const legacy = await post(kid, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'trace', arguments: {} } }, { ...h, traceparent: CALLER });
  assert.deepEqual(seen(legacy.json), { header: null, meta: CALLER });
  const meta = await post(kid, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'trace', arguments: {}, _meta: { traceparent: IN_META } } }, h);
  assert.deepEqual(seen(meta.json), { header: null, meta: IN_META });
});

test('tracing on: the server span continues the caller’s trace, and the upstream gets the client span as its parent', async (t) => {
  const { rx, gw } = await tracedGateway(t);
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'trace', arguments: {} }), { ...modernHeaders('tools/call', 'trace'), traceparent: CALLER });
  const got = seen(r.json);
  const spans = await rx.named('tools/call trace', 2);
  const server = spans.find((s) => s.kind === 2)!;
  const client = spans.find((s) => s.kind === 3)!;
  assert.deepEqual([server.traceId, server.parentSpanId], ['4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7']);
  assert.deepEqual([client.traceId, client.parentSpanId], [server.traceId, server.spanId]);
  assert.deepEqual(got, {
    header: `00-${client.traceId}-${client.spanId}-01`,
    meta: `00-${client.traceId}-${client.spanId}-01`,
  });
  const a = attrs(server.attributes);
  assert.deepEqual(
    [a['mcp.method.name'], a['gen_ai.tool.name'], a['mcp.protocol.version'], a['switchyard.mount']],
    ['tools/call', 'trace', '2026-07-28', 'web'],
  );
});

test('tracing on: a client span to an HTTP upstream carries server.address and server.port of its URL; one to a stdio child carries neither', async (t) => {
  const rx = await receiver(t);
  const upstream = await opsHttp(t);
  const gw = await configGateway(
    t,
    { admin: false, upstreams: { web: { url: upstream.url }, kid: { command: process.execPath, args: [RAW_SERVER, 'stdio'] } } },
    { operations: true, env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${rx.url}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: '20' } },
  );
  const [web, kid] = gw.urls;
  const call = (url: string) => post(url, modernBody(1, 'tools/call', { name: 'trace', arguments: {} }), modernHeaders('tools/call', 'trace'));
  assert.equal((await call(web)).status, 200);
  assert.equal((await call(kid)).status, 200);
  const clients = (await rx.named('tools/call trace', 4)).filter((s) => s.kind === 3);
  const of = (upstreamName: string) => clients.find((s) => attrs(s.attributes)['switchyard.upstream'] === upstreamName)!;
  const raw = (upstreamName: string, key: string) => of(upstreamName).attributes.find((a) => a.key === key)?.value;
  const port = Number(new URL(upstream.url).port);
  assert.ok(port > 0);
  // @see telemetry digest §2 and §8: server.address / server.port are the upstream's; network.transport tcp
  // OTLP/JSON as exported: the port an integer attribute, as the conventions type it.
  const keys = ['network.transport', 'server.address', 'server.port'];
  assert.deepEqual(
    keys.map((k) => raw('web', k)),
    [{ stringValue: 'tcp' }, { stringValue: '127.0.0.1' }, { intValue: port }],
  );
  assert.deepEqual(
    keys.map((k) => raw('kid', k)),
    [{ stringValue: 'pipe' }, undefined, undefined],
  );
});
