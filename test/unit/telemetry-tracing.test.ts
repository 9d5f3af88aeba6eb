// Tracing against a real in-process OTLP/HTTP receiver: one trace from the client's traceparent
// through the SERVER span to the CLIENT span and on to the upstream; the environment switch; and
// no OpenTelemetry module loaded while tracing is off (checked in child processes).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import pino from 'pino';
import { channels } from '../../src/core/diagnostics.js';
import { PeerRpcError, SwitchyardError } from '../../src/core/errors.js';
import { sessionLogId } from '../../src/core/identity.js';
import { compose, type Dispatch } from '../../src/core/interceptor.js';
import type { RequestContext } from '../../src/core/request.js';
import { createTracing, exporterFromEnv, tracingConfigFromEnv, type Tracing } from '../../src/telemetry/tracing.js';
import { attrs, receiver, type Receiver } from '../helpers/otlp.js';

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const TRACING_JS = pathToFileURL(path.resolve(HERE, '../../src/telemetry/tracing.js')).href;

const INBOUND_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const INBOUND_SPAN = '00f067aa0ba902b7';
const INBOUND = `00-${INBOUND_TRACE}-${INBOUND_SPAN}-01`;

function ctxOf(over: Partial<RequestContext> = {}): RequestContext {
  return {
    method: 'tools/call',
    params: { name: 'get-weather', arguments: { city: 'Oslo' } },
    protocolVersion: '2025-06-18',
    clientInfo: { name: 'c', version: '1' },
    clientCapabilities: {},
    logLevel: undefined,
    identity: null,
    mount: 'main',
    dialect: '2025-03-26',
    signal: new AbortController().signal,
    progressToken: undefined,
    onProgress() {},
    onLog() {},
    ask: undefined,
    ...over,
  };
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const STATUS_ERROR = 2;

async function tracingTo(
  t: { after(fn: () => Promise<void> | void): void },
  rx: Receiver,
  extra: Record<string, string> = {},
  more: Partial<Parameters<typeof createTracing>[0]> = {},
): Promise<Tracing> {
  const tracing = await createTracing({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_SERVICE_NAME: 'switchyard-test', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', ...extra },
    serviceVersion: '0.1.0',
    ...more,
  });
  t.after(() => tracing.close());
  return tracing;
}

/** One client request through the tracing interceptor to `upstream`, published as the gateway would. */
async function request(
  tracing: Tracing,
  ctx: RequestContext,
  upstream: Dispatch,
  end: Partial<{ code: SwitchyardError['code']; rpcCode: number; fault: 'client' | 'upstream' | 'internal'; error: unknown }> = {},
) {
  const startedAt = performance.now();
  channels.requestStart.publish({ ctx, startedAt });
  const afterStart = ctx.traceContext;
  const dispatch = compose(upstream, [tracing.interceptor]);
  try {
    await dispatch({ ...ctx, upstream: 'weather', component: { kind: 'tool', name: 'get-weather', upstream: 'weather' } });
  } catch {
    // The error travels in `end`, as the executor would publish it.
  }
  channels.requestEnd.publish({ ctx, startedAt, durationMs: performance.now() - startedAt, ...end });
  return afterStart;
}

test('a SERVER span continues the client trace, the CLIENT span is its child, and the upstream gets the client span as parent', async (t) => {
  const rx = await receiver(t);
  const tracing = await tracingTo(t, rx);
  assert.equal(tracing.enabled, true);
  channels.upstreamReady.publish({ upstream: 'weather', state: 'ready', revision: '2024-11-05', transport: 'stdio' });
  const seen: Array<RequestContext['traceContext']> = [];
  const upstream: Dispatch = async (ctx) => {
    seen.push(ctx.traceContext);
    return { content: [{ type: 'text', text: 'sunny' }] };
  };
  const ctx = ctxOf({ traceContext: { traceparent: INBOUND, tracestate: 'rojo=00f067aa0ba902b7' }, sessionKey: 'session-secret-1' });
  const afterStart = await request(tracing, ctx, upstream);
  await tracing.flush();

  const spans = rx.spans();
  assert.equal(spans.length, 2);
  const server = spans.find((s) => s.kind === SPAN_KIND_SERVER)!;
  const client = spans.find((s) => s.kind === SPAN_KIND_CLIENT)!;
  assert.equal(server.traceId, INBOUND_TRACE);
  assert.equal(client.traceId, INBOUND_TRACE);
  assert.equal(server.parentSpanId, INBOUND_SPAN);
  assert.equal(client.parentSpanId, server.spanId);
  // The W3C fields read off: the gateway's own trace contexts are its spans (read through getters).
  const w3c = (c: RequestContext['traceContext']) =>
    c?.tracestate !== undefined ? { traceparent: c?.traceparent, tracestate: c.tracestate } : { traceparent: c?.traceparent };
  assert.deepEqual(w3c(afterStart), { traceparent: `00-${INBOUND_TRACE}-${server.spanId}-01`, tracestate: 'rojo=00f067aa0ba902b7' });
  assert.deepEqual(seen.map(w3c), [{ traceparent: `00-${INBOUND_TRACE}-${client.spanId}-01`, tracestate: 'rojo=00f067aa0ba902b7' }]);
  // Serialized (a log line, a copy), a trace context shows those fields and nothing of the span behind it.
  assert.deepEqual(JSON.parse(JSON.stringify(afterStart)), w3c(afterStart));
  assert.deepEqual(JSON.parse(JSON.stringify(seen[0])), w3c(seen[0]));

  assert.equal(server.name, 'tools/call get-weather');
  assert.equal(client.name, 'tools/call get-weather');
  assert.deepEqual(attrs(server.attributes), {
    'mcp.method.name': 'tools/call',
    'mcp.protocol.version': '2025-06-18',
    'mcp.session.id': sessionLogId('session-secret-1'),
    'gen_ai.tool.name': 'get-weather',
    'gen_ai.operation.name': 'execute_tool',
    'switchyard.mount': 'main',
    'switchyard.dialect': '2025-03-26',
  });
  assert.deepEqual(attrs(client.attributes), {
    'mcp.method.name': 'tools/call',
    'gen_ai.tool.name': 'get-weather',
    'gen_ai.operation.name': 'execute_tool',
    'switchyard.upstream': 'weather',
    'mcp.protocol.version': '2024-11-05',
    'network.transport': 'pipe',
  });
  assert.equal(server.status?.code ?? 0, 0);
  assert.equal(rx.requests[0].path, '/v1/traces');
  assert.equal(rx.requests[0].headers['content-type'], 'application/json');
  const resource = rx.resourceAttributes();
  assert.equal(resource['service.name'], 'switchyard-test');
  assert.equal(resource['service.version'], '0.1.0');
});

test('attributes, in order: a 2026-07-28 tools/call (every attribute present), a prompts/get, and a request without an id or a mount', async (t) => {
  const rx = await receiver(t);
  const tracing = await tracingTo(t, rx);
  const ok: Dispatch = async () => ({ content: [] });
  const modern = { protocolVersion: '2026-07-28', dialect: '2026-07-28' };
  await request(tracing, ctxOf({ ...modern, rpcId: 12, traceContext: { traceparent: INBOUND } }), ok);
  await request(tracing, ctxOf({ method: 'prompts/get', params: { name: 'greet' }, rpcId: 'p-1', traceContext: { traceparent: INBOUND } }), ok);
  await request(tracing, ctxOf({ ...modern, rpcId: undefined, mount: undefined, traceContext: { traceparent: INBOUND } }), ok);
  await tracing.flush();
  // Key order as exported (the OTLP attribute list), client spans after their server span.
  const spans = rx.spans().map((s) => ({ kind: s.kind, name: s.name, keys: (s.attributes ?? []).map((a) => a.key), attributes: attrs(s.attributes) }));
  const of = (kind: number, i: number) => spans.filter((s) => s.kind === kind)[i];
  assert.deepEqual(of(SPAN_KIND_SERVER, 0), {
    kind: SPAN_KIND_SERVER,
    name: 'tools/call get-weather',
    keys: [
      'mcp.method.name',
      'mcp.protocol.version',
      'jsonrpc.request.id',
      'gen_ai.tool.name',
      'gen_ai.operation.name',
      'switchyard.mount',
      'switchyard.dialect',
    ],
    attributes: {
      'mcp.method.name': 'tools/call',
      'mcp.protocol.version': '2026-07-28',
      'jsonrpc.request.id': '12',
      'gen_ai.tool.name': 'get-weather',
      'gen_ai.operation.name': 'execute_tool',
      'switchyard.mount': 'main',
      'switchyard.dialect': '2026-07-28',
    },
  });
  assert.deepEqual(of(SPAN_KIND_CLIENT, 0), {
    kind: SPAN_KIND_CLIENT,
    name: 'tools/call get-weather',
    keys: ['mcp.method.name', 'gen_ai.tool.name', 'gen_ai.operation.name', 'switchyard.upstream'],
    attributes: {
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'get-weather',
      'gen_ai.operation.name': 'execute_tool',
      'switchyard.upstream': 'weather',
    },
  });
  assert.deepEqual(of(SPAN_KIND_SERVER, 1), {
    kind: SPAN_KIND_SERVER,
    name: 'prompts/get greet',
    keys: ['mcp.method.name', 'mcp.protocol.version', 'jsonrpc.request.id', 'gen_ai.prompt.name', 'switchyard.mount', 'switchyard.dialect'],
    attributes: {
      'mcp.method.name': 'prompts/get',
      'mcp.protocol.version': '2025-06-18',
      'jsonrpc.request.id': 'p-1',
      'gen_ai.prompt.name': 'greet',
      'switchyard.mount': 'main',
      'switchyard.dialect': '2025-03-26',
    },
  });
  // The client span names the component its context carries (`request` passes a tool's).
  assert.deepEqual(of(SPAN_KIND_CLIENT, 1).keys, ['mcp.method.name', 'gen_ai.prompt.name', 'switchyard.upstream']);
  assert.deepEqual(of(SPAN_KIND_SERVER, 2), {
    kind: SPAN_KIND_SERVER,
    name: 'tools/call get-weather',
    keys: ['mcp.method.name', 'mcp.protocol.version', 'gen_ai.tool.name', 'gen_ai.operation.name', 'switchyard.dialect'],
    attributes: {
      'mcp.method.name': 'tools/call',
      'mcp.protocol.version': '2026-07-28',
      'gen_ai.tool.name': 'get-weather',
      'gen_ai.operation.name': 'execute_tool',
      'switchyard.dialect': '2026-07-28',
    },
  });
});

test('client spans to an HTTP upstream: server.address and server.port from its lifecycle messages, last, in both the one-literal and the general case', async (t) => {
  const rx = await receiver(t);
  const tracing = await tracingTo(t, rx);
  // As src/upstreams/http/index.ts publishes them: the endpoint on every message, read once from the URL.
  const at = { transport: 'http', serverAddress: 'mcp.example.com', serverPort: 443 };
  channels.upstreamSpawn.publish({ upstream: 'weather', state: 'spawn', ...at });
  channels.upstreamReady.publish({ upstream: 'weather', state: 'ready', revision: '2026-07-28', ...at });
  const ok: Dispatch = async () => ({ content: [] });
  await request(tracing, ctxOf({ traceContext: { traceparent: INBOUND } }), ok);
  await request(tracing, ctxOf({ method: 'prompts/get', params: { name: 'greet' }, traceContext: { traceparent: INBOUND } }), ok);
  await tracing.flush();
  const clients = rx
    .spans()
    .filter((s) => s.kind === SPAN_KIND_CLIENT)
    .map((s) => ({ keys: s.attributes.map((a) => a.key), attributes: attrs(s.attributes) }));
  assert.deepEqual(clients, [
    {
      keys: [
        'mcp.method.name',
        'gen_ai.tool.name',
        'gen_ai.operation.name',
        'switchyard.upstream',
        'mcp.protocol.version',
        'network.transport',
        'server.address',
        'server.port',
      ],
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'get-weather',
        'gen_ai.operation.name': 'execute_tool',
        'switchyard.upstream': 'weather',
        'mcp.protocol.version': '2026-07-28',
        'network.transport': 'tcp',
        'server.address': 'mcp.example.com',
        'server.port': 443,
      },
    },
    {
      // The tool's component still travels on the context `request` builds: the name is the tool's.
      keys: ['mcp.method.name', 'gen_ai.prompt.name', 'switchyard.upstream', 'mcp.protocol.version', 'network.transport', 'server.address', 'server.port'],
      attributes: {
        'mcp.method.name': 'prompts/get',
        'gen_ai.prompt.name': 'get-weather',
        'switchyard.upstream': 'weather',
        'mcp.protocol.version': '2026-07-28',
        'network.transport': 'tcp',
        'server.address': 'mcp.example.com',
        'server.port': 443,
      },
    },
  ]);
});

