// CORS for browser-based MCP clients (docs/security.md, "CORS"): off by default (no
// `Access-Control-*`, OPTIONS keeps its 405/404); with `cors`, preflights answered 204 on every
// era's routes and the RFC 9728 metadata, before authentication, and the `Access-Control-*`
// fields on every answer to a listed origin, hand-written ones (SSE heads, refusals) included.
// See WHATWG Fetch §3.2 (the CORS protocol), §4.8 (CORS-preflight fetch).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { request } from 'undici';
import { validateConfig } from '../../src/config/load.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { createCors } from '../../src/transports/cors.js';
import { createOriginCheck } from '../../src/transports/origin.js';
import { CLI, startCli } from '../helpers/cli.js';
import { configIssuesOf } from '../helpers/config.js';
import { modernBody, modernHeaders, send, type RawResponse } from '../helpers/http.js';
import { gatewayFromConfig, sessionHeaders } from '../helpers/identity.js';
import { modernRequest, switchyard } from '../helpers/library.js';

const KEY = 'cors-key_0123456789abcdefghijklmnopqrstuv';
const BEARER = `Bearer ${KEY}`;
const API_KEYS = [{ name: 'page', sha256: createHash('sha256').update(KEY).digest('hex') }];
/** A listed origin (allowed by the default allowedOrigins: localhost, any port). */
const PAGE = 'http://localhost:5173';
/** An origin allowedOrigins lets through but `cors` does not list. */
const UNLISTED = 'http://127.0.0.1:5173';
const EXPOSE = 'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, Retry-After, Allow, Accept-Encoding';
/** The fields of an actual answer to PAGE. */
const ACTUAL = { 'access-control-allow-origin': PAGE, 'access-control-expose-headers': EXPOSE, vary: 'Origin' };

/** The `access-control-*` and `vary` fields of an answer. */
function corsOf(r: { headers: Record<string, string | string[] | undefined> }): Record<string, unknown> {
  return Object.fromEntries(Object.entries(r.headers).filter(([k]) => k.startsWith('access-control-') || k === 'vary'));
}

/** A preflight: OPTIONS with Origin and Access-Control-Request-Method (and -Headers when given). */
function preflight(url: string, origin: string, method: string, headers?: string): Promise<RawResponse> {
  return send(url, 'OPTIONS', undefined, {
    origin,
    'access-control-request-method': method,
    ...(headers !== undefined ? { 'access-control-request-headers': headers } : {}),
  });
}

/** The headers (and status) of a GET that opens an SSE stream, which is then dropped. */
async function sseHead(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  const ac = new AbortController();
  const res = await request(url, { method: 'GET', headers: { accept: 'text/event-stream', ...headers }, signal: ac.signal });
  const out = { status: res.statusCode, headers: res.headers };
  ac.abort();
  await res.body.text().catch(() => {});
  return out;
}

const BASE = {
  auth: { apiKeys: API_KEYS },
  dialects: { modern: true, streamable: true, legacySse: true },
  upstreams: { a: { transport: 'embedded' } },
};

test('without `cors`: no Access-Control-* field anywhere, and a preflight gets the 405 OPTIONS always got', async (t) => {
  const gw = await gatewayFromConfig(t, BASE);
  const url = gw.urls[0];
  const pre = await preflight(url, PAGE, 'POST', 'content-type');
  assert.equal(pre.status, 405);
  assert.equal(pre.headers.allow, 'GET, POST, DELETE');
  assert.deepEqual(corsOf(pre), {});
  const call = await send(url, 'POST', JSON.stringify(modernBody(1, 'tools/list')), { ...modernHeaders('tools/list'), authorization: BEARER, origin: PAGE });
  assert.equal(call.status, 200);
  assert.deepEqual(corsOf(call), {});
});

