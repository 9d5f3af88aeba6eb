// A 403 for a foreign `Host` carried the CORS fields of a listed `Origin`: the routes' first hook
// set them before the Host check (and the fetch handler added them to whatever it answered), so a
// page on a listed origin could read the refusal of a request whose Host names another server,
// the DNS-rebinding shape the Host check exists for. A browser on a listed origin never sends a
// foreign Host, so nothing legitimate loses them: they are now set only once the Origin and Host
// check passed, on the listener, the fastify plugin and the fetch handler alike
// (docs/security.md, "CORS"). `Vary: Origin` stays on every answer of a served path.
// Spec: WHATWG Fetch §3.2 (the CORS protocol); 2025-11-25 basic/transports#security-warning.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { modernBody, modernHeaders, send, type RawResponse } from '../helpers/http.js';
import { gatewayFromConfig } from '../helpers/identity.js';
import { modernRequest, switchyard } from '../helpers/library.js';

/** A listed origin (the default allowedOrigins lets localhost through, any port). */
const PAGE = 'http://localhost:5173';
const HOST_403 = { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Forbidden: Host not allowed' } };
const KEY = 'cors-host-key_0123456789abcdefghijklmnopqrstu';
const API_KEYS = [{ name: 'page', sha256: createHash('sha256').update(KEY).digest('hex') }];
const EXPOSE = 'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, Retry-After, Allow, Accept-Encoding';

/** The `access-control-*` and `vary` fields of an answer. */
function corsOf(headers: Record<string, string | string[] | undefined> | Headers): Record<string, unknown> {
  const entries = headers instanceof Headers ? [...headers] : Object.entries(headers);
  return Object.fromEntries(entries.filter(([k]) => k.startsWith('access-control-') || k === 'vary'));
}

/** A POST, a 2025 GET and a preflight from PAGE to `url` with Host `host`. */
async function requestsWithHost(url: string, host: string): Promise<RawResponse[]> {
  return [
    await send(url, 'POST', JSON.stringify(modernBody(1, 'tools/list')), { ...modernHeaders('tools/list'), origin: PAGE, host }),
    await send(url, 'GET', undefined, { accept: 'text/event-stream', 'mcp-session-id': 'x', origin: PAGE, host }),
    await send(url, 'OPTIONS', undefined, { origin: PAGE, 'access-control-request-method': 'POST', host }),
  ];
}

test('the listener: a request from a listed Origin with a foreign Host gets 403 with no Access-Control-* field (Vary: Origin kept); the same with its own Host keeps them', async (t) => {
  // With `auth`, so that the RFC 9728 metadata path is served too.
  const gw = await gatewayFromConfig(t, { auth: { apiKeys: API_KEYS }, cors: { origins: [PAGE] }, upstreams: { a: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const { host } = new URL(url);
  for (const path of [url, `http://${host}/.well-known/oauth-protected-resource/a/mcp`]) {
    for (const r of await requestsWithHost(path, 'rebind.example')) {
      assert.equal(r.status, 403, path);
      assert.deepEqual(r.json, HOST_403, path);
      assert.deepEqual(corsOf(r.headers), { vary: 'Origin' }, path);
    }
  }
  // Its own Host: the page may read the answer (the 401 challenge, no key sent), and the preflight is answered.
  const [post, , pre] = await requestsWithHost(url, host);
  assert.equal(post.status, 401);
  assert.deepEqual(corsOf(post.headers), { 'access-control-allow-origin': PAGE, 'access-control-expose-headers': EXPOSE, vary: 'Origin' });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers['access-control-allow-origin'], PAGE);
});

test('the fastify plugin in a host application: a foreign Host gets 403 with no Access-Control-* field', async (t) => {
  const sy = switchyard(t, { cors: { origins: [PAGE] }, upstreams: { demo: { transport: 'embedded', path: '/mcp' } } });
  const app = Fastify({ forceCloseConnections: true });
  t.after(() => app.close());
  await app.register(sy.plugin);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`;
  for (const r of await requestsWithHost(url, 'rebind.example')) {
    assert.equal(r.status, 403);
    assert.deepEqual(r.json, HOST_403);
    assert.deepEqual(corsOf(r.headers), { vary: 'Origin' });
  }
});

test('the library fetch handler: a foreign Host gets 403 with no Access-Control-* field', async (t) => {
  // The library checks Host against a configured allowedHosts only (docs/embedding.md).
  const sy = switchyard(t, { allowedHosts: ['127.0.0.1'], cors: { origins: [PAGE] }, upstreams: { demo: { transport: 'embedded', path: '/mcp' } } });
  for (const request of [
    modernRequest('tools/list', {}, { url: 'http://rebind.example/mcp', headers: { origin: PAGE } }),
    new Request('http://rebind.example/mcp', { method: 'OPTIONS', headers: { origin: PAGE, 'access-control-request-method': 'POST' } }),
  ]) {
    const r = await sy.fetch(request);
    assert.equal(r.status, 403, request.method);
    assert.deepEqual(await r.json(), HOST_403);
    assert.deepEqual(corsOf(r.headers), { vary: 'Origin' }, request.method);
  }
  // 127.0.0.1, which the library's Host check lets through: the page may read it.
  const ok = await sy.fetch(modernRequest('tools/list', {}, { headers: { origin: PAGE } }));
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('access-control-allow-origin'), PAGE);
  await ok.text();
});
