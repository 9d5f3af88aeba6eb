// The admin listener over real sockets (undici against 127.0.0.1:0): every endpoint's status,
// headers and body, Host checks, and the status recorder's windows fed by real channel messages.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { rawRequest } from '../helpers/raw-http.js';
import { request } from 'undici';
import { channels } from '../../src/core/diagnostics.js';
import type { RequestContext } from '../../src/core/request.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { createMetrics } from '../../src/telemetry/metrics.js';
import { STATUS_PAGE_CSS, STATUS_PAGE_HTML, STATUS_PAGE_SCRIPT } from '../../src/admin/page.js';
import { ADMIN_CSP, startAdminServer, type AdminServer } from '../../src/admin/server.js';
import {
  CALL_WINDOW_MS,
  REFUSALS_KEPT,
  SLOT_MS,
  createStatusRecorder,
  type Readiness,
  type StatusSource,
  type UpstreamStatus,
} from '../../src/admin/status.js';

const T0 = 1_800_000_000_000; // a multiple of SLOT_MS

function ctxOf(over: Partial<RequestContext> = {}): RequestContext {
  return {
    method: 'tools/call',
    params: { name: 'read_file' },
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

/** A StatusSource as the gateway will implement it, with state the test changes. */
function sourceOf() {
  const state = {
    readiness: { ready: true, reasons: [] } as Readiness,
    draining: false,
    failReady: false,
    upstreams: [
      { name: 'fs', era: '2025-06-18', transport: 'stdio', state: 'up', inFlight: 2, serverInfo: { name: 'fs-server', version: '1.2.0' } },
      { name: 'web', era: 'unknown', transport: 'http', state: 'down', inFlight: 0, lastError: 'connect ECONNREFUSED 127.0.0.1:9' },
    ] as UpstreamStatus[],
  };
  const source: StatusSource = {
    upstreams: () => state.upstreams,
    mounts: () => [{ name: 'main', url: 'http://127.0.0.1:7600/mcp', dialects: [{ id: '2025-03-26', sessions: 3, streams: 1 }] }],
    ready: () => {
      if (state.failReady) throw new Error('boom');
      return state.readiness;
    },
    draining: () => state.draining,
  };
  return { state, source };
}

async function get(url: string, opts: { method?: 'GET' | 'HEAD' | 'POST' | 'DELETE'; headers?: Record<string, string> } = {}) {
  const res = await request(url, { method: opts.method ?? 'GET', headers: opts.headers });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

async function start(t: { after(fn: () => Promise<void> | void): void }) {
  let clock = T0;
  const { state, source } = sourceOf();
  const metrics = createMetrics({ mounts: ['main'], upstreams: ['fs', 'web'], defaultMetrics: false });
  const recorder = createStatusRecorder({ now: () => clock });
  const admin = await startAdminServer({ port: 0, source, metrics, recorder });
  t.after(async () => {
    await admin.close();
    recorder.close();
    metrics.close();
  });
  return { admin, state, recorder, source, base: admin.address().url, advance: (ms: number) => (clock += ms) };
}

const SECURITY = {
  'content-security-policy': ADMIN_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

function assertSecurityHeaders(headers: Record<string, unknown>) {
  for (const [k, v] of Object.entries(SECURITY)) assert.equal(headers[k], v, k);
}

test('binds 127.0.0.1 by default and reports its address', async (t) => {
  const { admin } = await start(t);
  const a = admin.address();
  assert.equal(a.host, '127.0.0.1');
  assert.equal(a.url, `http://127.0.0.1:${a.port}/`);
  assert.ok(a.port > 0);
});

test('/healthz is 200 while the process serves, draining or not', async (t) => {
  const { base, state } = await start(t);
  for (const draining of [false, true]) {
    state.draining = draining;
    const r = await get(`${base}healthz`);
    assert.equal(r.status, 200);
    assert.equal(r.text, '{"status":"ok"}');
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assertSecurityHeaders(r.headers);
  }
  const head = await get(`${base}healthz`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.text, '');
});

test('/readyz: 200 when ready, 503 with the reasons when not, 503 with draining as soon as shutdown begins', async (t) => {
  const { base, state } = await start(t);
  let r = await get(`${base}readyz`);
  assert.deepEqual([r.status, r.text, r.headers['content-type']], [200, '{"ready":true,"reasons":[]}', 'application/json; charset=utf-8']);
  state.readiness = { ready: false, reasons: ['upstream web is down'] };
  r = await get(`${base}readyz`);
  assert.deepEqual([r.status, JSON.parse(r.text)], [503, { ready: false, reasons: ['upstream web is down'] }]);
  state.readiness = { ready: true, reasons: [] };
  state.draining = true;
  r = await get(`${base}readyz`);
  assert.deepEqual([r.status, JSON.parse(r.text)], [503, { ready: false, reasons: ['draining'] }]);
  assertSecurityHeaders(r.headers);
});

test('/readyz: what is degraded is named beside the answer and never makes it 503; /status.json lists it', async (t) => {
  const { base, state, recorder, source } = await start(t);
  state.readiness = { ready: true, reasons: [], degraded: ['cluster: redis down (Socket closed unexpectedly)'] };
  let r = await get(`${base}readyz`);
  assert.deepEqual([r.status, r.text], [200, '{"ready":true,"reasons":[],"degraded":["cluster: redis down (Socket closed unexpectedly)"]}']);
  const doc = recorder.snapshot(source);
  assert.deepEqual([doc.ready, doc.reasons, doc.degraded], [true, [], ['cluster: redis down (Socket closed unexpectedly)']]);
  state.readiness = { ready: false, reasons: ['upstream web is down'], degraded: ['cluster: redis down (x)'] };
  r = await get(`${base}readyz`);
  assert.deepEqual([r.status, JSON.parse(r.text)], [503, { ready: false, reasons: ['upstream web is down'], degraded: ['cluster: redis down (x)'] }]);
  state.readiness = { ready: true, reasons: [], degraded: [] };
  r = await get(`${base}readyz`);
  assert.deepEqual([r.status, r.text], [200, '{"ready":true,"reasons":[]}']);
});

test('/metrics serves the registry in the Prometheus text format', async (t) => {
  const { base } = await start(t);
  channels.refusal.publish({ code: 'SWY_ERR_HTTP_HOST_FORBIDDEN', status: 403, mount: 'main' });
  const r = await get(`${base}metrics`);
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  assert.ok(r.text.includes('switchyard_refusals_total{code="SWY_ERR_HTTP_HOST_FORBIDDEN",mount="main"} 1\n'));
  assert.ok(r.text.includes('# TYPE mcp_server_operation_duration_seconds histogram\n'));
});

test('/metrics is 404 without a metrics registry', async (t) => {
  const { source } = sourceOf();
  const recorder = createStatusRecorder();
  const admin = await startAdminServer({ port: 0, source, recorder });
  t.after(async () => {
    await admin.close();
    recorder.close();
  });
  const r = await get(`${admin.address().url}metrics`);
  assert.equal(r.status, 404);
  assert.equal(r.text, '{"error":{"code":"SWY_ERR_ADMIN_NOT_FOUND","message":"Not found on the admin listener"}}');
});

test('/status.json is the whole document: source state, call quantiles, request series, refusals', async (t) => {
  const { base, advance } = await start(t);
  channels.upstreamCallEnd.publish({ ctx: ctxOf({ upstream: 'fs' }), upstream: 'fs', startedAt: 0, durationMs: 42 });
  channels.requestEnd.publish({ ctx: ctxOf(), startedAt: 0, durationMs: 43 });
  channels.requestEnd.publish({ ctx: ctxOf(), startedAt: 0, durationMs: 1, code: 'SWY_ERR_UPSTREAM_UNAVAILABLE', rpcCode: -32000, fault: 'upstream' });
  channels.refusal.publish({ code: 'SWY_ERR_HTTP_ORIGIN_FORBIDDEN', status: 403, mount: 'main', dialect: '2026-07-28' });
  advance(SLOT_MS);
  channels.requestEnd.publish({ ctx: ctxOf({ method: 'tools/list', params: {} }), startedAt: 0, durationMs: 2 });
  const r = await get(`${base}status.json`);
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
  assertSecurityHeaders(r.headers);
  const zeros = (n: number) => new Array<number>(n).fill(0);
  assert.deepEqual(JSON.parse(r.text), {
    generatedAt: new Date(T0 + SLOT_MS).toISOString(),
    ready: true,
    reasons: [],
    degraded: [],
    draining: false,
    upstreams: [
      {
        name: 'fs',
        era: '2025-06-18',
        transport: 'stdio',
        state: 'up',
        inFlight: 2,
        serverInfo: { name: 'fs-server', version: '1.2.0' },
        calls: { windowMs: CALL_WINDOW_MS, count: 1, errors: 0, p50Ms: 42, p99Ms: 42 },
      },
      {
        name: 'web',
        era: 'unknown',
        transport: 'http',
        state: 'down',
        inFlight: 0,
        lastError: 'connect ECONNREFUSED 127.0.0.1:9',
        calls: { windowMs: CALL_WINDOW_MS, count: 0, errors: 0, p50Ms: null, p99Ms: null },
      },
    ],
    mounts: [{ name: 'main', url: 'http://127.0.0.1:7600/mcp', dialects: [{ id: '2025-03-26', sessions: 3, streams: 1 }] }],
    requests: {
      slotMs: SLOT_MS,
      windowMs: 600_000,
      startMs: T0 + SLOT_MS - 59 * SLOT_MS,
      methods: [
        { method: 'tools/call', requests: [...zeros(58), 2, 0], errors: [...zeros(58), 1, 0] },
        { method: 'tools/list', requests: [...zeros(59), 1], errors: zeros(60) },
      ],
    },
    refusals: [{ at: new Date(T0).toISOString(), code: 'SWY_ERR_HTTP_ORIGIN_FORBIDDEN', status: 403, mount: 'main', dialect: '2026-07-28' }],
  });
});

test('the page, its script and its stylesheet are served with their types and the CSP', async (t) => {
  const { base } = await start(t);
  for (const [p, type, body] of [
    ['', 'text/html; charset=utf-8', STATUS_PAGE_HTML],
    ['status.js', 'text/javascript; charset=utf-8', STATUS_PAGE_SCRIPT],
    ['status.css', 'text/css; charset=utf-8', STATUS_PAGE_CSS],
  ] as const) {
    const r = await get(`${base}${p}`);
    assert.equal(r.status, 200, p);
    assert.equal(r.headers['content-type'], type, p);
    assert.equal(r.text, body, p);
    assertSecurityHeaders(r.headers);
  }
  assert.ok(!/<script>|\sstyle=|\son[a-z]+=/i.test(STATUS_PAGE_HTML), 'no inline script, style or handler');
});

test('other paths are 404, other methods 405 with Allow, a foreign Host 403', async (t) => {
  const { base, admin } = await start(t);
  let r = await get(`${base}nope`);
  assert.deepEqual([r.status, r.text], [404, '{"error":{"code":"SWY_ERR_ADMIN_NOT_FOUND","message":"Not found on the admin listener"}}']);
  assertSecurityHeaders(r.headers);
  for (const method of ['POST', 'DELETE'] as const) {
    r = await get(`${base}readyz`, { method });
    assert.deepEqual(
      [r.status, r.headers.allow, r.text],
      [405, 'GET, HEAD', '{"error":{"code":"SWY_ERR_ADMIN_METHOD_NOT_ALLOWED","message":"Method not allowed on the admin listener"}}'],
    );
  }
  const port = admin.address().port;
  for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1.nip.io:${port}`, 'localhost@evil.example', '']) {
    r = await get(`${base}status.json`, { headers: { host } });
    assert.deepEqual(
      [r.status, r.text],
      [403, '{"error":{"code":"SWY_ERR_ADMIN_HOST_FORBIDDEN","message":"Forbidden: Host not allowed on the admin listener"}}'],
      host,
    );
    assertSecurityHeaders(r.headers);
  }
  for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `LOCALHOST:${port}`]) {
    r = await get(`${base}healthz`, { headers: { host } });
    assert.equal(r.status, 200, host);
  }
});

// Found in review (2026-12-05): the main listener answers CONNECT with 405, but the admin
// listener still closed the connection without a word (node:http destroys a CONNECT's socket
// when the server has no 'connect' listener). RFC 9110 §9.3.6, §15.5.6.
test('CONNECT: 405 with Allow GET, HEAD, the security headers and the admin error body, then the close; the listener goes on serving', async (t) => {
  const { base, admin } = await start(t);
  const port = admin.address().port;
  const r = await rawRequest(port, `CONNECT example.com:443 HTTP/1.1\r\nHost: 127.0.0.1:${port}`);
  assert.deepEqual(
    [r.status, r.headers.allow, r.headers['content-type'], r.headers.connection, r.body],
    [
      405,
      'GET, HEAD',
      'application/json; charset=utf-8',
      'close',
      '{"error":{"code":"SWY_ERR_ADMIN_METHOD_NOT_ALLOWED","message":"Method not allowed on the admin listener"}}',
    ],
  );
  assertSecurityHeaders(r.headers);
  assert.equal((await get(`${base}healthz`)).status, 200);
});

test('allowedHosts replaces the loopback default', async (t) => {
  const { source } = sourceOf();
  const recorder = createStatusRecorder();
  const admin = await startAdminServer({ port: 0, source, recorder, allowedHosts: ['switchyard.internal'] });
  t.after(async () => {
    await admin.close();
    recorder.close();
  });
  const base = admin.address().url;
  assert.equal((await get(`${base}healthz`, { headers: { host: 'switchyard.internal:7601' } })).status, 200);
  assert.equal((await get(`${base}healthz`)).status, 403);
});

test('a failing source is a 500 with SWY_ERR_INTERNAL_FAULT, and the listener keeps serving', async (t) => {
  const { base, state } = await start(t);
  state.failReady = true;
  const r = await get(`${base}readyz`);
  assert.deepEqual([r.status, r.text], [500, '{"error":{"code":"SWY_ERR_INTERNAL_FAULT","message":"Internal error"}}']);
  assert.equal((await get(`${base}healthz`)).status, 200);
});

test('a port in use fails with SWY_ERR_LISTEN_FAILED', async (t) => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  const { port } = blocker.address() as net.AddressInfo;
  const { source } = sourceOf();
  const recorder = createStatusRecorder();
  t.after(() => recorder.close());
  await assert.rejects(
    startAdminServer({ port, source, recorder }),
    (e: unknown) =>
      e instanceof SwitchyardError && e.code === 'SWY_ERR_LISTEN_FAILED' && e.message.startsWith(`Cannot listen: admin listener 127.0.0.1:${port}:`),
  );
});

test('recorder: p50 and p99 over five minutes stay within 5 %, and old slots leave the window', (t) => {
  let clock = T0;
  const recorder = createStatusRecorder({ now: () => clock, maxUpstreams: 2 });
  t.after(() => recorder.close());
  const { source, state } = sourceOf();
  state.upstreams = [...state.upstreams, { name: 'third', era: '2026-07-28', transport: 'http', state: 'up', inFlight: 0 }];
  for (let i = 1; i <= 1000; i++) {
    channels.upstreamCallEnd.publish({ ctx: ctxOf(), upstream: 'fs', startedAt: 0, durationMs: i / 10, rpcCode: i % 100 === 0 ? -32603 : undefined });
    if (i % 100 === 0) clock += SLOT_MS; // spread over ten slots
  }
  channels.upstreamCallEnd.publish({ ctx: ctxOf(), upstream: 'web', startedAt: 0, durationMs: 7 });
  channels.upstreamCallEnd.publish({ ctx: ctxOf(), upstream: 'third', startedAt: 0, durationMs: 7 });
  const calls = () => Object.fromEntries(recorder.snapshot(source).upstreams.map((u) => [u.name, u.calls]));
  const fs = calls().fs;
  assert.equal(fs.count, 1000);
  assert.equal(fs.errors, 10);
  assert.ok(Math.abs(fs.p50Ms! - 50) <= 50 * 0.05, `p50 ${fs.p50Ms}`);
  assert.ok(Math.abs(fs.p99Ms! - 99) <= 99 * 0.05, `p99 ${fs.p99Ms}`);
  assert.deepEqual(calls().web, { windowMs: CALL_WINDOW_MS, count: 1, errors: 0, p50Ms: 7, p99Ms: 7 });
  assert.equal(calls().third.count, 0, 'beyond maxUpstreams calls are not recorded');
  // Slot (the first 100 calls) leaves the window when the window no longer reaches back to it.
  clock = T0 + CALL_WINDOW_MS;
  assert.equal(calls().fs.count, 900);
  clock = T0 + CALL_WINDOW_MS + 20 * SLOT_MS;
  assert.deepEqual(calls().fs, { windowMs: CALL_WINDOW_MS, count: 0, errors: 0, p50Ms: null, p99Ms: null });
});

test('recorder: request series are bounded to the MCP methods plus _other and to ten minutes', (t) => {
  let clock = T0;
  const recorder = createStatusRecorder({ now: () => clock });
  t.after(() => recorder.close());
  const { source } = sourceOf();
  for (let i = 0; i < 200; i++) channels.requestEnd.publish({ ctx: ctxOf({ method: `evil/${i}<img src=x>` }), startedAt: 0, durationMs: 1, rpcCode: -32601 });
  channels.requestEnd.publish({ ctx: ctxOf({ method: 'ping', params: {} }), startedAt: 0, durationMs: 1 });
  let methods = recorder.snapshot(source).requests.methods;
  assert.deepEqual(
    methods.map((m) => [m.method, m.requests[59], m.errors[59]]),
    [
      ['ping', 1, 0],
      ['_other', 200, 200],
    ],
  );
  clock = T0 + 59 * SLOT_MS;
  methods = recorder.snapshot(source).requests.methods;
  assert.deepEqual(
    methods.map((m) => [m.method, m.requests[0]]),
    [
      ['ping', 1],
      ['_other', 200],
    ],
  );
  clock = T0 + 60 * SLOT_MS;
  assert.deepEqual(recorder.snapshot(source).requests.methods, []);
});

test('recorder: the last 100 refusals, newest first', (t) => {
  let clock = T0;
  const recorder = createStatusRecorder({ now: () => clock });
  t.after(() => recorder.close());
  const { source } = sourceOf();
  for (let i = 0; i < REFUSALS_KEPT + 5; i++) {
    channels.refusal.publish({ code: i % 2 ? 'SWY_ERR_HTTP_BODY_TOO_LARGE' : 'SWY_ERR_SESSION_NOT_FOUND', status: i % 2 ? 413 : 404 });
    clock += 1000;
  }
  const refusals = recorder.snapshot(source).refusals;
  assert.equal(refusals.length, REFUSALS_KEPT);
  assert.deepEqual(refusals[0], { at: new Date(T0 + 104_000).toISOString(), code: 'SWY_ERR_SESSION_NOT_FOUND', status: 404 });
  assert.deepEqual(refusals[REFUSALS_KEPT - 1], { at: new Date(T0 + 5_000).toISOString(), code: 'SWY_ERR_HTTP_BODY_TOO_LARGE', status: 413 });
});

test('readiness in the document folds in draining', (t) => {
  const recorder = createStatusRecorder({ now: () => T0 });
  t.after(() => recorder.close());
  const { source, state } = sourceOf();
  state.readiness = { ready: false, reasons: ['upstream web is down'] };
  state.draining = true;
  const doc = recorder.snapshot(source);
  assert.deepEqual([doc.ready, doc.reasons, doc.draining], [false, ['upstream web is down', 'draining'], true]);
});

// The admin listener is its own fastify instance: closing it leaves nothing behind.
test('close() frees the port', async () => {
  const { source } = sourceOf();
  const recorder = createStatusRecorder();
  const admin: AdminServer = await startAdminServer({ port: 0, source, recorder });
  const { port } = admin.address();
  await admin.close();
  recorder.close();
  const second = createStatusRecorder();
  const again = await startAdminServer({ port, source, recorder: second });
  assert.equal(again.address().port, port);
  await again.close();
  second.close();
});