test('preflights from a listed origin are answered 204 on every route, before authentication; others keep their answer', async (t) => {
  const gw = await gatewayFromConfig(t, { ...BASE, cors: { origins: [PAGE] } });
  const url = gw.urls[0];
  const origin = new URL(url).origin;
  const sse = url.replace(/\/mcp$/, '/sse');
  const messages = url.replace(/\/mcp$/, '/messages');
  const wellKnown = `${origin}/.well-known/oauth-protected-resource`;
  const vary = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';
  const asked = 'accept, authorization, content-type, last-event-id, mcp-method, mcp-name, mcp-param-region, mcp-protocol-version, mcp-session-id, x-private';
  const granted = 'accept, authorization, content-type, last-event-id, mcp-method, mcp-name, mcp-param-region, mcp-protocol-version, mcp-session-id';
  const recordsBefore = gw.records.length;
  for (const [target, method, allow] of [
    [url, 'POST', 'GET, POST, DELETE'], // 2026-07-28 POST, 2025 POST
    [url, 'GET', 'GET, POST, DELETE'], // 2025 GET stream
    [url, 'DELETE', 'GET, POST, DELETE'], // 2025 session end
    [sse, 'GET', 'GET'], // 2024-11-05 stream
    [`${messages}?sessionId=x`, 'POST', 'POST'], // 2024-11-05 messages URI
    [`${wellKnown}/a/mcp`, 'GET', 'GET, HEAD'], // RFC 9728 metadata
    [wellKnown, 'GET', 'GET, HEAD'],
  ] as const) {
    const pre = await preflight(target, PAGE, method, asked);
    assert.equal(pre.status, 204, `${method} ${target}`);
    assert.equal(pre.text, '');
    assert.deepEqual(
      corsOf(pre),
      {
        'access-control-allow-origin': PAGE,
        'access-control-allow-methods': allow,
        'access-control-allow-headers': granted,
        'access-control-max-age': '600',
        'access-control-expose-headers': EXPOSE,
        vary,
      },
      target,
    );
    // No credential, yet no 401: the preflight never reached authentication.
    assert.equal(pre.headers['www-authenticate'], undefined);
  }
  // No preflight reached the front door's authentication, a refusal or a dialect (no line at all).
  assert.deepEqual(gw.records.slice(recordsBefore), []);
  // Without Access-Control-Request-Headers: no Allow-Headers.
  assert.equal((await preflight(url, PAGE, 'POST')).headers['access-control-allow-headers'], undefined);

  // An origin allowedOrigins passes but cors does not list: the answers OPTIONS always got, no CORS.
  const unlisted = await preflight(url, UNLISTED, 'POST', 'content-type');
  assert.equal(unlisted.status, 405);
  assert.equal(unlisted.headers.allow, 'GET, POST, DELETE');
  assert.deepEqual(corsOf(unlisted), { vary: 'Origin' });
  // (the HTTP+SSE stream path: its 405 with Allow: GET, decided with the head's checks; the metadata: 404)
  const unlistedSse = await preflight(sse, UNLISTED, 'GET');
  assert.deepEqual([unlistedSse.status, unlistedSse.headers.allow], [405, 'GET']);
  assert.equal((await preflight(`${wellKnown}/a/mcp`, UNLISTED, 'GET')).status, 404);
  // An origin allowedOrigins refuses: 403, no CORS.
  const evil = await preflight(url, 'https://evil.example', 'POST');
  assert.equal(evil.status, 403);
  assert.deepEqual(corsOf(evil), { vary: 'Origin' });
  // A path no mount serves: 404 as before.
  assert.equal((await preflight(`${origin}/nowhere`, PAGE, 'POST')).status, 404);
  // OPTIONS without Access-Control-Request-Method is no preflight: 405 with Allow, as always (CORS fields on it).
  const plain = await send(url, 'OPTIONS', undefined, { origin: PAGE });
  assert.equal(plain.status, 405);
  assert.equal(plain.headers.allow, 'GET, POST, DELETE');
  assert.deepEqual(corsOf(plain), ACTUAL);
  assert.equal((await send(sse, 'OPTIONS', undefined, { origin: PAGE })).status, 405);
});

