// The admin listener over a live gateway: /healthz, /readyz naming each upstream that is down
// (optional ones do not count) and 503 on shutdown before draining, /status.json from the real
// state (supervisors, dialects' sessions and streams), the access line per request.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { initSession, modernBody, modernHeaders, openHttpSseSession, openSse, post } from '../helpers/http.js';
import { until } from '../helpers/replicas.js';
import { configGateway, find, freePort, getText, openSession } from '../helpers/ops.js';

test('readiness names each non-optional upstream that is down; status.json shows upstreams, mounts and sessions as they are', async (t) => {
  const [late, spare] = [await freePort(), await freePort()];
  const gw = await configGateway(
    t,
    {
      admin: { port: 0 },
      limits: { upstreamBackoffMinMs: 60_000, upstreamBackoffMaxMs: 60_000 },
      upstreams: {
        demo: { transport: 'embedded' },
        late: { url: `http://127.0.0.1:${late}/mcp`, era: '2026-07-28' },
        spare: { url: `http://127.0.0.1:${spare}/mcp`, era: '2026-07-28', optional: true },
      },
    },
    { operations: true },
  );
  const admin = gw.admin!.address().url;
  assert.deepEqual(await getText(`${admin}healthz`).then((r) => [r.status, r.json]), [200, { status: 'ok' }]);
  const refused = (p: number) => `Upstream unavailable: http://127.0.0.1:${p}: connect ECONNREFUSED 127.0.0.1:${p}`;
  assert.deepEqual(await getText(`${admin}readyz`).then((r) => [r.status, r.json]), [
    503,
    { ready: false, reasons: [`upstream late is down: ${refused(late)}`] },
  ]);

  const { headers: session } = await openSession(gw.urls[0]);
  const status = (await getText(`${admin}status.json`)).json as {
    ready: boolean;
    upstreams: Array<Record<string, unknown>>;
    mounts: Array<{ name: string; url: string; dialects: Array<{ id: string; sessions: number; streams: number }> }>;
  };
  assert.equal(status.ready, false);
  assert.deepEqual(
    status.upstreams.map((u) => [u.name, u.era, u.transport, u.state, u.inFlight, u.lastError, u.serverInfo]),
    [
      ['demo', '2026-07-28', 'embedded', 'up', 0, undefined, { name: 'switchyard-demo', version: '0.1.0' }],
      ['late', 'unknown', 'http', 'down', 0, refused(late), undefined],
      ['spare', 'unknown', 'http', 'down', 0, refused(spare), undefined],
    ],
  );
  assert.deepEqual(status.mounts[0], {
    name: 'demo',
    url: gw.urls[0],
    dialects: [
      { id: '2026-07-28', sessions: 0, streams: 0 },
      { id: '2025-03-26', sessions: 1, streams: 0 },
    ],
  });
  assert.deepEqual(
    status.mounts.map((m) => m.name),
    ['demo', 'late', 'spare'],
  );
  const metrics = (await getText(`${admin}metrics`)).text;
  assert.deepEqual(
    find(metrics, 'switchyard_upstream_state', { state: 'up' })
      .map((s) => [s.labels.upstream, s.value])
      .sort(),
    [
      ['demo', 1],
      ['late', 0],
      ['spare', 0],
    ],
  );
  await request(gw.urls[0], { method: 'DELETE', headers: session }).then((r) => r.body.dump());
});

test('on shutdown /readyz is 503 (draining) while the call in flight still finishes; one access line per request', async (t) => {
  const gw = await configGateway(t, { admin: { port: 0 }, upstreams: { demo: { transport: 'embedded' } } }, { operations: true });
  const admin = gw.admin!.address().url;
  assert.equal((await getText(`${admin}readyz`)).status, 200);
  const slow = post(gw.url, modernBody(1, 'tools/call', { name: 'slow', arguments: { steps: 2, stepMs: 500 } }), modernHeaders('tools/call', 'slow'));
  while (gw.executor.inFlight === 0) await new Promise((r) => setImmediate(r));
  const closing = gw.close();
  assert.deepEqual(await getText(`${admin}readyz`).then((r) => [r.status, r.json]), [503, { ready: false, reasons: ['draining'] }]);
  assert.equal(gw.executor.inFlight, 1);
  const done = await slow;
  assert.equal(done.status, 200);
  await closing;
  const lines = gw.records.filter((r) => r.msg === 'request');
  assert.deepEqual(
    lines.map(({ level, method, dialect, protocolVersion, mount, upstream, outcome }) => ({
      level,
      method,
      dialect,
      protocolVersion,
      mount,
      upstream,
      outcome,
    })),
    [
      // The call alone: the front door's own tools/list (x-mcp-header annotations) is made on its
      // behalf and is no client request (test/regressions/observed-requests.test.ts).
      { level: 30, method: 'tools/call', dialect: '2026-07-28', protocolVersion: '2026-07-28', mount: 'demo', upstream: 'demo', outcome: 'ok' },
    ],
  );
  assert.ok(lines.every((l) => typeof l.durationMs === 'number'));
});

