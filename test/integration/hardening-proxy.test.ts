// Reverse proxies: a real nginx publishes the real CLI under /tenant-7/ with the prefix stripped.
// With no flag but --legacy-sse (and --port), the HTTP+SSE endpoint reference leads the v1 SSE
// client's POSTs back under the prefix, and every other official client works through it too;
// trustProxy and publicBaseUrl give the absolute form, and a trusted proxy's bad value is a 400.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLIENT_KINDS, connect, type ClientKind } from '../helpers/clients.js';
import { startCli } from '../helpers/cli.js';
import { openSse, send } from '../helpers/http.js';
import { startNginx } from '../helpers/nginx.js';

/** Lists and calls a tool through `url` with a client of `kind`. */
async function listAndCall(kind: ClientKind, url: string): Promise<void> {
  const client = await connect(kind, url);
  try {
    const { tools } = await client.listTools();
    assert.ok(
      tools.some((x) => x.name === 'echo'),
      `${kind}: ${JSON.stringify(tools.map((x) => x.name))}`,
    );
    const r = await client.callTool({ name: 'echo', arguments: { message: `via ${kind}` } });
    assert.deepEqual(r.content, [{ type: 'text', text: `Echo: via ${kind}` }], kind);
  } finally {
    await client.close();
  }
}

test('acceptance 2: nginx under /tenant-7/, prefix stripped, the CLI with only --legacy-sse: every client lists and calls tools', async (t) => {
  const cli = await startCli(t, ['--legacy-sse']);
  const ngx = await startNginx(t, { upstreamPort: cli.port });
  assert.equal(ngx.url, `http://127.0.0.1:${ngx.port}/tenant-7/`);

  // The v1 SSE client (SSEClientTransport) at the public /tenant-7/sse, and the endpoint it is given.
  const sse = await openSse(`${ngx.url}sse`, 'GET', { accept: 'text/event-stream' });
  t.after(() => sse.close());
  const endpoint = await sse.next();
  assert.equal(endpoint.event, 'endpoint');
  assert.match(endpoint.data, /^messages\?sessionId=[0-9a-f-]{36}$/);
  assert.equal(new URL(endpoint.data, `${ngx.url}sse`).pathname, '/tenant-7/messages');
  sse.close();
  await listAndCall('v1-sse-2024', `${ngx.url}sse`);
  // The v2 client (and the others) at the public /tenant-7/mcp.
  for (const kind of CLIENT_KINDS.filter((k) => k !== 'v1-sse-2024')) await listAndCall(kind, `${ngx.url}mcp`);
  assert.equal(await cli.stop(), 0);
});

test('--trust-proxy 127.0.0.1: the endpoint is the absolute public URL nginx forwarded; the v1 SSE client follows it', async (t) => {
  const cli = await startCli(t, ['--legacy-sse', '--trust-proxy', '127.0.0.1']);
  const ngx = await startNginx(t, { upstreamPort: cli.port });
  const sse = await openSse(`${ngx.url}sse`, 'GET', { accept: 'text/event-stream' });
  t.after(() => sse.close());
  const endpoint = await sse.next();
  assert.match(endpoint.data, new RegExp(`^http://127\\.0\\.0\\.1:${ngx.port}/tenant-7/messages\\?sessionId=[0-9a-f-]{36}$`));
  sse.close();
  await listAndCall('v1-sse-2024', `${ngx.url}sse`);
});

test('a trusted proxy that sends an invalid X-Forwarded-Prefix gets 400 before any stream opens; an untrusted one is ignored', async (t) => {
  const trusted = await startCli(t, ['--legacy-sse', '--trust-proxy', 'loopback']);
  const bad = await send(`${trusted.origin}/sse`, 'GET', undefined, { accept: 'text/event-stream', 'x-forwarded-prefix': '/a/../b' });
  assert.equal(bad.status, 400);
  assert.equal(bad.headers['content-type'], 'application/json');
  assert.deepEqual(bad.json, {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32600, message: 'Bad Request: invalid X-Forwarded-* header: X-Forwarded-Prefix "/a/../b"' },
  });
  // A good prefix from the trusted peer: the absolute path under it.
  const ok = await openSse(`${trusted.origin}/sse`, 'GET', { accept: 'text/event-stream', 'x-forwarded-prefix': '/t7' });
  t.after(() => ok.close());
  assert.match((await ok.next()).data, /^\/t7\/messages\?sessionId=[0-9a-f-]{36}$/);
  ok.close();

  const untrusted = await startCli(t, ['--legacy-sse']);
  const ignored = await openSse(`${untrusted.origin}/sse`, 'GET', {
    accept: 'text/event-stream',
    'x-forwarded-prefix': '/a/../b',
    'x-forwarded-host': 'evil.example',
  });
  t.after(() => ignored.close());
  assert.equal(ignored.status, 200);
  assert.match((await ignored.next()).data, /^messages\?sessionId=[0-9a-f-]{36}$/);
});

test('--public-base-url gives the absolute form whatever the headers say; a bad value stops the start', async (t) => {
  const cli = await startCli(t, ['--legacy-sse', '--public-base-url', 'https://mcp.example.com/tenant-7/']);
  const sse = await openSse(`${cli.origin}/sse`, 'GET', { accept: 'text/event-stream', 'x-forwarded-host': 'evil.example' });
  t.after(() => sse.close());
  assert.match((await sse.next()).data, /^https:\/\/mcp\.example\.com\/tenant-7\/messages\?sessionId=[0-9a-f-]{36}$/);
  sse.close();
  await assert.rejects(
    startCli(t, ['--public-base-url', 'https://mcp.example.com/a/../b']),
    // Refused by the config schema (a usage error, as `switchyard validate` says too), before the start's own check.
    /exited 2 before listening: .*\/publicBaseUrl: must be an http:\/\/ or https:\/\/ URL with a host and a clean path/s,
  );
  // Refused by validation too since config-trial-3 (it used to pass validation and fail the start, exit 1).
  await assert.rejects(
    startCli(t, ['--trust-proxy', '10.0.0.0/99']),
    /exited 2 before listening: .*\/trustProxy\/0: must be an IPv4 or IPv6 address, a CIDR with a prefix length in range/s,
  );
});