test('the fastify plugin in a host application answers preflights on every route; other OPTIONS get the host’s answer as before', async (t) => {
  const sy = switchyard(t, { ...BASE, upstreams: { demo: { transport: 'embedded', path: '/mcp' } }, cors: { origins: [PAGE] } });
  const app = Fastify({ forceCloseConnections: true });
  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ host: 'not found' }));
  t.after(() => app.close());
  await app.register(sy.plugin);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  for (const [path, method, allow] of [
    ['/mcp', 'POST', 'GET, POST, DELETE'],
    ['/sse', 'GET', 'GET'],
    ['/messages', 'POST', 'POST'],
    ['/.well-known/oauth-protected-resource/mcp', 'GET', 'GET, HEAD'],
  ] as const) {
    const pre = await preflight(`${base}${path}`, PAGE, method, 'authorization, content-type');
    assert.equal(pre.status, 204, path);
    assert.equal(pre.headers['access-control-allow-methods'], allow, path);
    assert.equal(pre.headers['access-control-allow-headers'], 'authorization, content-type', path);
    // An OPTIONS that is no preflight, and a preflight from an origin not listed: the host's 404, as without a route.
    if (path !== '/mcp') {
      for (const other of [send(`${base}${path}`, 'OPTIONS', undefined, { origin: PAGE }), preflight(`${base}${path}`, UNLISTED, method)]) {
        const r = await other;
        assert.deepEqual([r.status, r.json], [404, { host: 'not found' }], path);
      }
    }
  }
  const denied = await send(`${base}/mcp`, 'POST', JSON.stringify(modernBody(1, 'tools/list')), { ...modernHeaders('tools/list'), origin: PAGE });
  assert.equal(denied.status, 401);
  assert.deepEqual(corsOf(denied), ACTUAL);
});