test('admin: false starts no admin listener; the admin port may not be the MCP port', async (t) => {
  const gw = await configGateway(t, { admin: false, upstreams: { demo: { transport: 'embedded' } } }, { operations: true });
  assert.equal(gw.admin, undefined);
  const { validateConfig } = await import('../../src/config/load.js');
  assert.throws(() => validateConfig({ listen: { port: 7600 }, admin: { port: 7600 } }, 'test', { env: {} }), {
    code: 'SWY_ERR_CONFIG_INVALID',
    data: {
      source: 'test',
      errors: [
        {
          path: '/admin/port',
          message:
            "is the MCP listener's port (7600); the admin listener needs its own: another admin.port (--admin-port; 0 picks a free one), or admin: false (--no-admin)",
        },
      ],
    },
  });
  assert.throws(() => validateConfig({ admin: true }, 'test', { env: {} }), {
    data: { source: 'test', errors: [{ path: '/admin', message: 'must be an object (`{}` for 127.0.0.1:7601) or false' }] },
  });
});

test('requests a dialect answers itself (initialize, ping, logging/setLevel, server/discover) are counted, measured and logged like routed ones', async (t) => {
  const gw = await configGateway(t, { admin: { port: 0 }, upstreams: { demo: { transport: 'embedded' } } }, { operations: true });
  const admin = gw.admin!.address().url;
  const { headers } = await openSession(gw.url);
  assert.equal((await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, headers)).status, 200);
  assert.equal((await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'bogus' } }, headers)).status, 200);
  assert.equal((await post(gw.url, modernBody(3, 'server/discover'), modernHeaders('server/discover'))).status, 200);

  const status = (await getText(`${admin}status.json`)).json as { requests: { methods: Array<{ method: string; requests: number[]; errors: number[] }> } };
  const count = (method: string) => {
    const m = status.requests.methods.find((x) => x.method === method);
    return m && [m.requests.reduce((a, b) => a + b, 0), m.errors.reduce((a, b) => a + b, 0)];
  };
  assert.deepEqual(['initialize', 'ping', 'logging/setLevel', 'server/discover'].map(count), [
    [1, 0],
    [1, 0],
    [1, 1],
    [1, 0],
  ]);
  const exposition = (await getText(`${admin}metrics`)).text;
  const n = (method: string) => find(exposition, 'mcp_server_operation_duration_seconds_count', { mcp_method_name: method }).reduce((a, s) => a + s.value, 0);
  assert.deepEqual(['initialize', 'ping', 'logging/setLevel', 'server/discover'].map(n), [1, 1, 1, 1]);
  assert.deepEqual(
    find(exposition, 'mcp_server_operation_duration_seconds_count', { mcp_method_name: 'initialize' }).map((s) => s.labels.mcp_protocol_version),
    ['2025-06-18'],
  );
  const lines = gw.records.filter((r) => r.msg === 'request').map((r) => [r.method, r.outcome]);
  for (const want of [
    ['initialize', 'ok'],
    ['ping', 'ok'],
    ['server/discover', 'ok'],
  ])
    assert.ok(
      lines.some((l) => l[0] === want[0] && l[1] === want[1]),
      `${want.join(' ')} in ${JSON.stringify(lines)}`,
    );
  assert.ok(lines.some((l) => l[0] === 'logging/setLevel' && l[1] !== 'ok'));
});

