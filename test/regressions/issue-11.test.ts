// Acceptance of "Operable" as the issue writes it, through the real `switchyard` command: an
// upstream down at start, metrics with bounded labels, traces to an OTLP receiver, the status
// page in Chromium, and SIGHUP reloads.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { connect, type ClientKind } from '../helpers/clients.js';
import { chromiumPage, noChromium } from '../helpers/chromium.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configFile, find, freePort, getText, labelValues, RAW_SERVER, openSession, opsHttp } from '../helpers/ops.js';
import { receiver } from '../helpers/otlp.js';

const IMG = '<img src=x onerror=alert(1)>';
const FAST_RECONNECT = { upstreamBackoffMinMs: 100, upstreamBackoffMaxMs: 400 };

async function echoThrough(kind: ClientKind, url: string, message: string): Promise<unknown> {
  const c = await connect(kind, url);
  try {
    await c.listTools();
    return (await c.callTool({ name: 'echo', arguments: { message } })).content;
  } finally {
    await c.close();
  }
}

test('1. an upstream at a dead port: the gateway starts, /readyz names it, the other mount serves; once it starts, it serves and /readyz is 200', async (t) => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const file = configFile(t, {
    listen: { port: 0 },
    admin: { port: 0 },
    limits: FAST_RECONNECT,
    upstreams: { demo: { transport: 'embedded' }, late: { url } },
  });
  const cli = await startOpsCli(t, ['--config', file]);
  const down = await getText(`${cli.admin}readyz`);
  assert.equal(down.status, 503);
  assert.deepEqual(down.json, {
    ready: false,
    reasons: [`upstream late is down: Upstream unavailable: ${new URL(url).origin}: connect ECONNREFUSED 127.0.0.1:${port}`],
  });
  for (const kind of ['v2-2026', 'v2-default', 'v1-streamable'] as const)
    assert.deepEqual(await echoThrough(kind, cli.urls.demo, kind), [{ type: 'text', text: `Echo: ${kind}` }]);

  const from = cli.records.length;
  await opsHttp(t, port);
  await cli.waitFor((r) => r.msg === 'upstream ready' && r.upstream === 'late', from);
  const up = await getText(`${cli.admin}readyz`);
  assert.equal(up.status, 200);
  assert.deepEqual(up.json, { ready: true, reasons: [] });
  assert.deepEqual(await echoThrough('v2-default', cli.urls.late, 'late'), [{ type: 'text', text: 'Echo: late' }]);
});

test('2. /metrics has mcp_server_operation_duration_seconds buckets for tools/call; a thousand random tool names add no label values', async (t) => {
  const file = configFile(t, { listen: { port: 0 }, admin: { port: 0 }, upstreams: { demo: { transport: 'embedded' } } });
  const cli = await startOpsCli(t, ['--config', file]);
  assert.deepEqual(await echoThrough('v2-2026', cli.url, 'one'), [{ type: 'text', text: 'Echo: one' }]);
  const before = (await getText(`${cli.admin}metrics`)).text;
  const buckets = find(before, 'mcp_server_operation_duration_seconds_bucket', { mcp_method_name: 'tools/call', le: '+Inf' });
  assert.deepEqual(
    buckets.map((b) => [b.labels.gen_ai_tool_name, b.labels.mount, b.labels.mcp_protocol_version, b.value]),
    [['echo', 'demo', '2026-07-28', 1]],
  );

  const secret = 'Bearer sekrit-token-for-the-log-check';
  for (let batch = 0; batch < 50; batch++)
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const name = `random-${batch}-${i}-${Math.random().toString(36).slice(2)}`;
        const r = await post(cli.url, modernBody(batch * 20 + i, 'tools/call', { name, arguments: {} }), {
          ...modernHeaders('tools/call', name),
          authorization: secret,
        });
        assert.equal(r.status, 200);
      }),
    );
  const after = (await getText(`${cli.admin}metrics`)).text;
  assert.deepEqual(
    find(after, 'mcp_server_operation_duration_seconds_count', { mcp_method_name: 'tools/call', gen_ai_tool_name: '_other' }).map((c) => c.value),
    [1000],
  );
  assert.deepEqual(labelValues(after, 'mcp_server_operation_duration_seconds', 'gen_ai_tool_name'), ['_other', 'echo']);
  assert.deepEqual(labelValues(after, 'mcp_client_operation_duration_seconds', 'gen_ai_tool_name'), ['_other', 'echo']);
  // One access line per request, and no token anywhere in the log.
  await cli.stop();
  const lines = cli.records.filter((r) => r.msg === 'request' && r.method === 'tools/call');
  assert.equal(lines.length, 1001);
  assert.ok(!JSON.stringify(cli.records).includes('sekrit'));
});