test('errors: a relayed upstream -32603 marks both spans, a caller fault does not mark the server span, isError is tool_error', async (t) => {
  const rx = await receiver(t);
  const tracing = await tracingTo(t, rx, {});
  const failing: Dispatch = async () => {
    throw new PeerRpcError({ code: -32603, message: 'disk on fire' });
  };
  await request(tracing, ctxOf({ rpcId: 7 }), failing, { rpcCode: -32603 });
  const badParams: Dispatch = async () => {
    throw new PeerRpcError({ code: -32602, message: 'Unknown tool' });
  };
  await request(tracing, ctxOf({ params: { name: 'nope' } }), badParams, { rpcCode: -32602 });
  const toolError: Dispatch = async () => ({ content: [], isError: true });
  await request(tracing, ctxOf({ protocolVersion: '2026-07-28', dialect: '2026-07-28', sessionKey: 'ignored' }), toolError);
  await tracing.flush();

  const spans = rx.spans();
  assert.equal(spans.length, 6);
  const traces = [...new Set(spans.map((s) => s.traceId))];
  assert.equal(traces.length, 3, 'three requests without a traceparent: three new traces');
  const byTrace = traces.map((id) => ({
    server: spans.find((s) => s.traceId === id && s.kind === SPAN_KIND_SERVER)!,
    client: spans.find((s) => s.traceId === id && s.kind === SPAN_KIND_CLIENT)!,
  }));
  for (const { server, client } of byTrace) {
    assert.equal(server.parentSpanId ?? '', '');
    assert.equal(client.parentSpanId, server.spanId);
  }
  const pick = (name: string) => byTrace.find((x) => x.server.name === name)!;
  const fire = byTrace.find((x) => attrs(x.server.attributes)['rpc.response.status_code'] === '-32603')!;
  assert.equal(attrs(fire.server.attributes)['error.type'], '-32603');
  assert.equal(attrs(fire.server.attributes)['jsonrpc.request.id'], '7');
  assert.equal(fire.server.status?.code, STATUS_ERROR);
  assert.equal(attrs(fire.client.attributes)['error.type'], '-32603');
  assert.deepEqual(fire.client.status, { code: STATUS_ERROR, message: 'disk on fire' });

  const unknown = pick('tools/call nope');
  assert.equal(attrs(unknown.server.attributes)['error.type'], undefined, 'a caller fault is not a server-side error');
  assert.equal(attrs(unknown.server.attributes)['rpc.response.status_code'], '-32602');
  assert.equal(unknown.server.status?.code ?? 0, 0);
  assert.equal(attrs(unknown.client.attributes)['error.type'], '-32602', 'every error counts on the client side');

  const isError = byTrace.find((x) => attrs(x.server.attributes)['mcp.protocol.version'] === '2026-07-28')!;
  assert.equal(attrs(isError.server.attributes)['error.type'], 'tool_error');
  assert.equal(attrs(isError.client.attributes)['error.type'], 'tool_error');
  assert.equal(attrs(isError.server.attributes)['mcp.session.id'], undefined, 'no mcp.session.id for 2026-07-28');
});