test('a session refusing initialize again, a batched initialize and a request before initialize are each counted once; initialize with the upstream down is a request error, not a refusal too', async (t) => {
  const closed = await freePort();
  const gw = await configGateway(
    t,
    { admin: { port: 0 }, dialects: { legacySse: true }, upstreams: { demo: { transport: 'embedded' } } },
    { operations: true },
  );
  const admin = gw.admin!.address().url;
  const origin = new URL(gw.url).origin;
  // HTTP+SSE: a request before initialize, initialize, then initialize again.
  const ssePath = `${new URL(gw.url).pathname.replace(/mcp$/, '')}sse`;
  const sse = await openSse(`${origin}${ssePath}`, 'GET', { accept: 'text/event-stream' });
  t.after(() => sse.close());
  const endpoint = new URL((await sse.next()).data, `${origin}${ssePath}`).href;
  const postSse = (body: unknown) => post(endpoint, body, { 'content-type': 'application/json' });
  const init = { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 't', version: '1' } };
  assert.equal((await postSse({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).status, 202);
  assert.deepEqual(JSON.parse((await sse.next()).data).error.code, -32000);
  assert.equal((await postSse({ jsonrpc: '2.0', id: 2, method: 'initialize', params: init })).status, 202);
  assert.ok(JSON.parse((await sse.next()).data).result);
  assert.equal((await postSse({ jsonrpc: '2.0', id: 3, method: 'initialize', params: init })).status, 202);
  assert.equal(JSON.parse((await sse.next()).data).error.code, -32600);
  // 2025-03-26: initialize inside a batch.
  const headers = await initSession(gw.url, '2025-03-26');
  const batch = await post(
    gw.url,
    [
      { jsonrpc: '2.0', id: 'i', method: 'initialize', params: { ...init, protocolVersion: '2025-03-26' } },
      { jsonrpc: '2.0', id: 'p', method: 'ping' },
    ],
    headers,
  );
  assert.equal(batch.status, 200);
  const status = (await getText(`${admin}status.json`)).json as { requests: { methods: Array<{ method: string; requests: number[]; errors: number[] }> } };
  const sum = (xs: number[] | undefined) => (xs ?? []).reduce((a, b) => a + b, 0);
  const of = (method: string) => status.requests.methods.find((x) => x.method === method);
  // initialize: the HTTP+SSE one and its refused second, the 2025 session's and its refused batched one.
  assert.deepEqual([sum(of('initialize')?.requests), sum(of('tools/list')?.requests), sum(of('ping')?.requests)], [4, 1, 1]);
  const lines = gw.records.filter((r) => r.msg === 'request' && r.method === 'initialize').map((r) => r.code ?? 'ok');
  assert.deepEqual(lines.sort(), ['SWY_ERR_SESSION_ALREADY_INITIALIZED', 'SWY_ERR_SESSION_ALREADY_INITIALIZED', 'ok', 'ok']);
  assert.ok(gw.records.some((r) => r.msg === 'request' && r.method === 'tools/list' && r.code === 'SWY_ERR_SESSION_NOT_INITIALIZED'));

  const down = await configGateway(
    t,
    { admin: { port: 0 }, upstreams: { gone: { url: `http://127.0.0.1:${closed}/mcp`, era: '2025-06-18' } } },
    { operations: true },
  );
  const r = await post(
    down.url,
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { ...init, protocolVersion: '2025-06-18' } },
    { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  );
  assert.equal(r.status, 503);
  const exposition = (await getText(`${down.admin!.address().url}metrics`)).text;
  assert.equal(
    find(exposition, 'mcp_server_operation_duration_seconds_count', { mcp_method_name: 'initialize' }).reduce((a, s) => a + s.value, 0),
    1,
  );
  assert.deepEqual(
    find(exposition, 'switchyard_refusals_total').filter((s) => s.value > 0),
    [],
  );
});

test('requests a dialect refuses before the executor (its era checks, --strict=reject) count as refusals', async (t) => {
  const gw = await configGateway(t, { admin: { port: 0 }, strict: 'reject', upstreams: { demo: { transport: 'embedded' } } }, { operations: true });
  const admin = gw.admin!.address().url;
  // 2026-07-28: the Mcp-Method header names another method (-32020); an unsupported revision (-32022).
  const mismatch = await post(gw.url, modernBody(1, 'server/discover'), modernHeaders('tools/list'));
  assert.equal(mismatch.status, 400);
  const future = modernBody(2, 'tools/list');
  (future.params as { _meta: Record<string, unknown> })._meta['io.modelcontextprotocol/protocolVersion'] = '2099-01-01';
  const unsupported = await post(gw.url, future, { ...modernHeaders('tools/list'), 'mcp-protocol-version': '2099-01-01' });
  assert.equal(unsupported.status, 400);
  // --strict=reject inside a 2025 session: tools/call without a name.
  const headers = await initSession(gw.url, '2025-06-18');
  const bad = await post(gw.url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { arguments: {} } }, headers);
  assert.equal((JSON.parse(bad.text) as { error: { code: number } }).error.code, -32602);
  const exposition = (await getText(`${admin}metrics`)).text;
  const refusals = find(exposition, 'switchyard_refusals_total')
    .filter((s) => s.value > 0)
    .map((s) => [s.labels.code, s.labels.dialect, s.value]);
  assert.deepEqual(refusals.sort(), [
    ['SWY_ERR_MODERN_HEADER_MISMATCH', '2026-07-28', 1],
    ['SWY_ERR_MODERN_VERSION', '2026-07-28', 1],
    ['SWY_ERR_REQ_SCHEMA', '2025-03-26', 1],
  ]);
});

