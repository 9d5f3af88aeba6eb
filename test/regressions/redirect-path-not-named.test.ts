// Regression (found by h-secrets): an HTTP upstream that answered a 301, 302 or 303 to the same
// origin was refused with a reason naming the Location's path (`HTTP 301 redirect to
// /KEY/mcp/ not followed: …`). A same-origin Location is most often the configured URL with a
// slash added, and an upstream's path may hold its key (docs/security.md: an upstream's URL is
// shown as its origin only), so the key reached the client's JSON-RPC error, the log and
// /status.json. The reason now names no path; `switchyard probe`'s step note still does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { gateway } from '../helpers/gateway.js';
import { modernHttp } from '../helpers/servers.js';
import { listenForTest } from '../helpers/stub-http.js';

const KEY = 'PLANTEDPATHKEY4f2c';

test('a 301 on a tool call, to the configured path with a slash added: the client, the log and the error name no path', async (t) => {
  const s = await modernHttp(t);
  const to = new URL(s.url);
  let cut = false;
  // In front of the server: its /mcp at /KEY/mcp, until `cut`, then a 301 to /KEY/mcp/.
  const origin = await listenForTest(
    t,
    http.createServer((req, res) => {
      if (cut) return void req.resume().on('end', () => res.writeHead(301, { location: `${req.url}/` }).end());
      const up = http.request({ host: to.hostname, port: to.port, method: req.method, path: '/mcp', headers: { ...req.headers, host: to.host } }, (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    }),
  );
  const gw = await gateway(t, { upstreamUrl: `${origin}/${KEY}/mcp`, upstreamEra: '2026-07-28', requireUpstreams: true });
  cut = true;
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
  const error = (r.json as { error: { message: string; data?: unknown } }).error;
  assert.equal(
    error.message,
    `Upstream protocol error: HTTP 301 redirect not followed: only 307 and 308 keep the method and body (RFC 9110 §15.4); use the URL it names itself`,
  );
  assert.doesNotMatch(r.text, new RegExp(KEY));
  assert.doesNotMatch(JSON.stringify(gw.records), new RegExp(KEY));
});

test('an upstream behind a followed 307 to its configured path plus a slash: the "upstream probed" line says it was redirected, not where', async (t) => {
  const s = await modernHttp(t);
  const to = new URL(s.url);
  const origin = await listenForTest(
    t,
    http.createServer((req, res) => {
      if (req.url === `/${KEY}/mcp`) return void req.resume().on('end', () => res.writeHead(307, { location: `/${KEY}/mcp/` }).end());
      const up = http.request({ host: to.hostname, port: to.port, method: req.method, path: '/mcp', headers: { ...req.headers, host: to.host } }, (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    }),
  );
  const gw = await gateway(t, { upstreamUrl: `${origin}/${KEY}/mcp` });
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
  assert.match(r.text, /Echo: hi/);
  assert.equal(gw.records.find((x) => x.msg === 'upstream probed')?.redirected, true);
  assert.doesNotMatch(JSON.stringify(gw.records), new RegExp(KEY));
});