test('a dispatch that throws synchronously: the traced chain returns a rejected promise and the client span ends with the error', async (t) => {
  const rx = await receiver(t);
  const tracing = await tracingTo(t, rx);
  const throwing: Dispatch = () => {
    throw new PeerRpcError({ code: -32603, message: 'thrown at once' });
  };
  const ctx = ctxOf({ rpcId: 3 });
  const startedAt = performance.now();
  channels.requestStart.publish({ ctx, startedAt });
  const pending = compose(throwing, [tracing.interceptor])({
    ...ctx,
    upstream: 'weather',
    component: { kind: 'tool', name: 'get-weather', upstream: 'weather' },
  });
  assert.ok(pending instanceof Promise);
  await assert.rejects(pending, /thrown at once/);
  channels.requestEnd.publish({ ctx, startedAt, durationMs: performance.now() - startedAt, rpcCode: -32603 });
  await tracing.flush();
  const client = rx.spans().find((s) => s.kind === SPAN_KIND_CLIENT)!;
  assert.equal(attrs(client.attributes)['error.type'], '-32603');
  assert.deepEqual(client.status, { code: STATUS_ERROR, message: 'thrown at once' });
  assert.equal(rx.spans().length, 2);
});

test('exporter headers reach the receiver and never the log; the startup line names the endpoint only', async (t) => {
  const rx = await receiver(t);
  const lines: string[] = [];
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    }),
  );
  const tracing = await tracingTo(t, rx, { OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20s3cr3t-token,x-tenant=acme' }, { log, exporter: 'otlp' });
  await request(tracing, ctxOf({ method: 'ping', params: {} }), async () => ({}));
  await tracing.flush();
  assert.equal(rx.requests[0].headers.authorization, 'Bearer s3cr3t-token');
  assert.equal(rx.requests[0].headers['x-tenant'], 'acme');
  assert.deepEqual(
    rx.spans().map((s) => s.name),
    ['ping', 'ping'],
  );
  const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    records.map((r) => [r.msg, r.endpoint]),
    [['tracing on', rx.url]],
  );
  assert.ok(!lines.join('').includes('s3cr3t'));
});

