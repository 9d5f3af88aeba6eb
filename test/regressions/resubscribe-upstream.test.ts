// A 2025 session that subscribes to one more resource must not make its upstream session
// unsubscribe and subscribe again every resource it already had. Found by an operator trial
// (shutdown logged dozens of `upstream subscription failed` lines for a session with 8
// subscriptions): each resources/subscribe closed the session's notification subscription
// before opening the new one, so every URI already subscribed went to zero subscribers and back,
// n resources cost about n²/2 unsubscribe and subscribe requests upstream, and an update the
// upstream sent between an unsubscribe and its subscribe was lost.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gateway } from '../helpers/gateway.js';
import { initSession, openSse, post } from '../helpers/http.js';
import { everythingHttp } from '../helpers/servers.js';

/** A proxy in front of `target` that records the JSON-RPC method of every POST it passes on. */
async function recordingProxy(t: { after(fn: () => void | Promise<void>): void }, target: string): Promise<{ url: string; methods: string[] }> {
  const to = new URL(target);
  const methods: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'POST') {
        try {
          const m = JSON.parse(body.toString()) as { method?: string };
          if (typeof m.method === 'string') methods.push(m.method);
        } catch {
          // not JSON: passed on as it is
        }
      }
      const up = http.request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${to.pathname}`, methods };
}

test('each resources/subscribe of a 2025 session reaches the upstream once; the ones before it are not unsubscribed and subscribed again', async (t) => {
  const everything = await everythingHttp(t, 'streamableHttp');
  const proxy = await recordingProxy(t, everything.url);
  const gw = await gateway(t, { upstreamUrl: proxy.url });
  const h = await initSession(gw.url);
  const stream = await openSse(gw.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': h['mcp-session-id'] });
  t.after(() => stream.close());
  assert.equal(stream.status, 200);
  const uris = [1, 2, 3, 4].map((i) => `demo://resource/dynamic/text/${i}`);
  for (const [i, uri] of uris.entries()) {
    const r = await post(gw.url, { jsonrpc: '2.0', id: 10 + i, method: 'resources/subscribe', params: { uri } }, h);
    assert.equal(r.status, 200, r.text);
  }
  const upstreamSubs = () => proxy.methods.filter((m) => m === 'resources/subscribe' || m === 'resources/unsubscribe');
  const deadline = Date.now() + 5_000;
  while (upstreamSubs().length < uris.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  // Anything more still on its way shows up here.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(upstreamSubs(), ['resources/subscribe', 'resources/subscribe', 'resources/subscribe', 'resources/subscribe']);
});

test('a gateway closed right after a session subscribed logs no failed upstream subscription (found by a trial: one warn per queued request)', async (t) => {
  const everything = await everythingHttp(t, 'streamableHttp');
  const records: Array<Record<string, unknown>> = [];
  const gw = await gateway(t, { upstreamUrl: everything.url }, records);
  const h = await initSession(gw.url);
  const stream = await openSse(gw.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': h['mcp-session-id'] });
  t.after(() => stream.close());
  await Promise.all(
    [1, 2, 3, 4, 5, 6, 7, 8].map((i) =>
      post(gw.url, { jsonrpc: '2.0', id: 10 + i, method: 'resources/subscribe', params: { uri: `demo://resource/dynamic/text/${i}` } }, h),
    ),
  );
  await gw.close();
  assert.deepEqual(
    records.filter((r) => r.msg === 'upstream subscription failed'),
    [],
  );
});