test("every answer to a listed origin carries the CORS fields: JSON, SSE heads (listen, 2025 GET, HTTP+SSE), 202, 401, 403, 406 and the metadata; a foreign Host's 403 only Vary", async (t) => {
  const gw = await gatewayFromConfig(t, { ...BASE, cors: { origins: [PAGE], maxAgeSec: 30 } });
  const url = gw.urls[0];
  const origin = new URL(url).origin;
  const o = { origin: PAGE };

  // 2026-07-28 tools/call (JSON).
  const call = await send(url, 'POST', JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } })), {
    ...modernHeaders('tools/call', 'echo'),
    authorization: BEARER,
    ...o,
  });
  assert.equal(call.status, 200, call.text);
  assert.deepEqual(corsOf(call), ACTUAL);

  // 2026-07-28 subscriptions/listen: an SSE head written by hand.
  const ac = new AbortController();
  const listen = await request(url, {
    method: 'POST',
    signal: ac.signal,
    headers: { ...modernHeaders('subscriptions/listen'), authorization: BEARER, ...o },
    body: JSON.stringify(modernBody('L', 'subscriptions/listen', { notifications: { toolsListChanged: true } })),
  });
  assert.equal(listen.statusCode, 200);
  assert.equal(listen.headers['content-type'], 'text/event-stream');
  assert.deepEqual(corsOf(listen), ACTUAL);
  ac.abort();
  await listen.body.text().catch(() => {});

  // 401 with its challenge, which the page may read.
  const denied = await send(url, 'POST', JSON.stringify(modernBody(2, 'tools/list')), { ...modernHeaders('tools/list'), ...o });
  assert.equal(denied.status, 401);
  assert.match(String(denied.headers['www-authenticate']), /^Bearer resource_metadata="/);
  assert.deepEqual(corsOf(denied), ACTUAL);

  // 2025 initialize: Mcp-Session-Id, exposed.
  const init = await send(
    url,
    'POST',
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
    }),
    { ...sessionHeaders(undefined, BEARER), ...o },
  );
  assert.equal(init.status, 200, init.text);
  const session = String(init.headers['mcp-session-id']);
  assert.ok(session.length > 0);
  assert.deepEqual(corsOf(init), ACTUAL);
  const h2025 = { ...sessionHeaders(session, BEARER), ...o };
  const initialized = await send(url, 'POST', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), h2025);
  assert.equal(initialized.status, 202);
  assert.deepEqual(corsOf(initialized), ACTUAL);
  // The session's GET stream: an SSE head written by hand.
  const stream = await sseHead(url, { authorization: BEARER, 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26', ...o });
  assert.equal(stream.status, 200);
  assert.deepEqual(corsOf(stream), ACTUAL);
  // 406 from the front door (a POST that does not accept SSE).
  const notAcceptable = await send(url, 'POST', '{}', { ...h2025, accept: 'application/json' });
  assert.equal(notAcceptable.status, 406);
  assert.deepEqual(corsOf(notAcceptable), ACTUAL);
  const ended = await send(url, 'DELETE', undefined, h2025);
  assert.equal(ended.status, 200);
  assert.deepEqual(corsOf(ended), ACTUAL);

  // 2024-11-05: the HTTP+SSE stream's head.
  const legacy = await sseHead(url.replace(/\/mcp$/, '/sse'), { authorization: BEARER, ...o });
  assert.equal(legacy.status, 200);
  assert.deepEqual(corsOf(legacy), ACTUAL);

  // RFC 9728 metadata (fastify's own reply).
  const meta = await send(`${origin}/.well-known/oauth-protected-resource/a/mcp`, 'GET', undefined, o);
  assert.equal(meta.status, 200);
  assert.deepEqual(corsOf(meta), ACTUAL);

  // 403 for a Host the allowlist refuses: not the page's to read (regressions/cors-foreign-host).
  const badHost = await send(url, 'POST', '{}', { ...modernHeaders('tools/list'), authorization: BEARER, ...o, host: 'rebind.example' });
  assert.equal(badHost.status, 403);
  assert.deepEqual(corsOf(badHost), { vary: 'Origin' });

  // Answers to an unlisted origin, and to none, carry only Vary.
  const unlisted = await send(url, 'POST', JSON.stringify(modernBody(3, 'tools/list')), {
    ...modernHeaders('tools/list'),
    authorization: BEARER,
    origin: UNLISTED,
  });
  assert.equal(unlisted.status, 200);
  assert.deepEqual(corsOf(unlisted), { vary: 'Origin' });
  const none = await send(url, 'POST', JSON.stringify(modernBody(4, 'tools/list')), { ...modernHeaders('tools/list'), authorization: BEARER });
  assert.deepEqual(corsOf(none), { vary: 'Origin' });

  // maxAgeSec and allowCredentials show on the preflight.
  assert.equal((await preflight(url, PAGE, 'POST')).headers['access-control-max-age'], '30');
});

test('allowCredentials adds Access-Control-Allow-Credentials to preflights and answers; the origin is echoed, never *', async (t) => {
  const gw = await gatewayFromConfig(t, { ...BASE, cors: { origins: [PAGE, 'http://localhost:8080'], allowCredentials: true } });
  const url = gw.urls[0];
  const pre = await preflight(url, 'http://localhost:8080', 'POST', 'content-type');
  assert.equal(pre.status, 204);
  assert.equal(pre.headers['access-control-allow-origin'], 'http://localhost:8080');
  assert.equal(pre.headers['access-control-allow-credentials'], 'true');
  const denied = await send(url, 'POST', JSON.stringify(modernBody(1, 'tools/list')), { ...modernHeaders('tools/list'), origin: PAGE });
  assert.equal(denied.status, 401);
  assert.deepEqual(corsOf(denied), { ...ACTUAL, 'access-control-allow-credentials': 'true' });
});

