// DNS rebinding through Host: on the default loopback bind the real CLI serves only the loopback
// names at the port it bound, on every route (the HTTP+SSE GET included); the authority follows
// RFC 9112 (one Host, absolute-form target in its place, HTTP/1.1 needs one).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCli } from '../helpers/cli.js';
import { openSse, post, send } from '../helpers/http.js';
import { rawRequest } from '../helpers/raw-http.js';

const HOST_403 = { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Forbidden: Host not allowed' } };
const hostInvalid = (why: string) => ({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Bad Request: invalid or repeated Host: ${why}` } });
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'host-test', version: '1.0.0' } },
};
const POST_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

test('acceptance 1: evil.example:PORT gets 403 on /mcp, /sse and /messages; localhost, 127.0.0.1 and [::1] at PORT are served', async (t) => {
  const cli = await startCli(t, ['--legacy-sse']);
  const { origin, port } = cli;
  const evil = `evil.example:${port}`;

  // Refused on every route, whatever the method, before anything else is looked at.
  for (const [method, url, body, headers] of [
    ['POST', `${origin}/mcp`, JSON.stringify(INIT), POST_HEADERS],
    ['GET', `${origin}/mcp`, undefined, { accept: 'text/event-stream' }],
    ['GET', `${origin}/sse`, undefined, { accept: 'text/event-stream' }],
    ['POST', `${origin}/messages?sessionId=x`, JSON.stringify(INIT), { 'content-type': 'application/json' }],
    ['DELETE', `${origin}/mcp`, undefined, { 'mcp-session-id': 'x' }],
    ['GET', `${origin}/elsewhere`, undefined, {}],
  ] as const) {
    const r = await send(url, method, body, { ...headers, host: evil });
    assert.equal(r.status, 403, `${method} ${url}`);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(r.json, HOST_403, `${method} ${url}`);
  }

  for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
    const init = await post(`${origin}/mcp`, INIT, { ...POST_HEADERS, host });
    assert.equal(init.status, 200, host);
    assert.equal((init.json as { result: { protocolVersion: string } }).result.protocolVersion, '2025-06-18');

    const sse = await openSse(`${origin}/sse`, 'GET', { accept: 'text/event-stream', host });
    t.after(() => sse.close());
    assert.equal(sse.status, 200, host);
    const endpoint = await sse.next();
    assert.equal(endpoint.event, 'endpoint');
    assert.match(endpoint.data, /^messages\?sessionId=[0-9a-f-]{36}$/);
    const accepted = await send(new URL(endpoint.data, `${origin}/sse`).href, 'POST', JSON.stringify(INIT), { 'content-type': 'application/json', host });
    assert.equal(accepted.status, 202, host);
    const reply = JSON.parse((await sse.next()).data) as { id: number; result: { protocolVersion: string } };
    assert.deepEqual([reply.id, reply.result.protocolVersion], [1, '2025-06-18']);
    sse.close();
  }
  assert.equal(await cli.stop(), 0);
});

test('the port is pinned to the bound one; case and one trailing dot do not get around the list', async (t) => {
  const cli = await startCli(t, []);
  const { origin, port } = cli;
  const status = async (host: string) => (await post(`${origin}/mcp`, INIT, { ...POST_HEADERS, host })).status;
  assert.equal(await status(`localhost:${port === 65535 ? port - 1 : port + 1}`), 403);
  assert.equal(await status('localhost'), 403); // no port: port 80
  assert.equal(await status(`localhost.evil.example:${port}`), 403);
  assert.equal(await status(`127.0.0.2:${port}`), 403);
  assert.equal(await status(`LOCALHOST.:${port}`), 200);
  assert.equal(await status(`[0:0:0:0:0:0:0:1]:${port}`), 200);
  assert.equal(await status(`127.0.0.1.:${port}`), 200);
});

test('RFC 9112: two Host lines, no Host on HTTP/1.1, userinfo, a bare IPv6 address are 400; an absolute-form target is checked in place of Host', async (t) => {
  const cli = await startCli(t, ['--legacy-sse']);
  const { port } = cli;
  const good = `localhost:${port}`;
  const twoHosts = await rawRequest(port, `GET /sse HTTP/1.1\r\nHost: ${good}\r\nHost: evil.example:${port}\r\nAccept: text/event-stream`);
  assert.deepEqual([twoHosts.status, twoHosts.json], [400, hostInvalid('more than one Host')]);
  const none = await rawRequest(port, 'GET /sse HTTP/1.1\r\nAccept: text/event-stream');
  assert.deepEqual([none.status, none.headers['content-type'], none.json], [400, 'application/json', hostInvalid('Host missing')]);
  for (const bad of [`user@${good}`, `::1:${port}`, `[::1]x:${port}`, `localhost:${port}0`, 'local host']) {
    const r = await rawRequest(port, `GET /sse HTTP/1.1\r\nHost: ${bad}\r\nAccept: text/event-stream`);
    assert.deepEqual([r.status, r.json], [400, hostInvalid('Host invalid')], bad);
  }

  // The absolute-form target's authority decides (RFC 9112 §3.2.2): evil there is refused whatever Host says ...
  const abs = await rawRequest(port, `GET http://evil.example:${port}/sse HTTP/1.1\r\nHost: ${good}\r\nAccept: text/event-stream`);
  assert.deepEqual([abs.status, abs.json], [403, HOST_403]);
  const absBad = await rawRequest(port, `GET http://a@b/sse HTTP/1.1\r\nHost: ${good}\r\nAccept: text/event-stream`);
  assert.deepEqual([absBad.status, absBad.json], [400, hostInvalid('request target authority invalid')]);
  // ... and a listed one is served, with the path and query taken from the target.
  const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' });
  const ok = await rawRequest(
    port,
    `POST http://localhost:${port}/messages?sessionId=nope HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json`,
    body,
  );
  assert.deepEqual([ok.status, ok.json], [404, { jsonrpc: '2.0', id: 7, error: { code: -32001, message: 'Session not found' } }]);
});

test('--allowed-host replaces the loopback default', async (t) => {
  const cli = await startCli(t, ['--allowed-host', 'mcp.example.com']);
  const { origin, port } = cli;
  assert.equal((await post(`${origin}/mcp`, INIT, { ...POST_HEADERS, host: `localhost:${port}` })).status, 403);
  assert.equal((await post(`${origin}/mcp`, INIT, { ...POST_HEADERS, host: 'mcp.example.com' })).status, 200);
  assert.equal((await post(`${origin}/mcp`, INIT, { ...POST_HEADERS, host: 'mcp.example.com:8443' })).status, 200);
});