test('OTEL_EXPORTER_OTLP_ENDPOINT with a path and a query: /v1/traces goes after the path, the query stays after it, and the startup line leaves the path and the query out (found by a trial)', async (t) => {
  assert.equal(tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://host/base?k=X' })!.url, 'http://host/base/v1/traces?k=X');
  assert.equal(
    tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://host:4318/base/?k=X&tenant=a' })!.url,
    'https://host:4318/base/v1/traces?k=X&tenant=a',
  );
  // The signal-specific variable is the full URL, used as is.
  assert.equal(tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://host/custom?k=X' })!.url, 'http://host/custom?k=X');

  const rx = await receiver(t);
  const lines: string[] = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    }),
  );
  const tracing = await tracingTo(t, rx, { OTEL_EXPORTER_OTLP_ENDPOINT: `${rx.url}/base?k=X` }, { log, exporter: 'otlp' });
  await request(tracing, ctxOf({ method: 'ping', params: {} }), async () => ({}));
  await tracing.flush();
  assert.deepEqual(
    rx.requests.map((r) => r.path),
    ['/base/v1/traces?k=X'],
  );
  assert.deepEqual(
    lines.map((l) => (JSON.parse(l) as Record<string, unknown>).endpoint),
    [rx.url],
  );
});

test('the drop exporter creates and ends spans without any endpoint', async (t) => {
  const tracing = await createTracing({ env: {}, exporter: 'drop' });
  t.after(() => tracing.close());
  assert.equal(tracing.enabled, true);
  const seen: Array<RequestContext['traceContext']> = [];
  const ctx = ctxOf({ traceContext: { traceparent: INBOUND } });
  const afterStart = await request(tracing, ctx, async (c) => {
    seen.push(c.traceContext);
    return {};
  });
  assert.match(afterStart!.traceparent, new RegExp(`^00-${INBOUND_TRACE}-[0-9a-f]{16}-01$`));
  assert.notEqual(afterStart!.traceparent, INBOUND);
  assert.match(seen[0]!.traceparent, new RegExp(`^00-${INBOUND_TRACE}-[0-9a-f]{16}-01$`));
  assert.notEqual(seen[0]!.traceparent, afterStart!.traceparent);
  await tracing.flush();
});