test('the library fetch handler answers preflights and carries the CORS fields as the listener does', async (t) => {
  const sy = switchyard(t, { cors: { origins: [PAGE] }, upstreams: { demo: { transport: 'embedded', path: '/mcp' } } });
  const pre = await sy.fetch(
    new Request('http://127.0.0.1/mcp', {
      method: 'OPTIONS',
      headers: { origin: PAGE, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, mcp-method, x-other' },
    }),
  );
  assert.equal(pre.status, 204);
  assert.deepEqual(Object.fromEntries(pre.headers), {
    'access-control-allow-origin': PAGE,
    'access-control-allow-methods': 'GET, POST, DELETE',
    'access-control-allow-headers': 'content-type, mcp-method',
    'access-control-max-age': '600',
    'access-control-expose-headers': EXPOSE,
    vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
  });
  const call = await sy.fetch(modernRequest('tools/list', {}, { headers: { origin: PAGE } }));
  assert.equal(call.status, 200);
  assert.equal(call.headers.get('access-control-allow-origin'), PAGE);
  assert.equal(call.headers.get('access-control-expose-headers'), EXPOSE);
  assert.equal(call.headers.get('vary'), 'Origin');
  await call.text();
  const unlisted = await sy.fetch(
    new Request('http://127.0.0.1/mcp', { method: 'OPTIONS', headers: { origin: UNLISTED, 'access-control-request-method': 'POST' } }),
  );
  assert.equal(unlisted.status, 405);
  assert.equal(unlisted.headers.get('access-control-allow-origin'), null);
  // A path it does not serve: its 404 is not the page's to read, preflight or not (found by h-trial11).
  for (const method of ['OPTIONS', 'POST']) {
    const nowhere = await sy.fetch(
      new Request('http://127.0.0.1/nowhere', {
        method,
        headers: { origin: PAGE, 'access-control-request-method': 'POST', 'content-type': 'application/json' },
      }),
    );
    assert.deepEqual([nowhere.status, nowhere.headers.get('access-control-allow-origin')], [404, null]);
    await nowhere.text();
  }
});

test('config: origins must be serialized origins that allowedOrigins lets through; * and out-of-range bounds are refused', () => {
  const issues = (cors: unknown, extra: Record<string, unknown> = {}) => configIssuesOf({ cors, ...extra, upstreams: { a: { transport: 'embedded' } } });
  assert.deepEqual(issues({ origins: ['https://app.example'] }), [
    { path: '/cors/origins/0', message: 'is not allowed by allowedOrigins (add app.example:443 there): CORS never widens the Origin allowlist' },
  ]);
  assert.deepEqual(issues({ origins: ['https://app.example'] }, { allowedOrigins: ['app.example:443'] }), []);
  assert.deepEqual(issues({ origins: ['https://app.example:8443'] }, { allowedOrigins: ['app.example:443'] }), [
    { path: '/cors/origins/0', message: 'is not allowed by allowedOrigins (add app.example:8443 there): CORS never widens the Origin allowlist' },
  ]);
  assert.deepEqual(issues({ origins: ['http://localhost:5173', 'http://[::1]:3000'] }), []);
  assert.deepEqual(issues({ origins: ['HTTP://LocalHost:80'] }), [
    { path: '/cors/origins/0', message: 'must be the origin as browsers send it: give http://localhost' },
  ]);
  // A trailing slash (a URL copied from the address bar) is told the form to give too (found by h-trial11).
  assert.deepEqual(issues({ origins: ['http://localhost:5173/'] }), [
    { path: '/cors/origins/0', message: 'must be the origin as browsers send it: give http://localhost:5173' },
  ]);
  const words = 'must be an origin as browsers send it: http:// or https://, a host and an optional port, no path (e.g. https://app.example)';
  assert.deepEqual(issues({ origins: ['*'] }), [{ path: '/cors/origins/0', message: words }]);
  assert.deepEqual(issues({ origins: ['http://localhost/app'] }), [{ path: '/cors/origins/0', message: words }]);
  assert.deepEqual(issues({ origins: [] }), [{ path: '/cors/origins', message: 'must NOT have fewer than 1 items' }]);
  assert.deepEqual(issues({ origins: [PAGE], maxAgeSec: 86_401 }), [{ path: '/cors/maxAgeSec', message: 'must be <= 86400' }]);
  assert.deepEqual(issues({ origins: [PAGE], maxAgeSec: 86_400 }), []);
  const ports = (n: number) => Array.from({ length: n }, (_, i) => `http://localhost:${3000 + i}`);
  assert.deepEqual(issues({ origins: ports(64) }), []);
  assert.deepEqual(issues({ origins: ports(65) }), [{ path: '/cors/origins', message: 'must NOT have more than 64 items' }]);
  assert.deepEqual(issues({ maxAgeSec: 5 }), [{ path: '/cors/origins', message: 'is required' }]);
  const config = validateConfig({ cors: { origins: [PAGE] }, upstreams: { a: { transport: 'embedded' } } }, 'test', { env: {} });
  assert.deepEqual(config.cors, { origins: [PAGE], maxAgeSec: 600, allowCredentials: false });
  assert.equal(validateConfig({ upstreams: { a: { transport: 'embedded' } } }, 'test', { env: {} }).cors, undefined);
});

test('createCors refuses what the listener Origin check refuses, whatever the loader let through', () => {
  const check = createOriginCheck({ allowedOrigins: ['localhost'], allowedHosts: [] });
  assert.throws(
    () => createCors({ origins: ['https://app.example'], maxAgeSec: 600, allowCredentials: false }, check),
    (err: unknown) =>
      err instanceof SwitchyardError &&
      err.code === 'SWY_ERR_CONFIG_INVALID' &&
      err.message.includes(
        'cors.origins/0: https://app.example is refused by allowedOrigins (Origin app.example not allowed); CORS never widens that allowlist',
      ),
  );
  assert.throws(() => createCors({ origins: ['http://localhost/'], maxAgeSec: 600, allowCredentials: false }, check), /give http:\/\/localhost/);
});

test('--cors-origin sets cors.origins; a URL that is not an origin is a usage error naming the form to give', async (t) => {
  const cli = await startCli(t, ['--cors-origin', PAGE, '--cors-origin', 'http://localhost:8080']);
  const pre = await preflight(cli.url, 'http://localhost:8080', 'POST', 'content-type');
  assert.deepEqual([pre.status, pre.headers['access-control-allow-origin'], pre.headers['access-control-max-age']], [204, 'http://localhost:8080', '600']);
  assert.equal((await preflight(cli.url, PAGE, 'POST')).headers['access-control-allow-origin'], PAGE);

  const bad = spawnSync(process.execPath, [CLI, '--cors-origin', 'http://LocalHost:5173/'], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(bad.status, 2);
  assert.match(
    bad.stderr,
    /--cors-origin <origin>' argument 'http:\/\/LocalHost:5173\/' is invalid\. expected an origin as browsers send it \(e\.g\. https:\/\/app\.example or http:\/\/localhost:5173\): give http:\/\/localhost:5173/,
  );
  const notAllowed = spawnSync(process.execPath, [CLI, '--port', '0', '--cors-origin', 'https://app.example'], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(notAllowed.status, 2, notAllowed.stderr);
  assert.match(notAllowed.stderr, /\/cors\/origins\/0: is not allowed by allowedOrigins \(add app\.example:443 there\)/);
});

test('a reload does not change `cors`: reported as needing a restart, the running origins kept', async (t) => {
  const gw = await gatewayFromConfig(t, { ...BASE, cors: { origins: [PAGE] } });
  const next = validateConfig({ ...BASE, listen: { host: '127.0.0.1', port: 0 }, cors: { origins: ['http://localhost:8080'] } }, 'test', { env: {} });
  const report = await gw.reload(next);
  assert.deepEqual(report.needRestart, ['cors']);
  assert.equal((await preflight(gw.urls[0], PAGE, 'POST')).status, 204);
  assert.equal((await preflight(gw.urls[0], 'http://localhost:8080', 'POST')).status, 405);
});