test('switchyard_streams counts HTTP+SSE streams (kind http-sse) and 2026-07-28 listens (kind listen) as /status.json does, and drops them when they close', async (t) => {
  const gw = await configGateway(
    t,
    { admin: { port: 0 }, dialects: { legacySse: true }, upstreams: { demo: { transport: 'embedded' } } },
    { operations: true },
  );
  const admin = gw.admin!.address().url;
  const streams = async () => {
    const exposition = (await getText(`${admin}metrics`)).text;
    const metric = (kind: string) => find(exposition, 'switchyard_streams', { kind }).reduce((a, s) => a + s.value, 0);
    const status = (await getText(`${admin}status.json`)).json as { mounts: Array<{ dialects: Array<{ id: string; streams: number }> }> };
    const of = (id: string) => status.mounts[0].dialects.find((d) => d.id === id)!.streams;
    return { httpSse: [metric('http-sse'), of('2024-11-05')], listen: [metric('listen'), of('2026-07-28')] };
  };
  const legacy = await openHttpSseSession(t, gw.url.replace(/\/mcp$/, ''));
  const listen = await openSse(
    gw.url,
    'POST',
    modernHeaders('subscriptions/listen'),
    JSON.stringify(modernBody('L', 'subscriptions/listen', { notifications: { toolsListChanged: true } })),
  );
  t.after(() => listen.close());
  assert.equal(JSON.parse((await listen.next()).data).method, 'notifications/subscriptions/acknowledged');
  assert.deepEqual(await streams(), { httpSse: [1, 1], listen: [1, 1] });
  legacy.sse.close();
  listen.close();
  await until(async () => JSON.stringify(await streams()) === JSON.stringify({ httpSse: [0, 0], listen: [0, 0] }), 'both streams closed');
});

// Found 2026-12-05: a 2025 POST whose answer became an SSE stream (progress before the result)
// was in /status.json's streams but never in switchyard_streams (kind="request" was reserved).
test('switchyard_streams counts a 2025 POST answered as an SSE stream (kind request) while it is open, and 0 once it ended', async (t) => {
  const gw = await configGateway(t, { admin: { port: 0 }, upstreams: { demo: { transport: 'embedded' } } }, { operations: true });
  const admin = gw.admin!.address().url;
  const requestStreams = async () => find((await getText(`${admin}metrics`)).text, 'switchyard_streams', { kind: 'request' }).reduce((a, s) => a + s.value, 0);
  const h = await initSession(gw.url, '2025-11-25');
  const call = await openSse(
    gw.url,
    'POST',
    { ...h, 'mcp-protocol-version': '2025-11-25' },
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'slow', arguments: { steps: 30, stepMs: 50 }, _meta: { progressToken: 'p' } },
    }),
  );
  t.after(() => call.close());
  // Past the priming event to the first progress notification: the answer is a stream now.
  for (;;) {
    const ev = await call.next();
    if (ev.data !== '' && JSON.parse(ev.data).method === 'notifications/progress') break;
  }
  assert.equal(await requestStreams(), 1);
  await call.ended;
  await until(async () => (await requestStreams()) === 0, 'the request stream to be counted closed');
});