test('SWITCHYARD_TRACES_EXPORTER=drop turns the drop exporter on from the environment; otlp and unset are the default; other values are refused', async (t) => {
  assert.equal(exporterFromEnv({}), 'otlp');
  assert.equal(exporterFromEnv({ SWITCHYARD_TRACES_EXPORTER: ' OTLP ' }), 'otlp');
  assert.equal(exporterFromEnv({ SWITCHYARD_TRACES_EXPORTER: 'drop' }), 'drop');
  assert.throws(
    () => exporterFromEnv({ SWITCHYARD_TRACES_EXPORTER: 'console' }),
    (e: unknown) => e instanceof SwitchyardError && e.code === 'SWY_ERR_TELEMETRY_CONFIG' && /SWITCHYARD_TRACES_EXPORTER must be otlp or drop/.test(e.message),
  );
  const tracing = await createTracing({ env: { SWITCHYARD_TRACES_EXPORTER: 'drop' } });
  t.after(() => tracing.close());
  assert.equal(tracing.enabled, true);
  // The standard switches still win.
  assert.equal((await createTracing({ env: { SWITCHYARD_TRACES_EXPORTER: 'drop', OTEL_SDK_DISABLED: 'true' } })).enabled, false);
  assert.equal((await createTracing({ env: { SWITCHYARD_TRACES_EXPORTER: 'drop', OTEL_TRACES_EXPORTER: 'none' } })).enabled, false);
});

test('off by default: no endpoint, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER=none; the interceptor passes ctx through untouched', async () => {
  for (const env of [
    {},
    { OTEL_SERVICE_NAME: 'x' },
    { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' },
    { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' },
  ]) {
    const tracing = await createTracing({ env });
    assert.equal(tracing.enabled, false, JSON.stringify(env));
    assert.equal(channels.requestStart.hasSubscribers, false);
    const ctx = ctxOf({ traceContext: { traceparent: INBOUND } });
    const dispatch = tracing.interceptor(async (c) => ({ same: c === ctx }));
    assert.deepEqual(await dispatch(ctx), { same: true });
    assert.deepEqual(ctx.traceContext, { traceparent: INBOUND });
    await tracing.close();
  }
});

test('the OTEL_* variables: endpoints, precedence, and values refused with SWY_ERR_TELEMETRY_CONFIG', () => {
  assert.equal(tracingConfigFromEnv({}), null);
  const general = tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })!;
  assert.equal(general.url, 'http://collector:4318/v1/traces');
  assert.equal(general.serviceName, 'switchyard');
  assert.equal(general.sampler, 'parentbased_always_on');
  assert.equal(tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example/otlp/' })!.url, 'https://c.example/otlp/v1/traces');
  assert.equal(
    tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:9999/custom' })!.url,
    'http://b:9999/custom',
  );
  const tuned = tracingConfigFromEnv({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/v1/traces',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_SERVICE_NAME: 'edge-gw',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
    OTEL_BSP_MAX_QUEUE_SIZE: '100',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '10',
    OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
  })!;
  assert.deepEqual(
    [tuned.serviceName, tuned.sampler, tuned.samplerRatio, tuned.maxQueueSize, tuned.maxExportBatchSize, tuned.timeoutMs, tuned.protobufRequested],
    ['edge-gw', 'parentbased_traceidratio', 0.25, 100, 10, 2500, true],
  );
  assert.equal(tracingConfigFromEnv({}, 'drop')!.url, undefined);

  const refused: Array<[Record<string, string>, string]> = [
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_TRACES_EXPORTER: 'console' },
      'OTEL_TRACES_EXPORTER names an exporter other than otlp or none: console',
    ],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL must be http/json or http/protobuf'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not a URL'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER is not one of'],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' },
      'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1',
    ],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_BSP_MAX_QUEUE_SIZE: '-1' }, 'OTEL_BSP_MAX_QUEUE_SIZE is not a non-negative integer'],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '11' },
      'OTEL_BSP_MAX_EXPORT_BATCH_SIZE must not exceed',
    ],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_COMPRESSION: 'brotli' }, 'OTEL_EXPORTER_OTLP_COMPRESSION must be gzip or none'],
  ];
  for (const [env, why] of refused)
    assert.throws(
      () => tracingConfigFromEnv(env),
      (e: unknown) => e instanceof SwitchyardError && e.code === 'SWY_ERR_TELEMETRY_CONFIG' && e.message.startsWith(`Invalid telemetry configuration: ${why}`),
      why,
    );
});

