// Origin and Host allowlists on every route (2025-11-25 basic/transports#security-warning).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post, send } from '../helpers/http.js';

const ORIGIN_403 = { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Forbidden: Origin not allowed' } };
const HOST_403 = { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Forbidden: Host not allowed' } };
const echo = modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'x' } });

test('no Origin is allowed; listed origins on any port are allowed', async (t) => {
  const gw = await gateway(t);
  for (const origin of [undefined, 'http://localhost:3000', 'http://127.0.0.1', 'https://[::1]:8443', 'http://LOCALHOST:9']) {
    const h = modernHeaders('tools/call', 'echo');
    if (origin) h.origin = origin;
    const r = await post(gw.url, echo, h);
    assert.equal(r.status, 200, String(origin));
  }
});

test('a present Origin that is not listed, malformed, or carries userinfo gets 403 with id null', async (t) => {
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  const base = gw.url.replace(/\/mcp$/, '');
  for (const origin of [
    'http://evil.example',
    'http://localhost.evil.example',
    'not a url',
    'http://user:pw@localhost',
    'http://user@localhost:3000',
    'null',
    'file:///etc',
  ]) {
    for (const [method, url] of [
      ['POST', gw.url],
      ['GET', `${base}/sse`],
      ['POST', `${base}/messages?sessionId=x`],
      ['GET', `${base}/nope`],
    ] as const) {
      const r = await send(url, method, method === 'POST' ? JSON.stringify(echo) : undefined, { ...modernHeaders('tools/call', 'echo'), origin });
      assert.equal(r.status, 403, `${origin} ${method} ${url}`);
      assert.deepEqual(r.json, ORIGIN_403);
      assert.equal(r.headers['content-type'], 'application/json');
    }
  }
});

test('an allowed origin entry with a port pins the port', async (t) => {
  const gw = await gateway(t, { allowedOrigins: ['app.example.com:8443', 'localhost'] });
  const at = (origin: string) => post(gw.url, echo, { ...modernHeaders('tools/call', 'echo'), origin });
  assert.equal((await at('https://app.example.com:8443')).status, 200);
  assert.equal((await at('https://app.example.com')).status, 403);
  assert.equal((await at('http://app.example.com:8444')).status, 403);
  assert.equal((await at('http://localhost:1234')).status, 200);
});

test('allowedHosts requires Host to be listed', async (t) => {
  const gw = await gateway(t, { allowedHosts: ['127.0.0.1'] });
  const ok = await post(gw.url, echo, modernHeaders('tools/call', 'echo'));
  assert.equal(ok.status, 200);
  const bad = await post(gw.url, echo, { ...modernHeaders('tools/call', 'echo'), host: 'evil.example' });
  assert.equal(bad.status, 403);
  assert.deepEqual(bad.json, HOST_403);
});

test('the listener binds 127.0.0.1 by default', async (t) => {
  const gw = await gateway(t, { host: undefined as never });
  assert.equal(gw.http.address().host, '127.0.0.1');
});