test('3. with OTEL_EXPORTER_OTLP_ENDPOINT set, a tools/call through an HTTP upstream makes a server and a client span of one trace, and the upstream gets that traceparent', async (t) => {
  const rx = await receiver(t);
  const upstream = await opsHttp(t);
  const file = configFile(t, { listen: { port: 0 }, admin: { port: 0 }, upstreams: { traced: { url: upstream.url } } });
  const cli = await startOpsCli(t, ['--config', file], {
    OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
    OTEL_BSP_SCHEDULE_DELAY: '50',
  });
  const r = await post(cli.url, modernBody(1, 'tools/call', { name: 'trace', arguments: {} }), modernHeaders('tools/call', 'trace'));
  assert.equal(r.status, 200);
  const seen = JSON.parse((r.json as { result: { content: Array<{ text: string }> } }).result.content[0].text) as { header: string; meta: string };

  // The 2026-07-28 front door also lists the tools (for their x-mcp-header annotations), on the call's
  // behalf: that upstream call has a client span of its own, and no server span.
  const call = await rx.named('tools/call trace', 2);
  const server = call.find((s) => s.kind === 2)!;
  const client = call.find((s) => s.kind === 3)!;
  assert.equal(call.length, 2);
  assert.equal(client.traceId, server.traceId);
  assert.equal(client.parentSpanId, server.spanId);
  assert.equal(seen.header, `00-${client.traceId}-${client.spanId}-01`);
  assert.equal(seen.meta, seen.header);
});

test(
  '4. Chromium renders the status page of a live gateway, one row per upstream; an upstream named <img src=x onerror=alert(1)> shows as text and runs no script',
  { skip: noChromium },
  async (t) => {
    const file = configFile(t, {
      listen: { port: 0 },
      admin: { port: 0 },
      upstreams: { demo: { transport: 'embedded' }, evil: { command: process.execPath, args: [RAW_SERVER, 'stdio', '--name', IMG] } },
    });
    const cli = await startOpsCli(t, ['--config', file]);
    const { page, dialogs } = await chromiumPage(t);
    const response = await page.goto(cli.admin!);
    assert.equal(response?.status(), 200);
    await page.waitForSelector('body[data-rendered]');
    const rows = page.locator('#upstreams tbody tr');
    assert.equal(await rows.count(), 2);
    const cells = await Promise.all([0, 1].map((i) => rows.nth(i).locator('td').allTextContents()));
    assert.deepEqual(
      cells.map((c) => c.slice(0, 5)),
      [
        ['demo', 'switchyard-demo 0.1.0', '2026-07-28', 'embedded', 'up'],
        ['evil', `${IMG} 1.0.0`, '2025-11-25', 'stdio', 'up'],
      ],
    );
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(await page.locator('#ready').textContent(), 'ready');
    const shot = path.join(REPO_ROOT, 'test-artifacts', 'status-page-live.png');
    mkdirSync(path.dirname(shot), { recursive: true });
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(statSync(shot).size > 0);
    assert.deepEqual(dialogs, []);
  },
);

test('5. SIGHUP with a broken file keeps serving; SIGHUP with one more upstream adds its mount without ending an open 2025 session on another mount', async (t) => {
  const config = { listen: { port: 0 }, admin: { port: 0 }, upstreams: { demo: { transport: 'embedded' } } };
  const file = configFile(t, config);
  const cli = await startOpsCli(t, ['--config', file]);
  const { headers: session } = await openSession(cli.url);
  const call = (id: number) => post(cli.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: `m${id}` } } }, session);

  writeFileSync(file, '{ "upstreams": { "demo": { "transport": "embedded", "nonsense": 1 } }, "listen": { "port": "x" } }');
  let from = cli.records.length;
  cli.child.kill('SIGHUP');
  await cli.waitFor((r) => r.msg === 'config reload failed; the running config stays', from);
  assert.deepEqual(
    cli.records
      .slice(from)
      .filter((r) => r.msg === 'config reload refused')
      .map((r) => [r.path, r.problem]),
    [
      ['/listen/port', 'must be integer'],
      ['/upstreams/demo/nonsense', 'is not a known key'],
    ],
  );
  assert.deepEqual((await call(1)).json, { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'Echo: m1' }] } });
  assert.deepEqual(
    find((await getText(`${cli.admin}metrics`)).text, 'switchyard_config_reloads_total', { result: 'failure' }).map((c) => c.value),
    [1],
  );

  writeFileSync(file, JSON.stringify({ ...config, upstreams: { ...config.upstreams, more: { command: process.execPath, args: [RAW_SERVER, 'stdio'] } } }));
  from = cli.records.length;
  cli.child.kill('SIGHUP');
  await cli.waitFor((r) => r.msg === 'config reloaded', from);
  const moreUrl = new URL('/more/mcp', cli.url).href;
  assert.deepEqual(await echoThrough('v2-2026', moreUrl, 'added'), [{ type: 'text', text: 'Echo: added' }]);
  assert.deepEqual((await call(2)).json, { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'Echo: m2' }] } });
  const metrics = (await getText(`${cli.admin}metrics`)).text;
  assert.deepEqual(
    find(metrics, 'switchyard_config_reloads_total', { result: 'success' }).map((c) => c.value),
    [1],
  );
  assert.deepEqual(
    find(metrics, 'switchyard_sessions', { mount: 'demo', dialect: '2025-03-26' }).map((c) => c.value),
    [1],
  );
  assert.ok(!cli.records.some((r) => r.msg === 'session closed'));
  await request(cli.url, { method: 'DELETE', headers: session }).then((res) => res.body.dump());
});