/**
 * Runs `createTracing({ env })` in a fresh Node process whose module resolution is recorded by a
 * resolve hook, and returns every OpenTelemetry module it loaded (ESM resolutions and the CJS cache).
 */
async function otelModulesLoaded(env: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-otel-'));
  try {
    const record = path.join(dir, 'resolved.txt');
    const hooks = `import { appendFileSync } from 'node:fs';
let file;
export function initialize(data) { file = data.file; }
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(file, r.url + '\\n');
  return r;
}`;
    const main = `import { register, createRequire } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}), { data: { file: ${JSON.stringify(record)} } });
const { createTracing } = await import(${JSON.stringify(TRACING_JS)});
const tracing = await createTracing({ env: JSON.parse(process.argv[1]) });
const cjs = Object.keys(createRequire(import.meta.url).cache);
await tracing.close();
process.stderr.write(JSON.stringify({ enabled: tracing.enabled, cjs }));`;
    const { stderr } = await run(process.execPath, ['--input-type=module', '-e', main, JSON.stringify(env)], { env: { PATH: process.env.PATH ?? '' } });
    const out = JSON.parse(stderr.trim().split('\n').pop()!) as { enabled: boolean; cjs: string[] };
    const resolved = readFileSync(record, 'utf8').split('\n');
    const otel = [...resolved, ...out.cjs].filter((u) => u.includes('@opentelemetry'));
    return [String(out.enabled), ...new Set(otel.map((u) => /@opentelemetry\/[^/]+/.exec(u)![0]))].sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('with the OTEL environment unset no OpenTelemetry module is loaded; with it set the SDK and exporter are', async () => {
  assert.deepEqual(await otelModulesLoaded({}), ['false']);
  assert.deepEqual(await otelModulesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_EXPORTER: 'none' }), ['false']);
  const on = await otelModulesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
  assert.equal(on[on.length - 1], 'true');
  for (const m of [
    '@opentelemetry/api',
    '@opentelemetry/sdk-trace-base',
    '@opentelemetry/exporter-trace-otlp-http',
    '@opentelemetry/resources',
    '@opentelemetry/core',
  ])
    assert.ok(on.includes(m), `${m} loaded when on`);
});

/** One traced request under `env`: the spans exported, and the traceparent the upstream saw. */
async function sampledUnder(t: { after(fn: () => Promise<void> | void): void }, env: Record<string, string>, inbound?: string) {
  const rx = await receiver(t);
  const tracing = await tracingTo(t, rx, env);
  const seen: string[] = [];
  await request(tracing, ctxOf(inbound ? { traceContext: { traceparent: inbound } } : {}), async (c) => {
    seen.push(c.traceContext!.traceparent);
    return {};
  });
  await tracing.close();
  return { spans: rx.spans(), upstream: seen[0] };
}

