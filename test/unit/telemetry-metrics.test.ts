// Metrics from real diagnostics-channel messages: exact samples parsed from the Prometheus text
// exposition, and label values that stay bounded whatever clients send.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { register as globalRegistry } from 'prom-client';
import { channels } from '../../src/core/diagnostics.js';
import type { RequestContext } from '../../src/core/request.js';
import { MCP_METHOD_NAMES, KNOWN_REVISIONS } from '../../src/telemetry/names.js';
import { ChildCache, createMetrics, MCP_DURATION_BUCKETS_SECONDS } from '../../src/telemetry/metrics.js';

function ctxOf(over: Partial<RequestContext> = {}): RequestContext {
  return {
    method: 'tools/call',
    params: { name: 'read_file', arguments: {} },
    protocolVersion: '2025-06-18',
    clientInfo: undefined,
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

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (0.0.4): one sample per non-comment line. */
function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `unparsable sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]] = l[2].replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

/** The value of the one sample named `name` with exactly `labels`; undefined when absent. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  const hits = samples.filter((s) => s.name === name && sameLabels(s.labels, labels));
  assert.ok(hits.length <= 1, `several samples ${name} ${JSON.stringify(labels)}`);
  return hits[0]?.value;
}

/** The cumulative bucket counts of one histogram series, in `le` order, then sum and count. */
function histogram(samples: Sample[], name: string, labels: Record<string, string>): { buckets: number[]; sum: number | undefined; count: number | undefined } {
  const les = [...MCP_DURATION_BUCKETS_SECONDS.map(String), '+Inf'];
  return {
    buckets: les.map((le) => valueOf(samples, `${name}_bucket`, { ...labels, le }) ?? NaN),
    sum: valueOf(samples, `${name}_sum`, labels),
    count: valueOf(samples, `${name}_count`, labels),
  };
}

function setup(t: { after(fn: () => void): void }, collect?: () => Array<{ mount?: string; inFlight: number; queued: number }>) {
  const known = new Map<string, ReadonlySet<string>>([
    ['fs', new Set(['read_file', 'write_file', 'review'])],
    ['web', new Set(['fetch'])],
  ]);
  const metrics = createMetrics({ mounts: ['main', 'admin-tools'], upstreams: ['fs', 'web'], knownNames: (u) => known.get(u), collect });
  t.after(() => metrics.close());
  return metrics;
}

test('the server-operation histogram records a tools/call in the conventional buckets with bounded labels', async (t) => {
  const metrics = setup(t);
  const ctx = ctxOf({ upstream: 'fs' });
  channels.requestEnd.publish({ ctx, startedAt: 0, durationMs: 15 });
  channels.requestEnd.publish({ ctx, startedAt: 0, durationMs: 250 });
  const samples = parseExposition(await metrics.metrics());
  const labels = {
    mcp_method_name: 'tools/call',
    mcp_protocol_version: '2025-06-18',
    mount: 'main',
    gen_ai_tool_name: 'read_file',
    gen_ai_operation_name: 'execute_tool',
  };
  assert.deepEqual(histogram(samples, 'mcp_server_operation_duration_seconds', labels), {
    buckets: [0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2],
    sum: 0.265,
    count: 2,
  });
  const text = await metrics.metrics();
  assert.match(text, /^# TYPE mcp_server_operation_duration_seconds histogram$/m);
  assert.ok(
    text.includes(
      'mcp_server_operation_duration_seconds_bucket{le="0.02",mcp_method_name="tools/call",mcp_protocol_version="2025-06-18",mount="main",gen_ai_tool_name="read_file",gen_ai_operation_name="execute_tool"} 1',
    ),
  );
  assert.equal(metrics.contentType, 'text/plain; version=0.0.4; charset=utf-8');
});

test('error_type follows the server-side rule: caller faults are not errors, other codes are', async (t) => {
  const metrics = setup(t);
  const base = { startedAt: 0, durationMs: 5 };
  channels.requestEnd.publish({
    ctx: ctxOf({ method: 'resources/list', params: {} }),
    ...base,
    code: 'SWY_ERR_UPSTREAM_UNAVAILABLE',
    rpcCode: -32000,
    fault: 'upstream',
  });
  channels.requestEnd.publish({ ctx: ctxOf({ method: 'prompts/list', params: {} }), ...base, code: 'SWY_ERR_REQ_PARAMS', rpcCode: -32602, fault: 'client' });
  channels.requestEnd.publish({ ctx: ctxOf({ method: 'resources/read', params: { uri: 'file:///x' } }), ...base, rpcCode: -32603 });
  channels.requestEnd.publish({ ctx: ctxOf({ method: 'resources/templates/list', params: {} }), ...base, rpcCode: -32602 });
  channels.requestEnd.publish({ ctx: ctxOf({ method: 'tools/list', params: {} }), ...base, rpcCode: 12345 });
  const s = parseExposition(await metrics.metrics());
  const common = { mcp_protocol_version: '2025-06-18', mount: 'main' };
  const count = (labels: Record<string, string>) => valueOf(s, 'mcp_server_operation_duration_seconds_count', { ...common, ...labels });
  assert.equal(count({ mcp_method_name: 'resources/list', error_type: 'SWY_ERR_UPSTREAM_UNAVAILABLE', rpc_response_status_code: '-32000' }), 1);
  assert.equal(count({ mcp_method_name: 'prompts/list', rpc_response_status_code: '-32602' }), 1);
  assert.equal(count({ mcp_method_name: 'resources/read', error_type: '-32603', rpc_response_status_code: '-32603' }), 1);
  assert.equal(count({ mcp_method_name: 'resources/templates/list', rpc_response_status_code: '-32602' }), 1);
  assert.equal(count({ mcp_method_name: 'tools/list', error_type: '_OTHER', rpc_response_status_code: '_OTHER' }), 1);
});

test('the client-operation histogram is per upstream, with the revision the upstream reported and every error counted', async (t) => {
  const metrics = setup(t);
  channels.upstreamReady.publish({ upstream: 'fs', state: 'ready', revision: '2024-11-05', transport: 'stdio' });
  const ctx = ctxOf({ upstream: 'fs', component: { kind: 'tool', name: 'write_file', upstream: 'fs' }, params: { name: 'files__write_file' } });
  channels.upstreamCallEnd.publish({ ctx, upstream: 'fs', startedAt: 0, durationMs: 40 });
  channels.upstreamCallEnd.publish({ ctx, upstream: 'fs', startedAt: 0, durationMs: 3, rpcCode: -32602 });
  channels.upstreamCallEnd.publish({ ctx: ctxOf({ method: 'ping', params: {} }), upstream: 'intruder', startedAt: 0, durationMs: 1 });
  channels.upstreamCallStart.publish({ ctx, upstream: 'fs', startedAt: 0 });
  const s = parseExposition(await metrics.metrics());
  const tool = {
    mcp_method_name: 'tools/call',
    upstream: 'fs',
    mcp_protocol_version: '2024-11-05',
    network_transport: 'pipe',
    gen_ai_tool_name: 'write_file',
    gen_ai_operation_name: 'execute_tool',
  };
  assert.deepEqual(histogram(s, 'mcp_client_operation_duration_seconds', tool), {
    buckets: [0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    sum: 0.04,
    count: 1,
  });
  assert.equal(valueOf(s, 'mcp_client_operation_duration_seconds_count', { ...tool, error_type: '-32602', rpc_response_status_code: '-32602' }), 1);
  assert.equal(valueOf(s, 'mcp_client_operation_duration_seconds_count', { mcp_method_name: 'ping', upstream: '_other' }), 1);
  assert.equal(s.filter((x) => x.name === 'mcp_client_operation_duration_seconds_count').length, 3);
  // The labels in the order they are written (a successful call's, then a failed one's).
  const text = await metrics.metrics();
  assert.ok(
    text.includes(
      'mcp_client_operation_duration_seconds_count{mcp_method_name="tools/call",upstream="fs",mcp_protocol_version="2024-11-05",network_transport="pipe",gen_ai_tool_name="write_file",gen_ai_operation_name="execute_tool"} 1',
    ),
  );
  assert.ok(
    text.includes(
      'mcp_client_operation_duration_seconds_count{mcp_method_name="tools/call",upstream="fs",mcp_protocol_version="2024-11-05",network_transport="pipe",error_type="-32602",rpc_response_status_code="-32602",gen_ai_tool_name="write_file",gen_ai_operation_name="execute_tool"} 1',
    ),
  );
});

test("an HTTP upstream's client operations carry network_transport tcp, server_address and server_port, from its lifecycle messages; a changed URL gets new series", async (t) => {
  const metrics = setup(t);
  const ctx = ctxOf({ method: 'tools/list', params: {}, upstream: 'web' });
  // @see telemetry digest §4 (network.*, server.address, server.port Recommended on mcp.client.operation.duration) and §8
  channels.upstreamSpawn.publish({ upstream: 'web', state: 'spawn', transport: 'http', serverAddress: '::1', serverPort: 3000 });
  channels.upstreamReady.publish({ upstream: 'web', state: 'ready', revision: '2026-07-28', transport: 'http', serverAddress: '::1', serverPort: 3000 });
  channels.upstreamCallEnd.publish({ ctx, upstream: 'web', startedAt: 0, durationMs: 4 });
  channels.upstreamCallEnd.publish({ ctx, upstream: 'web', startedAt: 0, durationMs: 4, rpcCode: -32603 });
  // A reload points it elsewhere: its next calls are new series, the old ones stay as they were.
  channels.upstreamReady.publish({
    upstream: 'web',
    state: 'ready',
    revision: '2026-07-28',
    transport: 'http',
    serverAddress: 'mcp.example.com',
    serverPort: 443,
  });
  channels.upstreamCallEnd.publish({ ctx, upstream: 'web', startedAt: 0, durationMs: 4 });
  channels.upstreamCallEnd.publish({ ctx, upstream: 'web', startedAt: 0, durationMs: 4 });
  // An upstream without a network peer (embedded) has neither.
  channels.upstreamReady.publish({ upstream: 'fs', state: 'ready', revision: '2026-07-28', transport: 'embedded' });
  channels.upstreamCallEnd.publish({ ctx: ctxOf({ method: 'tools/list', params: {}, upstream: 'fs' }), upstream: 'fs', startedAt: 0, durationMs: 4 });
  const text = await metrics.metrics();
  const counts = text.split('\n').filter((l) => l.startsWith('mcp_client_operation_duration_seconds_count'));
  assert.deepEqual(counts, [
    'mcp_client_operation_duration_seconds_count{mcp_method_name="tools/list",upstream="web",mcp_protocol_version="2026-07-28",network_transport="tcp",server_address="::1",server_port="3000"} 1',
    'mcp_client_operation_duration_seconds_count{mcp_method_name="tools/list",upstream="web",mcp_protocol_version="2026-07-28",network_transport="tcp",server_address="::1",server_port="3000",error_type="-32603",rpc_response_status_code="-32603"} 1',
    'mcp_client_operation_duration_seconds_count{mcp_method_name="tools/list",upstream="web",mcp_protocol_version="2026-07-28",network_transport="tcp",server_address="mcp.example.com",server_port="443"} 2',
    'mcp_client_operation_duration_seconds_count{mcp_method_name="tools/list",upstream="fs",mcp_protocol_version="2026-07-28"} 1',
  ]);
});

test('session and stream gauges follow open and close and never go below zero', async (t) => {
  const metrics = setup(t);
  const session = { mount: 'main', dialect: '2025-03-26' };
  channels.sessionOpen.publish({ ...session, sessionId: 'a' });
  channels.sessionOpen.publish({ ...session, sessionId: 'b' });
  channels.sessionClose.publish({ ...session, sessionId: 'a', reason: 'delete' });
  channels.sessionClose.publish({ mount: 'admin-tools', dialect: '2024-11-05', sessionId: 'z', reason: 'expired' });
  channels.streamOpen.publish({ mount: 'main', dialect: '2026-07-28', kind: 'listen' });
  channels.streamOpen.publish({ mount: 'main', dialect: '2026-07-28', kind: 'listen' });
  channels.streamOpen.publish({ mount: 'nowhere', dialect: 'x', kind: 'weird' });
  channels.streamClose.publish({ mount: 'main', dialect: '2026-07-28', kind: 'listen' });
  const s = parseExposition(await metrics.metrics());
  assert.equal(valueOf(s, 'switchyard_sessions', session), 1);
  assert.equal(valueOf(s, 'switchyard_sessions', { mount: 'admin-tools', dialect: '2024-11-05' }), 0);
  assert.equal(valueOf(s, 'switchyard_streams', { mount: 'main', dialect: '2026-07-28', kind: 'listen' }), 1);
  assert.equal(valueOf(s, 'switchyard_streams', { mount: '_other', dialect: '_other', kind: '_other' }), 1);
});

test('refusals count by catalogue code, upstream state is one-hot, reloads count by result, admission comes from collect()', async (t) => {
  let inFlight = 3;
  const metrics = setup(t, () => [
    { inFlight, queued: 2 },
    { mount: 'admin-tools', inFlight: 1, queued: 0 },
  ]);
  channels.refusal.publish({ code: 'SWY_ERR_HTTP_ORIGIN_FORBIDDEN', status: 403, mount: 'main', dialect: '2026-07-28' });
  channels.refusal.publish({ code: 'SWY_ERR_HTTP_ORIGIN_FORBIDDEN', status: 403, mount: 'main', dialect: '2026-07-28' });
  channels.refusal.publish({ code: 'NOT_A_CODE' as never, status: 400 });
  channels.upstreamSpawn.publish({ upstream: 'fs', state: 'spawn', transport: 'stdio' });
  channels.upstreamReady.publish({ upstream: 'fs', state: 'ready', revision: '2025-06-18' });
  channels.upstreamDown.publish({ upstream: 'web', state: 'down', error: new Error('connect ECONNREFUSED') });
  channels.reload.publish({ ok: true });
  channels.reload.publish({ ok: false, error: new Error('bad file') });
  channels.reload.publish({ ok: true });
  let s = parseExposition(await metrics.metrics());
  assert.equal(valueOf(s, 'switchyard_refusals_total', { code: 'SWY_ERR_HTTP_ORIGIN_FORBIDDEN', mount: 'main', dialect: '2026-07-28' }), 2);
  assert.equal(valueOf(s, 'switchyard_refusals_total', { code: '_other' }), 1);
  assert.deepEqual(
    ['starting', 'up', 'down'].map((state) => valueOf(s, 'switchyard_upstream_state', { upstream: 'fs', state })),
    [0, 1, 0],
  );
  assert.deepEqual(
    ['starting', 'up', 'down'].map((state) => valueOf(s, 'switchyard_upstream_state', { upstream: 'web', state })),
    [0, 0, 1],
  );
  assert.equal(valueOf(s, 'switchyard_config_reloads_total', { result: 'success' }), 2);
  assert.equal(valueOf(s, 'switchyard_config_reloads_total', { result: 'failure' }), 1);
  assert.equal(valueOf(s, 'switchyard_admission_in_flight', {}), 3);
  assert.equal(valueOf(s, 'switchyard_admission_queue_depth', {}), 2);
  assert.equal(valueOf(s, 'switchyard_admission_in_flight', { mount: 'admin-tools' }), 1);
  inFlight = 0;
  s = parseExposition(await metrics.metrics());
  assert.equal(valueOf(s, 'switchyard_admission_in_flight', {}), 0);
});

test('default process metrics are on the own registry, and nothing lands on the global one', async (t) => {
  const metrics = setup(t);
  const s = parseExposition(await metrics.metrics());
  assert.ok(s.some((x) => x.name === 'process_cpu_user_seconds_total'));
  assert.ok(s.some((x) => x.name === 'nodejs_eventloop_lag_seconds'));
  assert.equal(globalRegistry.getMetricsAsArray().length, 0);
});

test('a reload that removes an upstream removes its state series; a late state of a removed upstream lands nowhere, not on _other (found by a trial)', async (t) => {
  let configured = ['keep', 'gone'];
  const metrics = createMetrics({ mounts: ['main'], upstreams: () => configured, defaultMetrics: false });
  t.after(() => metrics.close());
  channels.upstreamReady.publish({ upstream: 'keep', state: 'ready', revision: '2025-06-18' });
  channels.upstreamDown.publish({ upstream: 'gone', state: 'down', error: new Error('connect ECONNREFUSED') });
  let s = parseExposition(await metrics.metrics());
  assert.equal(valueOf(s, 'switchyard_upstream_state', { upstream: 'gone', state: 'down' }), 1);
  configured = ['keep'];
  // The removed upstream stops after the list changed: its state names an unknown upstream.
  channels.upstreamDown.publish({ upstream: 'gone', state: 'down', error: new Error('stopped') });
  channels.reload.publish({ ok: true });
  s = parseExposition(await metrics.metrics());
  const series = s.filter((x) => x.name === 'switchyard_upstream_state').map((x) => `${x.labels.upstream} ${x.labels.state} ${x.value}`);
  assert.deepEqual(series.sort(), ['keep down 0', 'keep starting 0', 'keep up 1']);
});

test('close() unsubscribes every channel and empties the registry', async () => {
  const metrics = createMetrics({ mounts: ['main'], defaultMetrics: false });
  assert.equal(channels.requestEnd.hasSubscribers, true);
  metrics.close();
  for (const [name, ch] of Object.entries(channels)) assert.equal(ch.hasSubscribers, false, name);
  channels.requestEnd.publish({ ctx: ctxOf(), startedAt: 0, durationMs: 1 });
  assert.equal(await metrics.metrics(), '\n');
});

test('a thousand messages with random methods, tools, mounts and versions add no label value beyond _other', async (t) => {
  const metrics = setup(t);
  const anyName = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('read_file', 'fetch', 'tools/call', 'prompts/get', 'main', '2025-06-18'));
  const message = fc.record({
    method: fc.oneof(anyName, fc.constantFrom('tools/call', 'prompts/get', 'tools/list')),
    tool: anyName,
    mount: anyName,
    version: anyName,
    upstream: fc.oneof(anyName, fc.constantFrom('fs', 'web')),
    rpcCode: fc.option(fc.integer(), { nil: undefined }),
  });
  for (const m of fc.sample(message, { numRuns: 1000, seed: 20260728 })) {
    const ctx = ctxOf({ method: m.method, params: { name: m.tool }, mount: m.mount, protocolVersion: m.version, upstream: m.upstream });
    channels.requestEnd.publish({ ctx, startedAt: 0, durationMs: 1, rpcCode: m.rpcCode });
    channels.upstreamCallEnd.publish({ ctx, upstream: m.upstream, startedAt: 0, durationMs: 1, rpcCode: m.rpcCode });
    channels.sessionOpen.publish({ mount: m.mount, dialect: m.version, sessionId: m.tool });
  }
  const samples = parseExposition(await metrics.metrics()).filter((s) => s.name.startsWith('mcp_') || s.name === 'switchyard_sessions');
  // The JSON-RPC codes a code label may hold: JSON-RPC 2.0's, MCP's and the catalogue's, else _OTHER.
  const RPC_CODE_LABELS = [
    '-32700',
    '-32600',
    '-32601',
    '-32602',
    '-32603',
    '-32000',
    '-32001',
    '-32002',
    '-32010',
    '-32011',
    '-32020',
    '-32021',
    '-32022',
    '-32042',
    '_OTHER',
  ];
  const allowed: Record<string, Set<string>> = {
    mcp_method_name: new Set([...MCP_METHOD_NAMES, '_other']),
    mcp_protocol_version: new Set([...KNOWN_REVISIONS, '_other']),
    dialect: new Set([...KNOWN_REVISIONS, '_other']),
    mount: new Set(['main', 'admin-tools', '_other']),
    upstream: new Set(['fs', 'web', '_other']),
    gen_ai_tool_name: new Set(['read_file', 'write_file', 'review', 'fetch', '_other']),
    gen_ai_prompt_name: new Set(['read_file', 'write_file', 'review', 'fetch', '_other']),
    gen_ai_operation_name: new Set(['execute_tool']),
    error_type: new Set(RPC_CODE_LABELS),
    rpc_response_status_code: new Set(RPC_CODE_LABELS),
    le: new Set([...MCP_DURATION_BUCKETS_SECONDS.map(String), '+Inf']),
  };
  const seen = new Map<string, Set<string>>();
  for (const s of samples)
    for (const [k, v] of Object.entries(s.labels)) {
      assert.ok(allowed[k], `unexpected label ${k}`);
      assert.ok(allowed[k].has(v), `label ${k}="${v}" is not in its bounded set`);
      if (!seen.has(k)) seen.set(k, new Set());
      seen.get(k)!.add(v);
    }
  // The random strings did reach the observers: each bounded label shows its `_other` value.
  for (const k of ['mcp_method_name', 'mcp_protocol_version', 'mount', 'upstream', 'gen_ai_tool_name', 'dialect']) assert.ok(seen.get(k)?.has('_other'), k);
  assert.ok(seen.get('gen_ai_tool_name')?.has('read_file'));
});

test('label values learnt at run time are at most 128 characters: a tool or upstream name of 129 or 10,000 counts as _other (found by a trial)', async (t) => {
  const at = 'a'.repeat(128);
  const over = 'b'.repeat(129);
  const huge = 'c'.repeat(10_000);
  const metrics = createMetrics({ mounts: ['main'], knownNames: () => new Set([at, over, huge]) });
  t.after(() => metrics.close());
  for (const name of [at, over, huge]) {
    const ctx = ctxOf({ upstream: 'long', params: { name } });
    channels.requestEnd.publish({ ctx, startedAt: 0, durationMs: 1 });
    channels.upstreamCallEnd.publish({ ctx, upstream: name, startedAt: 0, durationMs: 1 });
  }
  const text = await metrics.metrics();
  const s = parseExposition(text);
  const server = { mcp_method_name: 'tools/call', mcp_protocol_version: '2025-06-18', mount: 'main', gen_ai_operation_name: 'execute_tool' };
  assert.equal(valueOf(s, 'mcp_server_operation_duration_seconds_count', { ...server, gen_ai_tool_name: at }), 1);
  assert.equal(valueOf(s, 'mcp_server_operation_duration_seconds_count', { ...server, gen_ai_tool_name: '_other' }), 2);
  const client = { mcp_method_name: 'tools/call', gen_ai_operation_name: 'execute_tool' };
  assert.equal(valueOf(s, 'mcp_client_operation_duration_seconds_count', { ...client, upstream: at, gen_ai_tool_name: at }), 1);
  assert.equal(valueOf(s, 'mcp_client_operation_duration_seconds_count', { ...client, upstream: '_other', gen_ai_tool_name: '_other' }), 2);
  assert.ok(!text.includes(over) && !text.includes('c'.repeat(129)));
});

test('the bound children of the operation histograms are kept up to their bound and no further', () => {
  const cache = new ChildCache(3);
  const child = { observe() {} };
  for (let i = 0; i < 10; i++) assert.equal(cache.add('tools/call', '2026-07-28', 'main', `tool-${i}`, child), child);
  assert.equal(cache.count, 3);
  assert.equal(cache.get('tools/call', '2026-07-28', 'main', 'tool-2'), child);
  assert.equal(cache.get('tools/call', '2026-07-28', 'main', 'tool-3'), undefined);
  // The same tuple again replaces, and does not count twice.
  cache.add('tools/call', '2026-07-28', 'main', 'tool-0', child);
  assert.equal(cache.count, 3);
});

test('successful requests observed through kept children count on their series, and after a registry reset on a new one', async (t) => {
  const metrics = setup(t);
  const ctx = ctxOf({ upstream: 'fs', protocolVersion: '2026-07-28' });
  const ok = {
    mcp_method_name: 'tools/call',
    mcp_protocol_version: '2026-07-28',
    mount: 'main',
    gen_ai_tool_name: 'read_file',
    gen_ai_operation_name: 'execute_tool',
  };
  const failed = { ...ok, error_type: '-32603', rpc_response_status_code: '-32603' };
  const count = (samples: Sample[], labels: Record<string, string>) => valueOf(samples, 'mcp_server_operation_duration_seconds_count', labels);
  for (let i = 0; i < 3; i++) channels.requestEnd.publish({ ctx, startedAt: 0, durationMs: 15 });
  channels.requestEnd.publish({ ctx, startedAt: 0, durationMs: 15, rpcCode: -32603 });
  let samples = parseExposition(await metrics.metrics());
  assert.equal(count(samples, ok), 3);
  assert.equal(count(samples, failed), 1);
  metrics.registry.resetMetrics();
  channels.requestEnd.publish({ ctx, startedAt: 0, durationMs: 15 });
  samples = parseExposition(await metrics.metrics());
  // The kept child finds its series again after the reset: one request, not four, and not lost.
  assert.equal(count(samples, ok), 1);
  assert.equal(count(samples, failed), undefined);
});