test('sampling follows OTEL_TRACES_SAMPLER: unsampled spans are not exported, yet their context goes upstream with flags 00', async (t) => {
  const UNSAMPLED = `00-${INBOUND_TRACE}-${INBOUND_SPAN}-00`;
  const cases: Array<[string, Record<string, string>, string | undefined, number, '00' | '01']> = [
    ['default (parentbased_always_on), no parent', {}, undefined, 2, '01'],
    ['default, a sampled parent', {}, INBOUND, 2, '01'],
    ['default, an unsampled parent', {}, UNSAMPLED, 0, '00'],
    ['always_on ignores an unsampled parent', { OTEL_TRACES_SAMPLER: 'always_on' }, UNSAMPLED, 2, '01'],
    ['always_off', { OTEL_TRACES_SAMPLER: 'always_off' }, INBOUND, 0, '00'],
    ['parentbased_always_off follows a sampled parent', { OTEL_TRACES_SAMPLER: 'parentbased_always_off' }, INBOUND, 2, '01'],
    ['parentbased_always_off, no parent', { OTEL_TRACES_SAMPLER: 'parentbased_always_off' }, undefined, 0, '00'],
    ['traceidratio 0', { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, INBOUND, 0, '00'],
    ['traceidratio 1', { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' }, UNSAMPLED, 2, '01'],
  ];
  for (const [what, env, inbound, spans, flags] of cases) {
    const out = await sampledUnder(t, env, inbound);
    assert.equal(out.spans.length, spans, what);
    assert.match(out.upstream, new RegExp(`^00-${inbound ? INBOUND_TRACE : '[0-9a-f]{32}'}-[0-9a-f]{16}-${flags}$`), what);
    assert.notEqual(out.upstream.slice(36, 52), INBOUND_SPAN, `${what}: a span id of our own`);
  }
});

test('span times are the request’s on the wall clock, and attribute values are cut at OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT', async (t) => {
  const before = BigInt(Date.now()) * 1_000_000n;
  const rx = await receiver(t);
  const tracing = await tracingTo(t, rx, { OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '5' });
  await request(tracing, ctxOf(), async () => {
    await new Promise((r) => setTimeout(r, 20));
    return {};
  });
  await tracing.flush();
  const after = BigInt(Date.now()) * 1_000_000n;
  const raw = (rx.requests[0].body as { resourceSpans: Array<{ scopeSpans: Array<{ scope: { name: string }; spans: Array<Record<string, string>> }> }> })
    .resourceSpans[0].scopeSpans[0];
  assert.equal(raw.scope.name, 'switchyard');
  assert.equal(raw.spans.length, 2);
  for (const s of raw.spans) {
    const start = BigInt(s.startTimeUnixNano);
    const end = BigInt(s.endTimeUnixNano);
    // The clocks are read a little apart; a millisecond either side.
    assert.ok(start >= before - 1_000_000n && end <= after + 1_000_000n, `${s.name} inside the request`);
    assert.ok(end - start >= 19_000_000n, `${s.name} lasted the upstream's 20 ms`);
  }
  const server = rx.spans().find((s) => s.kind === SPAN_KIND_SERVER)!;
  assert.equal(attrs(server.attributes)['mcp.method.name'], 'tools');
  assert.equal(attrs(server.attributes)['gen_ai.tool.name'], 'get-w');
});

test('a span: wall-clock times from its performance.now() start and end, an end before the start is the start, the first end counts', async () => {
  const { Span, hrTimeOf } = await import('../../src/telemetry/spans.js');
  const ended: unknown[] = [];
  const scope = { resource: {} as never, scope: { name: 's' }, attributeValueLengthLimit: 8, onEnd: (s: unknown) => ended.push(s) };
  const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
  const wallBefore = Date.now();
  const startedAt = performance.now();
  const span = new Span(scope, 'n', 1, 'a'.repeat(32), 'b'.repeat(16), 1, undefined, undefined, startedAt, { k: 'x'.repeat(20) });
  const wallAfter = Date.now();
  assert.equal(span.ended, false);
  assert.deepEqual(span.endTime, [0, 0]);
  assert.deepEqual(span.duration, [0, 0]);
  assert.ok(ms(span.startTime) >= wallBefore - 1 && ms(span.startTime) <= wallAfter + 1, String(span.startTime));
  span.setAttribute('late', 'y'.repeat(20));
  assert.deepEqual(span.attributes, { k: 'x'.repeat(8), late: 'y'.repeat(8) });
  span.end(startedAt + 1.5);
  assert.equal(span.ended, true);
  // Each time is rounded to the nanosecond on its own: a nanosecond either way.
  const ns = (t: [number, number]) => t[0] * 1e9 + t[1];
  assert.ok(Math.abs(ns(span.duration) - 1_500_000) <= 1, String(span.duration));
  assert.ok(Math.abs(ns(span.endTime) - ns(hrTimeOf(ms(span.startTime) + 1.5))) <= 1, String(span.endTime));
  const duration = span.duration;
  span.end(startedAt + 50);
  span.setAttribute('after', 'z');
  assert.deepEqual(span.duration, duration, 'a second end changes nothing');
  assert.equal(Reflect.get(span.attributes, 'after'), undefined);
  assert.equal(ended.length, 1);
  const early = new Span(scope, 'n', 1, 'a'.repeat(32), 'c'.repeat(16), 1, undefined, undefined, startedAt, {});
  early.end(startedAt - 5);
  assert.deepEqual(early.endTime, early.startTime);
  assert.deepEqual(early.duration, [0, 0]);
  // Not sampled: nothing recorded, never handed on.
  const unsampled = new Span(undefined, 'n', 1, 'a'.repeat(32), 'd'.repeat(16), 0, undefined, undefined, startedAt, {});
  unsampled.end(startedAt + 1);
  assert.equal(unsampled.ended, false);
  assert.deepEqual(unsampled.startTime, [0, 0]);
  assert.equal(ended.length, 2);
});

test('span and trace ids: lower-case hex of 16 and 32 digits, never all zeros, distinct across many refills of the id pool', async () => {
  const { randomId } = await import('../../src/telemetry/spans.js');
  const seen = new Set<string>();
  // 20,000 ids of both sizes use the 4 KiB pool about 70 times over.
  for (let i = 0; i < 10_000; i++) {
    const span = randomId(8);
    const trace = randomId(16);
    assert.match(span, /^[0-9a-f]{16}$/);
    assert.match(trace, /^[0-9a-f]{32}$/);
    assert.notEqual(span, '0'.repeat(16));
    assert.notEqual(trace, '0'.repeat(32));
    seen.add(span).add(trace);
  }
  assert.equal(seen.size, 20_000);
});

test('a request whose traceparent names an open server span of ours is its local child (parent not remote); once that span has ended, a remote parent', async (t) => {
  const rx = await receiver(t);
  const tracing = await tracingTo(t, rx);
  const outer = ctxOf({ traceContext: { traceparent: INBOUND }, rpcId: 'outer' });
  const startedAt = performance.now();
  channels.requestStart.publish({ ctx: outer, startedAt });
  // The outer request's trace context leaves the gateway (a server request to its client carries
  // it, say), and a request comes back naming it while the outer one is still open, and after.
  const named = outer.traceContext!.traceparent;
  await request(tracing, ctxOf({ traceContext: { traceparent: named }, rpcId: 'inner' }), async () => ({}));
  channels.requestEnd.publish({ ctx: outer, startedAt, durationMs: 1 });
  await request(tracing, ctxOf({ traceContext: { traceparent: named }, rpcId: 'late' }), async () => ({}));
  await tracing.flush();

  const server = (id: string) => rx.spans().find((s) => s.kind === SPAN_KIND_SERVER && attrs(s.attributes)['jsonrpc.request.id'] === id)!;
  const outerSpan = server('outer');
  assert.equal(named, `00-${INBOUND_TRACE}-${outerSpan.spanId}-01`);
  assert.equal(outerSpan.parentSpanId, INBOUND_SPAN);
  assert.equal(outerSpan.flags, 0x301, 'the client is another process: a remote parent');
  assert.equal(server('inner').parentSpanId, outerSpan.spanId);
  assert.equal(server('inner').traceId, INBOUND_TRACE);
  assert.equal(server('inner').flags, 0x101, 'an open span of ours: a local parent');
  assert.equal(server('late').parentSpanId, outerSpan.spanId);
  assert.equal(server('late').flags, 0x301, 'ended, no longer known: a remote parent');
});

test('two tracers in one process: each ends its own server span of a request though the other replaced the context’s trace context; one alone again still ends its spans', async (t) => {
  const rxA = await receiver(t);
  const rxB = await receiver(t);
  const a = await tracingTo(t, rxA);
  const b = await tracingTo(t, rxB);
  const publish = (ctx: RequestContext) => {
    const startedAt = performance.now();
    channels.requestStart.publish({ ctx, startedAt });
    const afterStart = ctx.traceContext;
    channels.requestEnd.publish({ ctx, startedAt, durationMs: 1 });
    return afterStart;
  };
  // A subscribed first, so B replaces A's trace context on the context, and A meets B's at the end.
  const first = publish(ctxOf({ traceContext: { traceparent: INBOUND } }));
  await a.flush();
  await b.flush();
  const [spanA] = rxA.spans();
  const [spanB] = rxB.spans();
  assert.equal(rxA.spans().length, 1);
  assert.equal(rxB.spans().length, 1);
  assert.equal(spanA.kind, SPAN_KIND_SERVER);
  assert.equal(spanA.parentSpanId, INBOUND_SPAN);
  // B's span continues A's (a parent from another tracer is remote to it), and the context ends with B's.
  assert.equal(spanB.traceId, INBOUND_TRACE);
  assert.equal(spanB.parentSpanId, spanA.spanId);
  assert.equal(first?.traceparent, `00-${INBOUND_TRACE}-${spanB.spanId}-01`);
  // B closed: A is the only tracer, and finds its span through its own trace context.
  await b.close();
  const second = publish(ctxOf({ traceContext: { traceparent: INBOUND } }));
  await a.flush();
  const spansA = rxA.spans();
  assert.equal(spansA.length, 2);
  assert.equal(second?.traceparent, `00-${INBOUND_TRACE}-${spansA[1].spanId}-01`);
  assert.equal(rxB.spans().length, 1);
});
